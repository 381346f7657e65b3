import Foundation
import MockBlueZSupport
@testable import StrapBlueZ
import StrapDBus
import Testing

/// The log lines StrapBlueZ writes while a test runs, read through a tap: other tests run in
/// parallel and install and restore handlers of their own.
final class LogTap: @unchecked Sendable {
    private let lines = ResultList<(BlueZLogLevel, String)>()
    private var id = 0

    init() {
        let lines = self.lines
        id = BusLog.addTap(minimum: .info) { level, text, _ in lines.append((level, text)) }
    }

    func lines(containing fragment: String) -> [String] {
        lines.items.map(\.1).filter { $0.contains(fragment) }
    }

    func level(of text: String) -> BlueZLogLevel? { lines.items.first { $0.1 == text }?.0 }

    deinit { BusLog.removeTap(id) }
}

/// A built-in adapter and a USB dongle (issue 14, item 2): links spread over both, a sensor
/// on a pulled dongle comes back through the other adapter, a pinned one waits for its own.
/// Against the mock bluetoothd, not real BlueZ or radios.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct TwoAdapterTests {
    static let adapters = ["hci0", "hci1"]
    /// What the mock's adapters are called by address (python-dbusmock derives them from the name).
    static let hci1Address = "01:02:03:04:05:06"

    private func bothAdaptersVisible(_ daemon: Daemon) throws {
        try eventually("both adapters in the mirror") { daemon.queue.sync { daemon.client.mirror.adapters.count == 2 } }
    }

    private func adapter(_ daemon: Daemon, _ address: String) -> String? {
        daemon.queue.sync { daemon.manager.links[address]?.adapterPath.map(AdapterName.of) }
    }

    /// Quiesced, every notification the mock delivered reached the sink once, in order.
    private func deliveredExactlyOnce(_ mock: MockBlueZ, _ daemon: Daemon, _ address: String) throws {
        try mock.call("SetStreaming", [.boolean(false)])
        let sent = try mock.sent(address)
        try eventually(timeout: 10, "delivery of all \(sent) sent") { Set(daemon.sink.sequence(address)).count >= sent }
        let check = DeliveryCheck(sequence: daemon.sink.sequence(address), sent: sent)
        #expect(check.lost == 0 && check.duplicated == 0 && check.outOfOrder == 0, "\(check)")
    }

    /// Three sensors every adapter sees: each goes where strapd has the fewest links, ties
    /// to the lowest hciN, and none tries another adapter meanwhile.
    @Test func sensorsVisibleOnBothAdaptersSpreadOverThem() throws {
        let sensors = ["C0:2A:00:00:00:01", "C0:2A:00:00:00:02", "C0:2A:00:00:00:03"]
        let mock = try MockBlueZ(sensors: sensors.map { .init(address: $0, kind: "hr") }, adapters: Self.adapters)
        let daemon = try Daemon(address: mock.bus.address)
        try bothAdaptersVisible(daemon)
        try eventually("every sensor on both adapters") {
            daemon.queue.sync { sensors.allSatisfy { daemon.client.mirror.devices(address: $0).count == 2 } }
        }
        for address in sensors { daemon.add(address) }
        try eventually("all three streaming") { sensors.allSatisfy { daemon.sink.count($0) >= 3 } }
        #expect(try sensors.map { try mock.link($0) } == ["hci0", "hci1", "hci0"])
        #expect(sensors.map { adapter(daemon, $0) } == ["hci0", "hci1", "hci0"])
        for (address, expected) in zip(sensors, ["hci0", "hci1", "hci0"]) {
            #expect(try mock.connectAdapters(address) == [expected])
        }
    }

    /// The dongle is pulled while a sensor streams through it, reported either way bluetoothd
    /// has been seen to: only its objects removed (GATT, device, adapter), or, as real
    /// bluetoothd 5.66 did in the lab, its links dropped and the adapter powered off first. The
    /// sensor has no device object on the other adapter until discovery there finds it; then it
    /// streams again, its notifications arrive once each, and the loss is one clear log line
    /// naming it (the lab's first run said "no sensor was on it" after the links dropped first).
    @Test(arguments: [false, true])
    func sensorOnAPulledDongleComesBackThroughTheOtherAdapter(linksDropFirst: Bool) throws {
        // Addresses of their own per case: the cases run in parallel and the log tap sees both.
        let (moved, stayed) = linksDropFirst ? ("C0:2B:00:00:01:01", "C0:2B:00:00:01:02") : ("C0:2B:00:00:00:01", "C0:2B:00:00:00:02")
        let log = LogTap()
        let mock = try MockBlueZ(sensors: [.init(address: moved, kind: "hr", hz: 10, knownOn: ["hci1"]),
                                           .init(address: stayed, kind: "csc", hz: 10, knownOn: ["hci0"])],
                                 adapters: Self.adapters)
        let daemon = try Daemon(address: mock.bus.address)
        try bothAdaptersVisible(daemon)
        daemon.add(moved)
        daemon.add(stayed)
        try eventually("both streaming") { daemon.sink.count(moved) >= 10 && daemon.sink.count(stayed) >= 10 }
        #expect(try mock.link(moved) == "hci1" && mock.link(stayed) == "hci0")
        #expect(try mock.deviceAdapters(moved) == ["hci1"])

        try linksDropFirst ? mock.pullAdapter("hci1") : mock.unplugAdapter("hci1")
        try eventually("streaming through hci0") {
            (try? mock.link(moved)) == "hci0" && daemon.phase(moved) == .streaming && adapter(daemon, moved) == "hci0"
        }
        let back = daemon.sink.count(moved)
        try eventually("notifications after the return") { daemon.sink.count(moved) >= back + 20 }

        // The device object on hci0 was made by discovery strapd started there after the loss.
        let events = try mock.events().map { $0.compactMap { $0 as? String } }
        let removed = try #require(events.firstIndex(of: ["AdapterRemoved", "hci1"]))
        let discovery = try #require(events[removed...].firstIndex(of: ["StartDiscovery", "hci0"]))
        let appeared = try #require(events.firstIndex(of: ["DeviceAdded", moved, "hci0"]))
        #expect(discovery < appeared)
        #expect(try mock.connectAdapters(moved) == ["hci1", "hci0"])
        #expect(try mock.connectAdapters(stayed) == ["hci0"])
        #expect(daemon.phase(stayed) == .streaming)

        try deliveredExactlyOnce(mock, daemon, moved)
        let gone = "adapter hci1 (\(Self.hci1Address)) is gone (unplugged or its driver stopped): 1 sensor(s) on it (\(moved)) will reconnect through hci0"
        #expect(log.lines(containing: "is gone").filter { $0.contains(moved) } == [gone])
        #expect(log.level(of: gone) == .warning)
    }

    /// Pulled while BlueZ already has a device object for the sensor on the other adapter:
    /// the link moves there at once, without discovery, and delivers once each.
    @Test func sensorSeenByBothMovesAtOnceWhenItsDongleIsPulled() throws {
        let (first, second) = ("C0:2E:00:00:00:01", "C0:2E:00:00:00:02")
        let log = LogTap()
        let mock = try MockBlueZ(sensors: [.init(address: first, kind: "hr", hz: 10), .init(address: second, kind: "csc", hz: 10)],
                                 adapters: Self.adapters)
        let daemon = try Daemon(address: mock.bus.address)
        try bothAdaptersVisible(daemon)
        try eventually("both sensors on both adapters") {
            daemon.queue.sync { [first, second].allSatisfy { daemon.client.mirror.devices(address: $0).count == 2 } }
        }
        daemon.add(first)
        daemon.add(second)
        try eventually("both streaming") { daemon.sink.count(first) >= 10 && daemon.sink.count(second) >= 10 }
        #expect(try mock.link(second) == "hci1")

        try mock.unplugAdapter("hci1")
        try eventually("streaming through hci0") { (try? mock.link(second)) == "hci0" && daemon.phase(second) == .streaming }
        let back = daemon.sink.count(second)
        try eventually("notifications after the move") { daemon.sink.count(second) >= back + 20 }
        let events = try mock.events().map { $0.compactMap { $0 as? String } }
        let removed = try #require(events.firstIndex(of: ["AdapterRemoved", "hci1"]))
        #expect(!events[removed...].contains { $0.first == "StartDiscovery" })
        #expect(try mock.connectAdapters(second) == ["hci1", "hci0"])
        #expect(try mock.connectAdapters(first) == ["hci0"])
        try deliveredExactlyOnce(mock, daemon, second)
        #expect(log.lines(containing: "is gone").filter { $0.contains(second) } == [
            "adapter hci1 (\(Self.hci1Address)) is gone (unplugged or its driver stopped): 1 sensor(s) on it (\(second)) will reconnect through hci0",
        ])
    }

    /// `[device.ADDR] adapter = hci1`: connected through hci1 although hci0 is the spread's
    /// choice, never through hci0 while hci1 is away (said once), and back through hci1 when
    /// it returns, found there by discovery.
    @Test func pinnedSensorWaitsForItsAdapterAndComesBackThroughIt() throws {
        let pinned = "C0:2C:00:00:00:01"
        let log = LogTap()
        let mock = try MockBlueZ(sensors: [.init(address: pinned, kind: "rsc", hz: 10)], adapters: Self.adapters)
        let daemon = try Daemon(address: mock.bus.address)
        try bothAdaptersVisible(daemon)
        try eventually("sensor on both adapters") { daemon.queue.sync { daemon.client.mirror.devices(address: pinned).count == 2 } }
        var options = Daemon.fast
        options.adapter = "hci1"
        daemon.add(pinned, options)
        try eventually("streaming") { daemon.sink.count(pinned) >= 10 }
        #expect(try mock.link(pinned) == "hci1")

        try mock.unplugAdapter("hci1")
        let waiting = "[\(pinned)] pinned to hci1, which is not present: waiting for it"
        try eventually("waiting for hci1") { daemon.phase(pinned) == .waitingForDevice && !log.lines(containing: waiting).isEmpty }
        #expect(adapter(daemon, pinned) == nil)
        #expect(try (mock.stats()["discovering_on"] as? [String: Bool])?["hci0"] == false)

        try mock.plugAdapter("hci1")
        try eventually("streaming through hci1 again") { (try? mock.link(pinned)) == "hci1" && daemon.phase(pinned) == .streaming }
        #expect(try mock.connectAdapters(pinned) == ["hci1", "hci1"])
        #expect(try mock.deviceAdapters(pinned) == ["hci0", "hci1"])
        #expect(log.lines(containing: waiting).count == 1)
        #expect(log.lines(containing: "is gone").filter { $0.contains(pinned) } == [
            "adapter hci1 (\(Self.hci1Address)) is gone (unplugged or its driver stopped): 1 sensor(s) on it (\(pinned)); pinned to it, they wait for it to come back",
        ])
        #expect(!log.lines(containing: "adapter hci1 (\(Self.hci1Address)) appeared").isEmpty)
        let back = daemon.sink.count(pinned)
        try eventually("notifications after the return") { daemon.sink.count(pinned) >= back + 10 }
        try deliveredExactlyOnce(mock, daemon, pinned)
    }
}

