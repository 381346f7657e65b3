import Foundation
import StrapConfig
import StrapModel
@testable import StrapMQTT
import StrapMQTTProtocol
import Testing

/// The publisher's pure parts (docs/mqtt.md): the delivery window that decides what may be
/// persisted, the reconnect backoff, the topic tree, `[mqtt]` and the password file rules.
@Suite struct DeliveryWindowTests {
    @Test func theCursorPassesOnlyAnAcknowledgedPrefix() {
        var w = DeliveryWindow(capacity: 4, cursor: 10)
        w.published(mid: 1, upTo: 11)
        w.published(mid: 2, upTo: 12)
        w.published(mid: 3, upTo: 14)
        #expect(w.inFlight == 3 && w.room == 1 && w.published == 14)
        let ack2 = w.acknowledged(mid: 2)
        #expect(ack2)
        #expect(w.cursor == 10, "message 1 is still in flight")
        let ack3 = w.acknowledged(mid: 3)
        #expect(ack3)
        #expect(w.cursor == 10)
        let ack1 = w.acknowledged(mid: 1)
        #expect(ack1)
        #expect(w.cursor == 14)
        let ack1x = w.acknowledged(mid: 1)
        #expect(!ack1x, "an id acknowledged twice counts once")
        let ack99x = w.acknowledged(mid: 99)
        #expect(!ack99x, "a retained-state message is not in the window")
    }

    @Test func skippedItemsWaitForWhatCameBefore() {
        var w = DeliveryWindow(capacity: 8, cursor: 0)
        w.published(mid: 7, upTo: 3)
        w.skipped(upTo: 9)           // filtered types: nothing to publish up to 9
        #expect(w.cursor == 0 && w.published == 9)
        w.acknowledged(mid: 7)
        #expect(w.cursor == 9)
        w.skipped(upTo: 12)
        #expect(w.cursor == 12, "with nothing in flight the cursor follows at once")
        w.skipped(upTo: 5)
        #expect(w.published == 12, "never backwards")
    }

    @Test func aLostConnectionRewindsToTheCursor() {
        var w = DeliveryWindow(capacity: 8, cursor: 100)
        w.published(mid: 1, upTo: 101)
        w.published(mid: 2, upTo: 102)
        w.acknowledged(mid: 1)
        w.reset()
        #expect(w.cursor == 101 && w.published == 101 && w.inFlight == 0)
        let ack2x = w.acknowledged(mid: 2)
        #expect(!ack2x, "an acknowledgement from the old connection is ignored")
        w.jump(to: 500)
        #expect(w.cursor == 500 && w.published == 500)
        w.jump(to: 7)
        #expect(w.cursor == 500, "never backwards")
    }

    /// The store lost its tail (sync = none): the cursor goes back to where the store ends,
    /// so the anchors it hands out next are published, not skipped.
    @Test func aStoreThatLostItsTailRewindsTheCursor() {
        var w = DeliveryWindow(capacity: 8, cursor: 900)
        w.published(mid: 1, upTo: 905)
        w.rewind(to: 850)
        #expect(w.cursor == 850 && w.published == 850 && w.inFlight == 0)
        let lostAck = w.acknowledged(mid: 1)
        #expect(!lostAck, "an acknowledgement of a lost item is ignored")
        w.rewind(to: 870)
        #expect(w.cursor == 850, "rewinding never moves forward")
    }

    @Test func longRunsCompactAndKeepTheirPositions() {
        var w = DeliveryWindow(capacity: 3, cursor: 0)
        var anchor: UInt64 = 0
        var mid: Int32 = 0
        for _ in 0..<20_000 {
            // Three in flight, acknowledged newest first: the cursor moves by three each time.
            var mids: [Int32] = []
            for _ in 0..<3 {
                anchor += 1; mid += 1
                w.published(mid: mid, upTo: anchor)
                mids.append(mid)
            }
            for m in mids.reversed() { w.acknowledged(mid: m) }
            #expect(w.cursor == anchor)
            if w.cursor != anchor { return }
        }
        #expect(w.inFlight == 0)
    }

