/// `[mqtt]` of strapd.conf(5): where and how the publisher (docs/mqtt.md) delivers. Off
/// unless `host` or `unix_socket` names a broker.
extension Configuration {
    public struct MQTT: Sendable, Equatable {
        public var host: String?
        /// 0: 1883, or 8883 with TLS.
        public var port = 0
        public var unixSocket: String?
        /// TLS is on when a CA file is given or `tls = yes` (then the system's CAs are used).
        public var tls = false
        public var caFile: String?
        public var certFile: String?
        public var keyFile: String?
        /// Off only by an explicit `tls_verify = no`; a failed verification is an error.
        public var tlsVerify = true
        public var username: String?
        /// The password lives in its own file, readable by the service only; never here.
        public var passwordFile: String?
        /// nil: `strapd-<hostname>`.
        public var clientID: String?
        /// nil: `strapd/<hostname>`.
        public var topicPrefix: String?
        public var qos = 1
        /// Sample types published; empty: all of them.
        public var types: [String] = []
        public var protocolVersion = MQTTProtocolVersion.v5
        public var keepAlive = Duration.seconds(30)
        public var homeAssistant = true
        public var homeAssistantPrefix = "homeassistant"
        /// Messages published and not yet acknowledged, at most.
        public var maxInflight = 1024
        /// Reconnect delays grow from the first to the second (each with jitter).
        public var reconnectMin = Duration.milliseconds(500)
        public var reconnectMax = Duration.seconds(60)

        public init() {}

        public var enabled: Bool { host != nil || unixSocket != nil }
        public var usesTLS: Bool { tls || caFile != nil || certFile != nil }
        public var effectivePort: Int { port != 0 ? port : usesTLS ? 8883 : 1883 }

        /// What the single keys cannot say: contradictions between them.
        public func problems() -> [String] {
            var out: [String] = []
            if host != nil && unixSocket != nil { out.append("mqtt.host and mqtt.unix_socket are both set; name one broker") }
            if (certFile == nil) != (keyFile == nil) { out.append("mqtt.cert_file and mqtt.key_file go together") }
            if passwordFile != nil && username == nil { out.append("mqtt.password_file needs mqtt.username") }
            if unixSocket != nil && usesTLS { out.append("TLS over mqtt.unix_socket is not supported; use host and port") }
            if reconnectMin > reconnectMax { out.append("mqtt.reconnect_min is larger than mqtt.reconnect_max") }
            if !enabled && (username != nil || caFile != nil || passwordFile != nil) {
                out.append("[mqtt] has settings but no broker: set mqtt.host or mqtt.unix_socket")
            }
            return out
        }
    }
}

public enum MQTTProtocolVersion: String, Sendable, CaseIterable {
    case v311 = "3.1.1"
    case v5 = "5"
}