/// The choice of adapter and the loss line, without D-Bus.
@Suite struct AdapterChoiceTests {
    static func candidate(_ adapter: String, load: Int, connected: Bool = false) -> AdapterChoice.Candidate {
        let adapterPath = ObjectPath(unchecked: "/org/bluez/\(adapter)")
        let device = BlueZDevice(path: adapterPath.appending("dev_C0_00_00_00_00_01"),
                                 properties: ["Adapter": .objectPath(adapterPath), "Connected": .boolean(connected)], battery: nil)
        return .init(device: device, adapter: BlueZAdapter(path: adapterPath, properties: ["Powered": .boolean(true)]), load: load)
    }

    @Test func theLeastLoadedAdapterWinsTiesGoToTheLowestIndex() {
        let (hci0, hci1, hci10) = (Self.candidate("hci0", load: 1), Self.candidate("hci1", load: 0), Self.candidate("hci10", load: 0))
        #expect(AdapterChoice.choose([hci0, hci1], current: nil, committed: false) == hci1)
        #expect(AdapterChoice.choose([hci10, hci1], current: nil, committed: false) == hci1)
        #expect(AdapterChoice.choose([hci0, Self.candidate("hci1", load: 1)], current: nil, committed: false) == hci0)
    }

    /// A link connecting or connected keeps its adapter; a live connection is used wherever it is.
    @Test func aLinkUnderWayStaysAndAConnectionIsAdopted() {
        let (busy, idle) = (Self.candidate("hci0", load: 5), Self.candidate("hci1", load: 0))
        #expect(AdapterChoice.choose([busy, idle], current: busy.device.path, committed: true) == busy)
        #expect(AdapterChoice.choose([busy, idle], current: busy.device.path, committed: false) == idle)
        let connected = Self.candidate("hci0", load: 5, connected: true)
        #expect(AdapterChoice.choose([connected, idle], current: nil, committed: false) == connected)
    }