    /// mosquitto's CONNACK announces Receive Maximum 20 by default: the window then holds 20,
    /// retained-state messages included, so libmosquitto never queues behind it.
    @Test func theBrokersReceiveMaximumBoundsEverythingInFlight() {
        var w = DeliveryWindow(capacity: 1024, cursor: 0)
        w.limit(to: 20)
        #expect(w.limit == 20 && w.room == 20)
        w.publishedOutside(mid: 1, topic: "strapd/box/devices/AA/state")
        for i in 2...20 { w.published(mid: Int32(i), upTo: UInt64(i)) }
        #expect(!w.hasRoom && w.inFlight == 20)
        #expect(w.acknowledgedOutside(mid: 1) == "strapd/box/devices/AA/state")
        #expect(w.acknowledgedOutside(mid: 1) == nil, "once")
        #expect(w.hasRoom && w.cursor == 0)
        let sample = w.acknowledged(mid: 2)
        #expect(sample && w.cursor == 2)
        #expect(w.acknowledgedOutside(mid: 3) == nil, "a sample's id is not a retained message's")
        w.limit(to: 65535)
        #expect(w.limit == 1024, "never above max_inflight")
        w.reset()
        #expect(w.limit == 1024 && w.inFlight == 0, "a new connection learns its limit again")
    }

    /// Retention jumps and store rewinds keep the connection's limit and retained messages.
    @Test func aJumpKeepsTheConnectionsLimitAndRetainedMessages() {
        var w = DeliveryWindow(capacity: 64, cursor: 0)
        w.limit(to: 5)
        w.publishedOutside(mid: 9, topic: "t")
        w.published(mid: 10, upTo: 4)
        w.jump(to: 100)
        #expect(w.limit == 5 && w.inFlight == 1 && w.cursor == 100)
    }

    /// A broken invariant (an anchor that goes back, a zero capacity) is absorbed, not a trap
    /// in production.
    @Test func brokenInvariantsDoNotTrap() {
        var w = DeliveryWindow(capacity: 0, cursor: 10)
        #expect(w.capacity == 1 && w.hasRoom)
        w.published(mid: 1, upTo: 5)
        #expect(w.published == 10)
        w.acknowledged(mid: 1)
        #expect(w.cursor == 10, "an out-of-order anchor covers nothing new")
    }
}

/// `lagSeconds` in `status`: how long the oldest unacknowledged item has waited, not how long
/// ago the publisher was last exactly caught up (which, with sensors notifying every second,
/// could be never).
@Suite struct DeliveryLagTests {
    @Test func aPublisherKeepingUpShowsNoLagHoweverLongItRuns() {
        var lag = DeliveryLag()
        var cursor: UInt64 = 0, latest: UInt64 = 0
        for second in 0..<300 {
            let t = Double(second)
            latest += 3          // three sensors
            lag.observe(latest: latest, at: t)
            #expect(lag.seconds(cursor: cursor, latest: latest, now: t + 0.01) <= 0.01 + 1e-9)
            cursor = latest      // acknowledged within the second
            #expect(lag.seconds(cursor: cursor, latest: latest, now: t + 0.02) == 0)
        }
    }

    @Test func anOutageShowsTheAgeOfTheOldestWaitingItem() {
        var lag = DeliveryLag()
        lag.observe(latest: 10, at: 0)
        #expect(lag.seconds(cursor: 10, latest: 10, now: 0) == 0)
        for second in 1...10 { lag.observe(latest: 10 + UInt64(second) * 100, at: Double(second)) }
        #expect(lag.seconds(cursor: 10, latest: 1010, now: 10) == 9, "item 11 was first seen at 1 s")
        #expect(lag.seconds(cursor: 500, latest: 1010, now: 10.5) == 5.5, "items 501… first seen at 5 s")
        #expect(lag.seconds(cursor: 1010, latest: 1010, now: 11) == 0)
    }

