import Foundation
import MockBlueZSupport
import StrapWire
import Testing
@testable import StrapDaemon

/// strapd with two adapters (built-in + USB dongle) against the MOCK bluetoothd: which
/// adapter each sensor is on, through the socket and strapctl, and `[device.ADDR] adapter`
/// from strapd.conf to the link.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct DaemonTwoAdapterTests {
    /// The pinned sensor is on hci1 (its pin), the free one on hci0 (fewest links), the one
    /// never connected on none; while the dongle is out the pinned one is on none either.
    @Test func devicesListSaysWhichAdapterEachSensorIsOn() throws {
        let (pinned, free, seen) = ("C0:2D:00:00:00:01", "C0:2D:00:00:00:02", "C0:2D:00:00:00:03")
        let mock = try MockBlueZ(sensors: [.init(address: pinned, kind: "hr"), .init(address: free, kind: "csc"),
                                           .init(address: seen, kind: "rsc")], adapters: ["hci0", "hci1"])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, config: """
            [device.\(pinned)]
            adapter = hci1
            """)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        for address in [pinned, free] {
            let connect = h.strapctl("connect", address)
            #expect(connect.exitCode == 0, "\(connect.stderr)")
        }
        let list = try h.client().call(#"{"id":1,"op":"devices.list"}"#).result.objects("devices")
        func device(_ address: String) throws -> JSONObject { try #require(list.first { $0.string("address") == address }) }
        #expect(try device(pinned).string("adapter") == "hci1" && device(pinned).string("adapterAddress") == "01:02:03:04:05:06")
        #expect(try device(free).string("adapter") == "hci0" && device(free).string("adapterAddress") == "00:01:02:03:04:05")
        #expect(try device(seen)["adapter"] == .null && device(seen)["adapterAddress"] == .null)
        #expect(try mock.link(pinned) == "hci1" && mock.link(free) == "hci0")

        let table = h.strapctl("devices")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("ADAPTER") == true, "\(table.stdout)")
        #expect(lines.contains { $0.hasPrefix(pinned) && $0.contains(" hci1 ") }, "\(table.stdout)")
        #expect(lines.contains { $0.hasPrefix(seen) && !$0.contains("hci") }, "\(table.stdout)")
        #expect(h.strapctl("info", pinned).stdout.contains("adapterAddress:"))

        try mock.unplugAdapter("hci1")
        try eventually("no adapter while the dongle is out") {
            let info = (try? h.info(pinned)) ?? [:]
            return info["adapter"] == .null && info.bool("connected") == false
        }
        #expect(try h.info(free).string("adapter") == "hci0")
        #expect(try h.info(pinned).string("lastDisconnectReason") == "device object removed (adapter unplugged, or the device removed from BlueZ)")
        try mock.plugAdapter("hci1")
        try eventually("back on hci1") { (try? h.info(pinned))?.string("adapter") == "hci1" && (try? mock.link(pinned)) == "hci1" }
        #expect(try mock.connectAdapters(pinned).allSatisfy { $0 == "hci1" })
    }
}