    @Test func pinsMatchByNameOrAddress() {
        let adapter = BlueZAdapter(path: ObjectPath(unchecked: "/org/bluez/hci1"), properties: ["Address": .string("00:1A:7D:DA:71:13")])
        #expect(adapter.matches("hci1") && adapter.matches("00:1a:7d:da:71:13"))
        #expect(!adapter.matches("hci0") && !adapter.matches("00:1A:7D:DA:71:14"))
    }

    @Test func theLossLineSaysWhereTheSensorsGo() {
        var report = AdapterLossReport(adapter: "hci1", address: "00:BB:00:00:00:02", moving: ["BB:00:00:00:00:01", "AA:00:00:00:00:01"],
                                       pinned: [], remaining: ["hci0"])
        #expect(report.text == "adapter hci1 (00:BB:00:00:00:02) is gone (unplugged or its driver stopped): "
            + "2 sensor(s) on it (AA:00:00:00:00:01, BB:00:00:00:00:01) will reconnect through hci0")
        #expect(report.level == .warning)
        report.remaining = []
        #expect(report.text.hasSuffix("(AA:00:00:00:00:01, BB:00:00:00:00:01); no other adapter: they wait for one"))
        report.remaining = ["hci0", "hci2"]
        report.pinned = ["CC:00:00:00:00:01"]
        #expect(report.text.hasSuffix("3 sensor(s) on it (AA:00:00:00:00:01, BB:00:00:00:00:01, CC:00:00:00:00:01); "
            + "AA:00:00:00:00:01, BB:00:00:00:00:01 will reconnect through hci0 or hci2, CC:00:00:00:00:01 (pinned to it) wait for it to come back"))
        let empty = AdapterLossReport(adapter: "hci1", address: nil, moving: [], pinned: [], remaining: ["hci0"])
        #expect(empty.text == "adapter hci1 is gone (unplugged or its driver stopped); no sensor was on it")
        #expect(empty.level == .notice)
    }
}