    @Test func aLongOutageKeepsABoundedNumberOfMarks() {
        var lag = DeliveryLag()
        for i in 0..<100_000 { lag.observe(latest: UInt64(i + 1), at: Double(i) * 0.2) }
        let waited = lag.seconds(cursor: 0, latest: 100_000, now: 20_000)
        #expect(waited == 20_000, "the oldest mark survives the thinning")
        #expect(lag.seconds(cursor: 99_999, latest: 100_000, now: 20_000) < 1)
    }

}

@Suite struct ReconnectBackoffTests {
    @Test func delaysDoubleUpToTheMaximumWithHalfOfEachRandom() {
        var b = ReconnectBackoff(initial: .milliseconds(500), maximum: .seconds(4))
        #expect(b.next(unit: 0) == .milliseconds(250))
        #expect(b.next(unit: 0.999_999_999) > .milliseconds(999))
        #expect(b.next(unit: 0.5) == .milliseconds(1500))
        #expect(b.next(unit: 0) == .seconds(2))
        #expect(b.next(unit: 1) == .seconds(4))
        #expect(b.next(unit: 1) == .seconds(4), "capped")
        for _ in 0..<100 { _ = b.next(unit: 1) }
        #expect(b.next(unit: 1) == .seconds(4), "no overflow after many failures")
        b.reset()
        #expect(b.next(unit: 0) == .milliseconds(250))
    }
}

@Suite struct MQTTTopicTests {
    @Test func topicsNameTheBoxTheDeviceAndTheType() {
        let t = MQTTTopics(prefix: MQTTTopics.defaultPrefix(hostname: "gym box#1.lan"))
        #expect(t.prefix == "strapd/gym_box_1_lan")
        #expect(MQTTTopics.node("C0:FF:EE:00:00:01") == "c0ffee000001")
        #expect(t.sample(address: "C0:FF:EE:00:00:01", type: .heartRate) == "strapd/gym_box_1_lan/samples/c0ffee000001/heartRate")
        #expect(t.deviceState(address: "C0:FF:EE:00:00:01") == "strapd/gym_box_1_lan/devices/c0ffee000001/state")
        #expect(t.status == "strapd/gym_box_1_lan/status" && t.deleted == "strapd/gym_box_1_lan/deleted")
        #expect(t.workout(id: "6F9619FF-8B86-D011-B42D-00C04FC964FF") == "strapd/gym_box_1_lan/workouts/6f9619ff-8b86-d011-b42d-00c04fc964ff/state")
    }
}

@Suite struct MQTTConfigurationTests {
    func parse(_ text: String) throws(ConfigError) -> Configuration {
        try ConfigParser.parse(text, path: "strapd.conf").configuration
    }

    @Test func offUnlessABrokerIsNamed() throws {
        #expect(!Configuration().mqtt.enabled)
        let c = try parse("[mqtt]\nhost = 127.0.0.1\n")
        #expect(c.mqtt.enabled && c.mqtt.effectivePort == 1883 && c.mqtt.qos == 1 && c.mqtt.protocolVersion == .v5)
        #expect(try parse("[mqtt]\nhost = h\nca_file = /etc/ca.crt\n").mqtt.effectivePort == 8883, "TLS: 8883")
        #expect(try parse("[mqtt]\nusername = u\n").mqtt.problems() == ["[mqtt] has settings but no broker: set mqtt.host or mqtt.unix_socket"])
    }