extension ConfigSchema {
    static let mqttKeys: [ConfigKey] = [
        mqttKey("host", { c, v throws(ConfigValue.Invalid) in
            guard !v.isEmpty else { c.mqtt.host = nil; return }
            guard v.utf8.count <= 253, !v.contains(where: { $0 == " " || $0 == "/" }) else {
                throw ConfigValue.Invalid("expected a host name or IP address")
            }
            c.mqtt.host = v
        }, { $0.mqtt.host ?? "" }),
        mqttKey("port", { c, v throws(ConfigValue.Invalid) in c.mqtt.port = try ConfigValue.integer(v, in: 0...65535) },
                { String($0.mqtt.port) }),
        mqttKey("unix_socket", { c, v throws(ConfigValue.Invalid) in c.mqtt.unixSocket = v.isEmpty ? nil : try ConfigValue.absolutePath(v) },
                { $0.mqtt.unixSocket ?? "" }),
        mqttKey("tls", { c, v throws(ConfigValue.Invalid) in c.mqtt.tls = try ConfigValue.bool(v) }, { $0.mqtt.tls ? "yes" : "no" }),
        mqttKey("ca_file", { c, v throws(ConfigValue.Invalid) in c.mqtt.caFile = v.isEmpty ? nil : try ConfigValue.absolutePath(v) },
                { $0.mqtt.caFile ?? "" }),
        mqttKey("cert_file", { c, v throws(ConfigValue.Invalid) in c.mqtt.certFile = v.isEmpty ? nil : try ConfigValue.absolutePath(v) },
                { $0.mqtt.certFile ?? "" }),
        mqttKey("key_file", { c, v throws(ConfigValue.Invalid) in c.mqtt.keyFile = v.isEmpty ? nil : try ConfigValue.absolutePath(v) },
                { $0.mqtt.keyFile ?? "" }),
        mqttKey("tls_verify", { c, v throws(ConfigValue.Invalid) in c.mqtt.tlsVerify = try ConfigValue.bool(v) },
                { $0.mqtt.tlsVerify ? "yes" : "no" }),
        mqttKey("username", { c, v throws(ConfigValue.Invalid) in
            guard v.utf8.count <= 65535 else { throw ConfigValue.Invalid("too long") }
            c.mqtt.username = v.isEmpty ? nil : v
        }, { $0.mqtt.username ?? "" }),
        mqttKey("password_file", { c, v throws(ConfigValue.Invalid) in
            // A bare name is a systemd credential (LoadCredential=), found in $CREDENTIALS_DIRECTORY.
            guard !v.isEmpty else { c.mqtt.passwordFile = nil; return }
            c.mqtt.passwordFile = v.hasPrefix("/") ? v : try credentialName(v)
        }, { $0.mqtt.passwordFile ?? "" }),
        mqttKey("client_id", { c, v throws(ConfigValue.Invalid) in
            guard v.utf8.count <= 128 else { throw ConfigValue.Invalid("at most 128 bytes") }
            c.mqtt.clientID = v.isEmpty ? nil : v
        }, { $0.mqtt.clientID ?? "" }),
        mqttKey("topic_prefix", { c, v throws(ConfigValue.Invalid) in
            if v.isEmpty { c.mqtt.topicPrefix = nil; return }
            guard !v.contains("+"), !v.contains("#"), !v.hasPrefix("/"), !v.hasSuffix("/"), !v.hasPrefix("$"), !v.contains("//") else {
                throw ConfigValue.Invalid("a topic prefix has no wildcards (+ #), no leading $, no empty levels and no leading or trailing /")
            }
            c.mqtt.topicPrefix = v
        }, { $0.mqtt.topicPrefix ?? "" }),
        mqttKey("qos", { c, v throws(ConfigValue.Invalid) in c.mqtt.qos = try ConfigValue.integer(v, in: 0...2) }, { String($0.mqtt.qos) }),
        mqttKey("types", { c, v throws(ConfigValue.Invalid) in c.mqtt.types = try ConfigValue.sampleTypes(v) },
                { $0.mqtt.types.joined(separator: ", ") }),
        mqttKey("protocol", { c, v throws(ConfigValue.Invalid) in c.mqtt.protocolVersion = try ConfigValue.choice(v, MQTTProtocolVersion.self) },
                { $0.mqtt.protocolVersion.rawValue }),
        mqttKey("keepalive", { c, v throws(ConfigValue.Invalid) in
            let d = try ConfigValue.duration(v)
            guard d >= .seconds(5), d <= .seconds(65535) else { throw ConfigValue.Invalid("must be between 5s and 65535s") }
            c.mqtt.keepAlive = d
        }, { render($0.mqtt.keepAlive) }),
        mqttKey("homeassistant", { c, v throws(ConfigValue.Invalid) in c.mqtt.homeAssistant = try ConfigValue.bool(v) },
                { $0.mqtt.homeAssistant ? "yes" : "no" }),
        mqttKey("homeassistant_prefix", { c, v throws(ConfigValue.Invalid) in
            guard !v.isEmpty, !v.contains("+"), !v.contains("#"), !v.hasSuffix("/") else {
                throw ConfigValue.Invalid("expected a topic prefix without wildcards")
            }
            c.mqtt.homeAssistantPrefix = v
        }, { $0.mqtt.homeAssistantPrefix }),
        mqttKey("reconnect_min", { c, v throws(ConfigValue.Invalid) in c.mqtt.reconnectMin = try reconnectDelay(v) },
                { render($0.mqtt.reconnectMin) }),
        mqttKey("reconnect_max", { c, v throws(ConfigValue.Invalid) in c.mqtt.reconnectMax = try reconnectDelay(v) },
                { render($0.mqtt.reconnectMax) }),
        mqttKey("max_inflight", { c, v throws(ConfigValue.Invalid) in c.mqtt.maxInflight = try ConfigValue.integer(v, in: 1...65535) },
                { String($0.mqtt.maxInflight) }),
    ]

    private static func mqttKey(_ name: String, _ apply: @escaping @Sendable (inout Configuration, String) throws(ConfigValue.Invalid) -> Void,
                                _ render: @escaping @Sendable (Configuration) -> String) -> ConfigKey {
        ConfigKey(section: "mqtt", name: name, reloadable: false, apply: apply, render: render)
    }

    /// `mqtt.password` is not a key: said so, with where the password goes instead.
    static let passwordRefusal = ConfigValue.Invalid(
        "a password is never written in strapd.conf: put it in a file readable by the service only and name it with password_file")

    private static func reconnectDelay(_ v: String) throws(ConfigValue.Invalid) -> Duration {
        let d = try ConfigValue.duration(v)
        guard d >= .milliseconds(100), d <= .seconds(3600) else { throw ConfigValue.Invalid("must be between 100ms and 1h") }
        return d
    }

    private static func credentialName(_ v: String) throws(ConfigValue.Invalid) -> String {
        guard !v.contains("/"), v != ".", v != ".." else {
            throw ConfigValue.Invalid("expected an absolute path or a systemd credential name")
        }
        return v
    }
}
