import CMosquittoLoader
import Glibc
import Synchronization

/// One libmosquitto client (one connection attempt). The publisher makes a new one for every
/// attempt and closes it for good when the connection ends: a client's own retry queue and
/// reconnect loop would resend what the publisher resends itself from its cursor, so neither
/// is used. It has no network thread: `MosquittoConnection` drives its socket from the
/// publisher's queue, so a publish is written by the thread that makes it and an
/// acknowledgement is read by the thread that counts it.
final class MosquittoClient: @unchecked Sendable {
    struct Events: Sendable {
        /// `receiveMaximum`: the CONNACK's Receive Maximum (65535 when it had none).
        var connected: @Sendable (_ code: Int32, _ receiveMaximum: Int) -> Void
        var disconnected: @Sendable (_ code: Int32) -> Void
        var acknowledged: @Sendable (_ mid: Int32, _ reason: Int32) -> Void
        var logged: @Sendable (_ level: Int32, _ message: String) -> Void
    }

    struct Options: Sendable {
        var clientID: String
        var protocolVersion: Int32
        var username: String?
        var password: String?
        var caFile: String?
        var certFile: String?
        var keyFile: String?
        var tls: Bool
        var tlsVerify: Bool
        var maxInflight: Int
        var will: (topic: String, payload: String)?
    }

    private static let initialized: Bool = { strap_mosquitto_lib_init(); return true }()

    private let handle: OpaquePointer
    private let events: Events
    private let closed = Atomic<Bool>(false)

    init(_ o: Options, events: Events) throws(MQTTError) {
        try MosquittoLibrary.load()
        _ = Self.initialized
        self.events = events
        // clean_session: the cursor, not the broker, remembers what was delivered.
        guard let h = strap_mosquitto_new(o.clientID, true, nil) else { throw .system("mosquitto_new", String(cString: strerror(errno))) }
        handle = h
        strap_mosquitto_user_data_set(h, Unmanaged.passUnretained(self).toOpaque())
        do throws(MQTTError) {
            // libmosquitto answers an unreadable file with "Invalid function arguments": the
            // file and errno are named here instead (docs/mqtt.md#errors).
            for (key, path) in [("ca_file", o.caFile), ("cert_file", o.certFile), ("key_file", o.keyFile)] where o.tls {
                if let path { try Self.checkReadable(key, path) }
            }
            try check("protocol", strap_mosquitto_int_option(h, MOSQ_OPT_PROTOCOL_VERSION, o.protocolVersion))
            // Our window bounds what is in flight; libmosquitto must not queue behind it.
            try check("max_inflight", strap_mosquitto_max_inflight_messages_set(h, UInt32(o.maxInflight)))
            if o.protocolVersion == MQTT_PROTOCOL_V5 { _ = strap_mosquitto_int_option(h, MOSQ_OPT_SEND_MAXIMUM, Int32(min(o.maxInflight, 65535))) }
            if let u = o.username { try check("username", strap_mosquitto_username_pw_set(h, u, o.password)) }
            if o.tls {
                if o.caFile == nil { try check("tls os certs", strap_mosquitto_int_option(h, MOSQ_OPT_TLS_USE_OS_CERTS, 1)) }
                try check("tls", strap_mosquitto_tls_set(h, o.caFile, nil, o.certFile, o.keyFile, nil))
                if !o.tlsVerify {
                    try check("tls_opts", strap_mosquitto_tls_opts_set(h, 0, nil, nil))
                    try check("tls_insecure", strap_mosquitto_tls_insecure_set(h, true))
                }
            }
            if let w = o.will {
                try check("will", strap_mosquitto_will_set(h, w.topic, Int32(w.payload.utf8.count), w.payload, 1, true))
            }
            // A client left alone must not reconnect on its own before `close` ends it.
            _ = strap_mosquitto_reconnect_delay_set(h, 3600, 3600, false)
        } catch {
            // Every stored property is set, so `deinit` runs after this throw: `close` frees
            // the handle once and marks it closed (freeing it here as well was a double free).
            close()
            throw error
        }
        strap_mosquitto_connect_v5_callback_set(h) { _, obj, rc, _, properties in
            MosquittoClient.client(obj)?.events.connected(rc, Int(strap_mosquitto_receive_maximum(properties)))
        }
        strap_mosquitto_disconnect_callback_set(h) { _, obj, rc in MosquittoClient.client(obj)?.events.disconnected(rc) }
        strap_mosquitto_publish_v5_callback_set(h) { _, obj, mid, reason, _ in MosquittoClient.client(obj)?.events.acknowledged(mid, reason) }
        strap_mosquitto_log_callback_set(h) { _, obj, level, text in
            guard level & Int32(MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text else { return }
            MosquittoClient.client(obj)?.events.logged(level, String(cString: text))
        }
    }

    private static func client(_ obj: UnsafeMutableRawPointer?) -> MosquittoClient? {
        guard let obj else { return nil }
        let c = Unmanaged<MosquittoClient>.fromOpaque(obj).takeUnretainedValue()
        return c.closed.load(ordering: .acquiring) ? nil : c
    }

    /// Blocking: name lookup and TCP (or unix socket, `port` 0); the TLS handshake and the
    /// broker's CONNACK follow as the socket is serviced (`loopRead`, `loopWrite`).
    func connect(host: String, port: Int, keepAlive: Int) throws(MQTTError) {
        try check("connect", strap_mosquitto_connect(handle, host, Int32(port), Int32(keepAlive)))
    }

    var socket: Int32 { strap_mosquitto_socket(handle) }
    /// Reads what arrived (callbacks run inside); `MOSQ_ERR_*`.
    func loopRead() -> Int32 { strap_mosquitto_loop_read(handle, 64) }
    func loopWrite() -> Int32 { strap_mosquitto_loop_write(handle, 64) }
    /// Keepalive: PINGREQ when due, and the end of a connection whose PINGRESP never came.
    func loopMisc() -> Int32 { strap_mosquitto_loop_misc(handle) }
    var wantsWrite: Bool { strap_mosquitto_want_write(handle) }

    /// The message id, or why nothing was queued.
    func publish(topic: String, payload: UnsafeRawBufferPointer, qos: Int, retain: Bool) -> Result<Int32, MQTTError> {
        var mid: Int32 = 0
        let rc = strap_mosquitto_publish(handle, &mid, topic, Int32(payload.count), payload.baseAddress, Int32(qos), retain)
        return rc == MOSQ_ERR_SUCCESS.rawValue ? .success(mid) : .failure(MQTTError("publish", rc))
    }

    /// libmosquitto formats every log line (one per packet) whenever a log callback is set:
    /// the callback is for connecting (TLS failures are reported only there) and is dropped
    /// once the broker accepted the connection.
    func stopLogging() { strap_mosquitto_log_callback_set(handle, nil) }

    /// Sends DISCONNECT (the broker then drops the Last Will) when still connected.
    func disconnect() { _ = strap_mosquitto_disconnect(handle) }

    /// Frees the client and closes its socket; no callback runs after this returns. Only
    /// once nothing watches the socket any more (`MosquittoConnection.close`).
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        strap_mosquitto_destroy(handle)
    }

