import Glibc
import StrapConfig
import StrapModel
import StrapMQTTProtocol

/// What the publisher needs, resolved from `[mqtt]` once at start: defaults filled in from
/// the hostname, the password read from its file (after its mode was checked).
public struct MQTTSettings: Sendable {
    public enum Broker: Sendable, Equatable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        case unix(path: String)

        public var description: String {
            switch self {
            case let .tcp(host, port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            case let .unix(path): "unix:\(path)"
            }
        }
    }

    public var broker: Broker
    public var topics: MQTTTopics
    public var clientID: String
    public var qos: Int
    /// nil: every sample type.
    public var types: Set<QuantityType>?
    public var protocolVersion: MQTTProtocolVersion
    public var keepAlive: Int
    public var maxInflight: Int
    public var backoff: ReconnectBackoff
    public var username: String?
    public var password: String?
    public var tls: Bool
    public var tlsVerify: Bool
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    public var homeAssistant: Bool
    public var homeAssistantPrefix: String
    public var hostname: String
    /// Where the delivery cursor is kept (`<state_dir>/mqtt-cursor`).
    public var cursorPath: String

    public init(broker: Broker, topics: MQTTTopics, clientID: String, cursorPath: String, hostname: String) {
        self.broker = broker
        self.topics = topics
        self.clientID = clientID
        self.cursorPath = cursorPath
        self.hostname = hostname
        qos = 1
        protocolVersion = .v5
        keepAlive = 30
        maxInflight = 1024
        backoff = ReconnectBackoff()
        tls = false
        tlsVerify = true
        homeAssistant = true
        homeAssistantPrefix = "homeassistant"
    }

    /// nil when `[mqtt]` names no broker. Throws what keeps the publisher from starting:
    /// contradictory keys, a password file others may read, one that cannot be read.
    public static func resolve(_ c: Configuration.MQTT, stateDirectory: String, hostname: String,
                               environment: [String: String]) throws(MQTTError) -> MQTTSettings? {
        guard c.enabled else { return nil }
        if let problem = c.problems().first { throw .configuration(problem) }
        let broker: Broker = c.unixSocket.map { .unix(path: $0) } ?? .tcp(host: c.host ?? "localhost", port: c.effectivePort)
        var s = MQTTSettings(broker: broker, topics: MQTTTopics(prefix: c.topicPrefix ?? MQTTTopics.defaultPrefix(hostname: hostname)),
                             clientID: c.clientID ?? "strapd-\(hostname)", cursorPath: stateDirectory + "/mqtt-cursor",
                             hostname: hostname)
        s.qos = c.qos
        s.types = c.types.isEmpty ? nil : Set(c.types.compactMap(QuantityType.init(rawValue:)))
        s.protocolVersion = c.protocolVersion
        s.keepAlive = Int(c.keepAlive.components.seconds)
        s.maxInflight = c.maxInflight
        s.backoff = ReconnectBackoff(initial: c.reconnectMin, maximum: c.reconnectMax)
        s.username = c.username
        s.tls = c.usesTLS
        s.tlsVerify = c.tlsVerify
        s.caFile = c.caFile
        s.certFile = c.certFile
        s.keyFile = c.keyFile
        s.homeAssistant = c.homeAssistant
        s.homeAssistantPrefix = c.homeAssistantPrefix
        if let file = c.passwordFile {
            let path: String
            if file.hasPrefix("/") { path = file } else {
                guard let dir = environment["CREDENTIALS_DIRECTORY"] else {
                    throw .configuration("mqtt.password_file \"\(file)\" names a systemd credential, but $CREDENTIALS_DIRECTORY is not set (LoadCredential= in the unit)")
                }
                path = dir + "/" + file
            }
            s.password = try readPassword(path)
        }
        return s
    }

    /// The first line of the file. Refused when others may read or write it: the password
    /// would be everybody's (docs/mqtt.md#security).
    static func readPassword(_ path: String) throws(MQTTError) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw .configuration("cannot read mqtt.password_file \(path): \(String(cString: strerror(errno)))")
        }
        guard st.st_mode & (S_IROTH | S_IWOTH) == 0 else {
            throw .configuration("mqtt.password_file \(path) is readable or writable by others (mode \(String(st.st_mode & 0o777, radix: 8))); make it readable by the service only (chmod 0600, or 0640 with group strapd)")
        }
        guard let f = fopen(path, "r") else {
            throw .configuration("cannot read mqtt.password_file \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        while bytes.count <= 65535 {
            let c = getc(f)
            if c == EOF || c == 0x0A { break }
            bytes.append(UInt8(c))
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .configuration("mqtt.password_file \(path) is empty") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
