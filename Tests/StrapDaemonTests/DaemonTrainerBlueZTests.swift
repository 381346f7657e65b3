import Foundation
import MockBlueZSupport
import StrapWire
import Testing
@testable import StrapDaemon

/// strapd controlling a trainer through the MOCK bluetoothd (Tests/Fixtures/mockbluez's
/// control point: it grants control, takes targets, answers with indications and forgets
/// both with the link), not real BlueZ: `strapctl trainer set` reaches the trainer as Request
/// Control then Set Target Power; a dropped link gets the target again; SIGTERM resets it.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct DaemonTrainerBlueZTests {
    static let trainer = "C0:DA:E0:00:00:D9"

    @Test func aTargetSurvivesALinkLossAndStrapdResetsTheTrainerWhenItStops() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.trainer, kind: "ftms", hz: 4, controlPoint: true)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, startNow: false)
        try #"{"version":1,"devices":[{"address":"\#(Self.trainer)","autoConnect":true}]}"#
            .write(toFile: h.stateDirectory + "/known-devices.json", atomically: true, encoding: .utf8)
        try h.start()
        try eventually("the trainer's ranges known") {
            h.strapctl("trainer", "status").stdout.contains("power 0…2000 W")
        }
        let set = h.strapctl("trainer", "set", "--power", "230")
        #expect(set.exitCode == 0, "\(set.stderr)")
        try eventually("target written") { (try? mock.writes(Self.trainer, "2ad9"))?.count == 2 }
        #expect(try mock.writes(Self.trainer, "2ad9") == [[0x00], [0x05, 0xE6, 0x00]])
        try eventually("holding") { h.strapctl("trainer", "status").stdout.contains("holding  230 W") }

        try mock.call("Drop", [.string(Self.trainer), .string("org.bluez.Reason.Timeout")])
        try eventually("target written again after the reconnect") { (try? mock.writes(Self.trainer, "2ad9"))?.count == 4 }
        #expect(try mock.writes(Self.trainer, "2ad9").suffix(2) == [[0x00], [0x05, 0xE6, 0x00]])

        h.stop()
        #expect(try mock.writes(Self.trainer, "2ad9").last == [0x01], "reset before strapd let go of the link")
        let held = try String(contentsOfFile: h.stateDirectory + "/trainers-held", encoding: .utf8)
        #expect(held.isEmpty, "nothing left to reset at the next start: \(held)")
    }
}