    deinit { close() }

    private func check(_ call: String, _ rc: Int32) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(call, rc) }
    }

    private static func checkReadable(_ key: String, _ path: String) throws(MQTTError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .system("mqtt.\(key) \(path)", String(cString: strerror(errno))) }
        Glibc.close(fd)
    }
}

/// libmosquitto, loaded on first use rather than linked (CMosquittoLoader: linked, its OpenSSL
/// cost every strapd about 1.7 MB of resident memory whether or not a broker was configured).
public enum MosquittoLibrary {
    /// Loads it once per process; later calls return the first result.
    public static func load() throws(MQTTError) {
        var reason = [CChar](repeating: 0, count: 512)
        guard strap_mosquitto_load(&reason, reason.count) == 0 else {
            throw .libraryMissing(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
}

/// Why the broker is not reached (docs/mqtt.md#errors): shown in the log and in `status`.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A libmosquitto call failed (`MOSQ_ERR_*`).
    case library(String, Int32)
    /// A system call under libmosquitto failed (connection refused, no such host, ...).
    case system(String, String)
    /// The broker refused the connection (CONNACK return or MQTT 5 reason code).
    case refused(Int32)
    /// The connection ended (`code` 0: we asked for it).
    case lost(Int32)
    /// The broker answered a publish with an MQTT 5 failure reason (not authorised: an ACL).
    case rejected(topic: String, reason: Int32)
    case configuration(String)
    /// libmosquitto could not be loaded (dlopen's reason).
    case libraryMissing(String)

    /// errno is read here, right after the failing call.
    init(_ call: String, _ rc: Int32) {
        self = rc == MOSQ_ERR_ERRNO.rawValue ? .system(call, String(cString: strerror(errno))) : .library(call, rc)
    }

    public var description: String {
        switch self {
        case let .library(call, rc):
            return "\(call): \(String(cString: strap_mosquitto_strerror(rc)))"
        case let .system(call, message):
            return "\(call): \(message)"
        case let .refused(rc):
            return "broker refused the connection: \(rc >= 128 ? String(cString: strap_mosquitto_reason_string(rc)) : String(cString: strap_mosquitto_connack_string(rc)))"
        case let .lost(rc):
            return rc == 0 ? "disconnected" : "connection lost: \(String(cString: strap_mosquitto_strerror(rc)))"
        case let .rejected(topic, reason):
            return "broker rejected a publish to \(topic): \(String(cString: strap_mosquitto_reason_string(reason)))"
        case let .configuration(text):
            return text
        case let .libraryMissing(reason):
            return "[mqtt] needs libmosquitto (Debian: apt install libmosquitto1): \(reason)"
        }
    }
}
