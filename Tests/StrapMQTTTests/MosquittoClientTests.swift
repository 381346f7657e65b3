import CMosquittoLoader
import Glibc
@testable import StrapMQTT
import Testing

/// Every way setting up a libmosquitto client can fail (docs/mqtt.md#errors) is an error that
/// names the setting, and frees the client exactly once (a double free here crashed strapd,
/// and with it all recording, on a typo in `[mqtt]`). Run under AddressSanitizer in CI.
@Suite struct MosquittoClientSetupTests {
    static let events = MosquittoClient.Events(connected: { _, _ in }, disconnected: { _ in }, acknowledged: { _, _ in }, logged: { _, _ in })

    static func options(_ change: (inout MosquittoClient.Options) -> Void = { _ in }) -> MosquittoClient.Options {
        var o = MosquittoClient.Options(clientID: "setup-test", protocolVersion: MQTT_PROTOCOL_V5, username: nil, password: nil,
                                        caFile: nil, certFile: nil, keyFile: nil, tls: false, tlsVerify: true, maxInflight: 16,
                                        will: ("strapd/test/status", "offline"))
        change(&o)
        return o
    }

    static func failure(_ o: MosquittoClient.Options) -> MQTTError? {
        do throws(MQTTError) {
            let client = try MosquittoClient(o, events: events)
            client.close()
            return nil
        } catch {
            return error
        }
    }

    @Test func aWellFormedSetUpSucceedsAndClosesOnce() throws {
        let client = try MosquittoClient(Self.options(), events: Self.events)
        client.close()
        client.close()
    }

    @Test(arguments: [
        ("ca_file", "mqtt.ca_file /nonexistent/ca.pem: No such file or directory"),
        ("cert_file", "mqtt.cert_file /nonexistent/client.pem: No such file or directory"),
        ("key_file", "mqtt.key_file /nonexistent/client.key: No such file or directory"),
    ])
    func anUnreadableTLSFileIsNamedWithItsErrno(key: String, expected: String) {
        let error = Self.failure(Self.options { o in
            o.tls = true
            switch key {
            case "ca_file": o.caFile = "/nonexistent/ca.pem"
            case "cert_file": o.certFile = "/nonexistent/client.pem"; o.keyFile = "/etc/hostname"
            default: o.certFile = "/etc/hostname"; o.keyFile = "/nonexistent/client.key"
            }
        })
        #expect(error?.description == expected)
    }

    @Test func aCertificateWithoutItsKeyIsRefused() {
        let error = Self.failure(Self.options { $0.tls = true; $0.certFile = "/etc/hostname" })
        #expect(error?.description.hasPrefix("tls") == true, "\(String(describing: error))")
    }

    @Test func aUsernameMQTTCannotCarryIsRefused() {
        // MQTT strings exclude control characters (MQTT 5, 1.5.4): libmosquitto says
        // "Malformed UTF-8".
        let error = Self.failure(Self.options { $0.username = "strap\u{1}d" })
        #expect(error?.description.hasPrefix("username:") == true, "\(String(describing: error))")
    }

    @Test func anUnknownProtocolVersionIsRefused() {
        let error = Self.failure(Self.options { $0.protocolVersion = 99 })
        #expect(error?.description.hasPrefix("protocol:") == true, "\(String(describing: error))")
    }

    @Test func aWillTopicWithAWildcardIsRefused() {
        let error = Self.failure(Self.options { $0.will = ("strapd/#", "offline") })
        #expect(error?.description.hasPrefix("will:") == true, "\(String(describing: error))")
    }

    /// Many failed set-ups in a row, as a publisher retrying a bad setting makes them: each
    /// frees its client once (ASan would report a double free or a leak of the handle's use).
    @Test func repeatedFailuresAreFreedOnceEach() {
        for _ in 0..<50 {
            #expect(Self.failure(Self.options { $0.tls = true; $0.caFile = "/nonexistent/ca.pem" }) != nil)
            #expect(Self.failure(Self.options { $0.username = "a\u{7}b" }) != nil)
        }
    }
}
