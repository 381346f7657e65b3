#pragma once
/* libmosquitto, loaded when [mqtt] is configured rather than linked (docs/dependencies.md):
   linked, it brought libssl and libcrypto into every strapd, about 1.7 MB of resident memory
   (libcrypto's relocated data alone is 0.4 MB of private pages) that a daemon without a broker
   never uses. The types and constants are mosquitto.h's; the functions below are the ones
   strapd calls, each forwarding to the library's own. Calling any of them before
   strap_mosquitto_load succeeded is a programming error. */
#include <stdbool.h>
#include <stddef.h>
#include <mosquitto.h>

/* dlopen("libmosquitto.so.1") and every symbol below, once per process (thread-safe).
   0 on success; -1 with the reason (dlerror's text) in `error`. */
int strap_mosquitto_load(char *error, size_t size);

int strap_mosquitto_lib_init(void);
struct mosquitto *strap_mosquitto_new(const char *id, bool clean_session, void *obj);
void strap_mosquitto_destroy(struct mosquitto *mosq);
void strap_mosquitto_user_data_set(struct mosquitto *mosq, void *obj);
int strap_mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value);
int strap_mosquitto_max_inflight_messages_set(struct mosquitto *mosq, unsigned int max_inflight_messages);
int strap_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
int strap_mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                            const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata));
int strap_mosquitto_tls_opts_set(struct mosquitto *mosq, int cert_reqs, const char *tls_version, const char *ciphers);
int strap_mosquitto_tls_insecure_set(struct mosquitto *mosq, bool value);
int strap_mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int strap_mosquitto_reconnect_delay_set(struct mosquitto *mosq, unsigned int delay, unsigned int delay_max, bool exponential);
void strap_mosquitto_connect_v5_callback_set(struct mosquitto *mosq,
                                             void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *));
/* The Receive Maximum of a CONNACK's properties: how many QoS 1 and 2 publishes the broker
   takes unacknowledged (65535 when it says nothing). */
int strap_mosquitto_receive_maximum(const mosquitto_property *props);
void strap_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int));
void strap_mosquitto_publish_v5_callback_set(struct mosquitto *mosq,
                                             void (*on_publish)(struct mosquitto *, void *, int, int, const mosquitto_property *props));
void strap_mosquitto_log_callback_set(struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *));
int strap_mosquitto_connect(struct mosquitto *mosq, const char *host, int port, int keepalive);
int strap_mosquitto_socket(struct mosquitto *mosq);
int strap_mosquitto_loop_read(struct mosquitto *mosq, int max_packets);
int strap_mosquitto_loop_write(struct mosquitto *mosq, int max_packets);
int strap_mosquitto_loop_misc(struct mosquitto *mosq);
bool strap_mosquitto_want_write(struct mosquitto *mosq);
int strap_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int strap_mosquitto_disconnect(struct mosquitto *mosq);
const char *strap_mosquitto_strerror(int mosq_errno);
const char *strap_mosquitto_reason_string(int reason_code);
const char *strap_mosquitto_connack_string(int connack_code);
