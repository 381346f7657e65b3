#include "mosquitto_loader.h"
#include <mqtt_protocol.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* Every function strapd calls: one pointer each, typed from mosquitto.h itself. */
#define STRAP_MOSQUITTO_FUNCTIONS(X) \
    X(lib_init) X(new) X(destroy) X(user_data_set) X(int_option) X(max_inflight_messages_set) \
    X(username_pw_set) X(tls_set) X(tls_opts_set) X(tls_insecure_set) X(will_set) X(reconnect_delay_set) \
    X(connect_v5_callback_set) X(disconnect_callback_set) X(publish_v5_callback_set) X(log_callback_set) \
    X(connect) X(socket) X(loop_read) X(loop_write) X(loop_misc) X(want_write) X(publish) X(disconnect) \
    X(strerror) X(reason_string) X(connack_string) X(property_read_int16)

static struct {
#define STRAP_POINTER(name) __typeof__(mosquitto_##name) *name;
    STRAP_MOSQUITTO_FUNCTIONS(STRAP_POINTER)
#undef STRAP_POINTER
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[256];

static void load(void) {
    /* libmosquitto1's soname; RTLD_LOCAL keeps its symbols (and OpenSSL's) out of ours. */
    void *handle = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define STRAP_RESOLVE(name) \
    if (!(api.name = (__typeof__(mosquitto_##name) *)dlsym(handle, "mosquitto_" #name))) { \
        snprintf(failure, sizeof failure, "libmosquitto.so.1 has no mosquitto_" #name); \
        return; \
    }
    STRAP_MOSQUITTO_FUNCTIONS(STRAP_RESOLVE)
#undef STRAP_RESOLVE
}

int strap_mosquitto_load(char *error, size_t size) {
    pthread_once(&once, load);
    if (!failure[0]) return 0;
    if (error && size) snprintf(error, size, "%s", failure);
    return -1;
}

int strap_mosquitto_lib_init(void) { return api.lib_init(); }
struct mosquitto *strap_mosquitto_new(const char *id, bool clean_session, void *obj) { return api.new(id, clean_session, obj); }
void strap_mosquitto_destroy(struct mosquitto *mosq) { api.destroy(mosq); }
void strap_mosquitto_user_data_set(struct mosquitto *mosq, void *obj) { api.user_data_set(mosq, obj); }
int strap_mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) { return api.int_option(mosq, option, value); }
int strap_mosquitto_max_inflight_messages_set(struct mosquitto *mosq, unsigned int n) { return api.max_inflight_messages_set(mosq, n); }
int strap_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    return api.username_pw_set(mosq, username, password);
}
int strap_mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                            const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return api.tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback);
}
int strap_mosquitto_tls_opts_set(struct mosquitto *mosq, int cert_reqs, const char *tls_version, const char *ciphers) {
    return api.tls_opts_set(mosq, cert_reqs, tls_version, ciphers);
}
int strap_mosquitto_tls_insecure_set(struct mosquitto *mosq, bool value) { return api.tls_insecure_set(mosq, value); }
int strap_mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain) {
    return api.will_set(mosq, topic, payloadlen, payload, qos, retain);
}
int strap_mosquitto_reconnect_delay_set(struct mosquitto *mosq, unsigned int delay, unsigned int delay_max, bool exponential) {
    return api.reconnect_delay_set(mosq, delay, delay_max, exponential);
}
void strap_mosquitto_connect_v5_callback_set(struct mosquitto *mosq,
                                             void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *)) {
    api.connect_v5_callback_set(mosq, on_connect);
}
int strap_mosquitto_receive_maximum(const mosquitto_property *props) {
    uint16_t value = 0;
    /* Absent: the broker takes 65535 at once (MQTT 5, 3.2.2.3.3); MQTT 3.1.1 has no such limit. */
    if (!props || !api.property_read_int16(props, MQTT_PROP_RECEIVE_MAXIMUM, &value, false)) return 65535;
    return value;
}
void strap_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int)) {
    api.disconnect_callback_set(mosq, on_disconnect);
}
void strap_mosquitto_publish_v5_callback_set(struct mosquitto *mosq,
                                             void (*on_publish)(struct mosquitto *, void *, int, int, const mosquitto_property *props)) {
    api.publish_v5_callback_set(mosq, on_publish);
}
void strap_mosquitto_log_callback_set(struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *)) {
    api.log_callback_set(mosq, on_log);
}
int strap_mosquitto_connect(struct mosquitto *mosq, const char *host, int port, int keepalive) {
    return api.connect(mosq, host, port, keepalive);
}
int strap_mosquitto_socket(struct mosquitto *mosq) { return api.socket(mosq); }
int strap_mosquitto_loop_read(struct mosquitto *mosq, int max_packets) { return api.loop_read(mosq, max_packets); }
int strap_mosquitto_loop_write(struct mosquitto *mosq, int max_packets) { return api.loop_write(mosq, max_packets); }
int strap_mosquitto_loop_misc(struct mosquitto *mosq) { return api.loop_misc(mosq); }
bool strap_mosquitto_want_write(struct mosquitto *mosq) { return api.want_write(mosq); }
int strap_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain) {
    return api.publish(mosq, mid, topic, payloadlen, payload, qos, retain);
}
int strap_mosquitto_disconnect(struct mosquitto *mosq) { return api.disconnect(mosq); }
const char *strap_mosquitto_strerror(int mosq_errno) { return api.strerror(mosq_errno); }
const char *strap_mosquitto_reason_string(int reason_code) { return api.reason_string(reason_code); }
const char *strap_mosquitto_connack_string(int connack_code) { return api.connack_string(connack_code); }
