#pragma once
/* A system-library target's header: SwiftPM does not rebuild StrapWeb when it changes (seen
   with Swift 6.3.1). After an edit here, touch a file of Sources/StrapWeb before building. */
/* Import Swift's Glibc first so libc declarations stay owned by SwiftGlibc
   (docs/swift-on-linux.md#glibc-declarations-vanish-module-ownership). */
#if __has_feature(modules)
#pragma clang module import SwiftGlibc
#endif
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <microhttpd.h>

/* libmicrohttpd's error log, to stderr like the rest of strapd-web's messages, less one line:
   "Failed to send the chunked response body …" comes each time a Server-Sent Events client
   leaves, which is how such a stream ends, not an error. A C function because the callback
   takes a va_list, which Swift cannot format. */
static void strapweb_log(void *cls, const char *format, va_list arguments) {
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, format, arguments);
    static const char departed[] = "Failed to send the chunked response body";
    if (strncmp(line, departed, sizeof departed - 1) == 0) return;
    fprintf(stderr, "strapd-web: libmicrohttpd: %s%s", line, line[0] && line[strlen(line) - 1] == '\n' ? "" : "\n");
}

/* MHD_start_daemon is variadic, which Swift cannot call: the options strapd-web uses, fixed.
   The listening socket is always ours (bound by strapd-web or passed by systemd), so
   libmicrohttpd never binds. One thread per connection: a Server-Sent Events response may
   then wait for its next event in its content reader instead of suspending the connection.
   With a PEM certificate chain and private key (both, in memory) every connection is TLS
   (GnuTLS, inside libmicrohttpd), which checks while it starts that the key is the
   certificate's; a NULL return is that, or anything else it refuses. Without them, plain HTTP. */
static inline struct MHD_Daemon *strapweb_start(int listen_fd, unsigned int connection_limit,
                                               unsigned int idle_timeout_seconds,
                                               MHD_AccessHandlerCallback handler, void *handler_cls,
                                               MHD_RequestCompletedCallback completed, void *completed_cls,
                                               const char *certificate_pem, const char *key_pem) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    /* The TLS options as an option array: empty (its END only) for plain HTTP. */
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)certificate_pem},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    int use_tls = certificate_pem != NULL && key_pem != NULL;
    if (use_tls) flags |= MHD_USE_TLS;
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            /* First, or libmicrohttpd logs the options before it with its own. */
                            MHD_OPTION_EXTERNAL_LOGGER, strapweb_log, (void *)NULL,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_ARRAY, use_tls ? tls : tls + 2,
                            MHD_OPTION_END);
}

/* Whether this libmicrohttpd was built with TLS (Debian's links GnuTLS). */
static inline int strapweb_has_tls(void) {
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

/* Macros with casts, which Swift does not import. */
static const ssize_t strapweb_reader_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t strapweb_reader_end_with_error = MHD_CONTENT_READER_END_WITH_ERROR;
static const uint64_t strapweb_size_unknown = MHD_SIZE_UNKNOWN;

/* microhttpd.h marks these enums closed (enum_extensibility), so Swift imports them as
   Swift enums whose case names depend on the importer's prefix stripping; constants with
   names of our own keep the Swift side independent of that. */
static const enum MHD_Result strapweb_yes = MHD_YES;
static const enum MHD_Result strapweb_no = MHD_NO;
static const enum MHD_ValueKind strapweb_header_kind = MHD_HEADER_KIND;
static const enum MHD_ValueKind strapweb_cookie_kind = MHD_COOKIE_KIND;
static const enum MHD_ValueKind strapweb_query_kind = MHD_GET_ARGUMENT_KIND;
static const enum MHD_ResponseMemoryMode strapweb_must_copy = MHD_RESPMEM_MUST_COPY;

/* The peer's address of a connection (for the access log), or NULL. */
static inline const struct sockaddr *strapweb_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}
