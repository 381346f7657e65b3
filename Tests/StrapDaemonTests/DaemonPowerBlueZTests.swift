import Foundation
import MockBlueZSupport
import StrapWire
import Testing
@testable import StrapDaemon

/// A power meter (Cycling Power 0x1818) and an indoor-bike trainer (Fitness Machine 0x1826)
/// recorded by strapd against the MOCK bluetoothd (Tests/Fixtures/mockbluez on a private
/// dbus-daemon), not real BlueZ or radios: discovered, connected, subscribed like a CSC
/// sensor, and their notifications stored as samples (docs/decoding.md#power-and-trainer-samples).
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct DaemonPowerBlueZTests {
    static func values(_ samples: [JSONObject]) -> [Double] { samples.compactMap { $0.number("value") } }

    /// The mock's meter sends power 100 + seq % 200 W, balance 50 % of the left pedal, one
    /// wheel revolution (1/2048 s event time) and one crank revolution (1/1024 s) per second
    /// of event time: every notification stored as its power, nothing lost or repeated.
    @Test func powerMeterNotificationsAreStoredAsPowerBalanceCadenceAndSpeed() throws {
        let meter = "C0:DA:E0:00:00:63"
        let mock = try MockBlueZ(sensors: [.init(address: meter, kind: "cps", hz: 10)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, startNow: false)
        try #"{"version":1,"devices":[{"address":"\#(meter)","autoConnect":true}]}"#
            .write(toFile: h.stateDirectory + "/known-devices.json", atomically: true, encoding: .utf8)
        try h.start()
        try eventually("power stored") { ((try? h.stored("cyclingPower")) ?? []).count >= 8 }
        try mock.call("SetStreaming", [.boolean(false)])
        let sent = try mock.sent(meter)
        try eventually("everything sent is stored") { (try? h.stored("cyclingPower").count) == sent }
        #expect(Self.values(try h.stored("cyclingPower")) == (0..<sent).map { Double(100 + $0 % 200) })

        let balance = try h.stored("cyclingPowerBalance")
        #expect(balance.count == sent && Self.values(balance).allSatisfy { $0 == 50 })
        guard case .object(let metadata)? = balance.first?["metadata"] else { Issue.record("no metadata"); return }
        #expect(metadata.string("reference") == "left")
        // The first packet is the revolution data's baseline.
        let cadence = Self.values(try h.stored("cyclingCadence"))
        #expect(cadence.count == sent - 1 && cadence.allSatisfy { $0 == 60 })
        let speed = Self.values(try h.stored("cyclingSpeed"))
        #expect(speed.count == sent - 1 && speed.allSatisfy { abs($0 - 2.105) < 1e-9 })
        // Read on connect: the Cycling Power Feature and the sensor location (5, left crank).
        #expect(try mock.startNotifyCalls(meter) >= 1)
        #expect(try h.info(meter).string("sensorLocation") == "leftCrank")
    }

    /// The mock's trainer: Indoor Bike Data at 36 km/h, 90 rpm, power as the meter's, total
    /// distance = seq metres, which becomes 1 m distance increments after the baseline.
    @Test func trainerIndoorBikeDataIsStored() throws {
        let trainer = "C0:DA:E0:00:00:D2"
        let mock = try MockBlueZ(sensors: [.init(address: trainer, kind: "ftms", hz: 10)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, startNow: false)
        try #"{"version":1,"devices":[{"address":"\#(trainer)","autoConnect":true}]}"#
            .write(toFile: h.stateDirectory + "/known-devices.json", atomically: true, encoding: .utf8)
        try h.start()
        try eventually("power stored") { ((try? h.stored("cyclingPower")) ?? []).count >= 8 }
        try mock.call("SetStreaming", [.boolean(false)])
        let sent = try mock.sent(trainer)
        try eventually("everything sent is stored") { (try? h.stored("cyclingPower").count) == sent }
        #expect(Self.values(try h.stored("cyclingPower")) == (0..<sent).map { Double(100 + $0 % 200) })
        #expect(Self.values(try h.stored("cyclingSpeed")) == Array(repeating: 10, count: sent))
        #expect(Self.values(try h.stored("cyclingCadence")) == Array(repeating: 90, count: sent))
        #expect(Self.values(try h.stored("cyclingDistance")) == Array(repeating: 1, count: sent - 1))
        #expect(try h.stored("heartRate").isEmpty)
    }

    /// A trainer with Cycling Power beside FTMS (the mock's `trainer`: its 0x2A63 cannot be
    /// subscribed, so a link that tried would never stream): Indoor Bike Data alone is
    /// streamed, and each notification is stored once as power.
    @Test func trainerOfferingCyclingPowerTooStreamsIndoorBikeDataAlone() throws {
        let trainer = "C0:DA:E0:00:00:D3"
        let mock = try MockBlueZ(sensors: [.init(address: trainer, kind: "trainer", hz: 10)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, startNow: false)
        try #"{"version":1,"devices":[{"address":"\#(trainer)","autoConnect":true}]}"#
            .write(toFile: h.stateDirectory + "/known-devices.json", atomically: true, encoding: .utf8)
        try h.start()
        try eventually("power stored") { ((try? h.stored("cyclingPower")) ?? []).count >= 5 }
        try mock.call("SetStreaming", [.boolean(false)])
        let sent = try mock.sent(trainer)
        try eventually("everything sent is stored") { (try? h.stored("cyclingPower").count) == sent }
        #expect(Self.values(try h.stored("cyclingPower")) == (0..<sent).map { Double(100 + $0 % 200) })
        #expect(try mock.startNotifyCalls(trainer) == 1)
    }
}