    @Test func badValuesAreErrorsNamingTheKey() {
        let cases: [(String, String)] = [
            ("password = hunter2", "a password is never written in strapd.conf"),
            ("qos = 3", "mqtt.qos"),
            ("topic_prefix = strapd/#", "no wildcards"),
            ("topic_prefix = /strapd", "leading or trailing /"),
            ("keepalive = 1s", "between 5s and 65535s"),
            ("protocol = 4", "mqtt.protocol"),
            ("types = heartRate, pulse", "unknown sample type \"pulse\""),
            ("ca_file = relative.crt", "mqtt.ca_file"),
            ("password_file = ../secret", "systemd credential name"),
            ("max_inflight = 0", "mqtt.max_inflight"),
        ]
        for (line, expected) in cases {
            do {
                _ = try parse("[mqtt]\nhost = h\n\(line)\n")
                Issue.record("\(line) was accepted")
            } catch {
                #expect(error.description.contains(expected), "\(line): \(error.description)")
                #expect(error.description.contains("strapd.conf:3"), "\(line): \(error.description)")
            }
        }
    }

    @Test func contradictionsAreNamed() throws {
        var m = Configuration.MQTT()
        m.host = "h"
        m.certFile = "/c.crt"
        m.passwordFile = "/p"
        m.reconnectMin = .seconds(10)
        m.reconnectMax = .seconds(1)
        #expect(m.problems() == ["mqtt.cert_file and mqtt.key_file go together", "mqtt.password_file needs mqtt.username",
                                 "mqtt.reconnect_min is larger than mqtt.reconnect_max"])
    }
}

@Suite struct MQTTPasswordFileTests {
    func settings(_ file: String, mode: mode_t, contents: String = "s3cret\nsecond line\n",
                  environment: [String: String] = [:]) throws(MQTTError) -> MQTTSettings? {
        let path = NSTemporaryDirectory() + "strapd-pw-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        chmod(path, mode)
        var m = Configuration.MQTT()
        m.host = "127.0.0.1"
        m.username = "strapd"
        m.passwordFile = file.isEmpty ? path : file
        return try MQTTSettings.resolve(m, stateDirectory: "/var/lib/strapd", hostname: "box", environment: environment)
    }

    @Test func theFirstLineOfAPrivateFileIsThePassword() throws {
        let s = try #require(try settings("", mode: 0o600))
        #expect(s.password == "s3cret" && s.username == "strapd")
        #expect(s.clientID == "strapd-box" && s.topics.prefix == "strapd/box" && s.cursorPath == "/var/lib/strapd/mqtt-cursor")
        #expect(try settings("", mode: 0o640)?.password == "s3cret", "group-readable (root:strapd 0640) is the service's")
    }

    @Test func aFileOthersMayReadIsRefused() {
        for mode: mode_t in [0o644, 0o604, 0o602] {
            #expect {
                _ = try settings("", mode: mode)
            } throws: { error in
                "\(error)".contains("readable or writable by others (mode \(String(mode, radix: 8)))")
            }
        }
        #expect(throws: MQTTError.configuration("mqtt.password_file \"creds\" names a systemd credential, but $CREDENTIALS_DIRECTORY is not set (LoadCredential= in the unit)")) {
            _ = try settings("creds", mode: 0o600)
        }
        #expect { _ = try settings("", mode: 0o600, contents: "\n") } throws: { "\($0)".contains("is empty") }
    }
}

@Suite struct DeliveryCursorTests {
    @Test func aDamagedCursorIsReportedNotTrusted() throws {
        let path = NSTemporaryDirectory() + "strapd-cursor-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard case .none = DeliveryCursor.load(path) else { Issue.record("a missing cursor is none"); return }
        let c = DeliveryCursor(anchor: 4_000_000_001, broker: "127.0.0.1:1883", prefix: "strapd/box")
        try c.save(path)
        guard case .found(let back) = DeliveryCursor.load(path) else { Issue.record("not read back"); return }
        #expect(back == c)
        for junk in ["", "{\"anchor\":-1,\"broker\":\"b\",\"prefix\":\"p\"}", "{\"anchor\":12}", "\u{0}\u{1}garbage"] {
            FileManager.default.createFile(atPath: path, contents: Data(junk.utf8))
            guard case .damaged = DeliveryCursor.load(path) else { Issue.record("\(junk) was trusted"); continue }
        }
    }
}
