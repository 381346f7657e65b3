import Foundation
import Glibc
import MockBlueZSupport
import StrapIngest
import StrapSystem
import Testing
@testable import StrapBluetooth

extension TestTools {
    static var skipReason: Comment { Comment(rawValue: skipText) }
}

/// `BlueZDeviceService` alone against the mock (no socket): the events it hands the
/// pipeline, and an RSSI read through an injected HCI.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct BlueZDeviceServiceTests {
    struct FixedHCI: HCIAccess {
        func open(adapter: Int32) -> Result<Int32, HCIFailure> { adapter == 0 ? .success(7) : .failure(HCIFailure(errno: ENODEV)) }
        func connectionHandle(_ fd: Int32, address: [UInt8], linkType: UInt8) -> Result<UInt16, HCIFailure> { .success(1) }
        func readRSSI(_ fd: Int32, handle: UInt16) -> Result<Int8, HCIFailure> { .success(-64) }
        func close(_ fd: Int32) {}
    }

    @Test func mapsLinkEventsAndReadsRSSI() throws {
        let hr = "C0:DA:E0:00:00:21"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr", hz: 10)])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-svc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var settings = BlueZDeviceService.Settings(stateDirectory: directory, busAddress: mock.bus.address)
        settings.hci = FixedHCI()
        let events = ResultList<SensorEvent>()
        let service = BlueZDeviceService(settings: settings, logger: Logger(level: .warning, sink: .stderr)) { events.append($0) }
        service.start()
        defer { service.stop() }
        try eventually("ready") { service.degraded == nil }
        let done = ResultBox<DeviceError?>()
        service.connect(hr) { done.set($0) }
        try eventually("connected") { done.get() != nil }
        #expect(done.get()! == nil)
        try eventually("RSSI") { service.snapshot().first { $0.address == hr }?.rssi == -64 }

        try mock.call("Drop", [.string(hr), .string("org.bluez.Reason.Remote")])
        try eventually("down and up again") { events.items.filter { if case .linkUp = $0 { true } else { false } }.count >= 2 }
        let links = events.items.compactMap { e -> String? in
            switch e {
            case .linkUp(let a, let name, _): "up \(a) \(name)"
            case .linkDown(let a, let reason, _): "down \(a) \(reason)"
            default: nil
            }
        }
        #expect(links == ["up \(hr) Mock HR", "down \(hr) org.bluez.Reason.Remote (Connection timed out)", "up \(hr) Mock HR"])
        #expect(events.items.contains { if case .notification(hr, .heartRateMeasurement, _, _) = $0 { true } else { false } })
        #expect(events.items.contains { if case .read(hr, .batteryLevel, [87], _) = $0 { true } else { false } })
        #expect(events.items.contains { if case .read(hr, .bodySensorLocation, [1], _) = $0 { true } else { false } })
    }

    /// A notification that arrives before the subscription is through (bluetoothd forwards it
    /// ahead of the StartNotify reply) is data of the new connection: the pipeline gets the
    /// link's up event first, stamped with that notification's receive time, never a
    /// notification after a down event or before any up event; and none is dropped. Both the
    /// first connection and the reconnect after a drop.
    @Test func notificationAheadOfTheSubscriptionFollowsTheLinkUp() throws {
        let csc = "C0:DA:E0:00:00:23"
        let mock = try MockBlueZ(sensors: [.init(address: csc, kind: "csc", hz: 10)])
        try mock.setFault(csc, "notify_before_reply", 2)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-svc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = BlueZDeviceService.Settings(stateDirectory: directory, busAddress: mock.bus.address)
        let events = ResultList<SensorEvent>()
        let service = BlueZDeviceService(settings: settings, logger: Logger(level: .warning, sink: .stderr)) { events.append($0) }
        service.start()
        defer { service.stop() }
        try eventually("ready") { service.degraded == nil }
        let done = ResultBox<DeviceError?>()
        service.connect(csc) { done.set($0) }
        try eventually("connected") { done.get() != nil }
        #expect(done.get()! == nil)
        func ups() -> Int { events.items.filter { if case .linkUp = $0 { true } else { false } }.count }
        func notifications() -> [SensorEvent] { events.items.filter { if case .notification = $0 { true } else { false } } }
        try eventually("streaming") { notifications().count >= 3 }
        try mock.call("Drop", [.string(csc), .string("org.bluez.Reason.Timeout")])
        try eventually("up again and streaming") { ups() == 2 && notifications().count >= 10 }
        try mock.call("SetStreaming", [.boolean(false)])
        let sent = try mock.sent(csc)
        try eventually("everything sent delivered") { notifications().count == sent }

        let items = events.items
        var up = false
        for (i, event) in items.enumerated() {
            switch event {
            case .linkUp(_, _, let time):
                up = true
                // Each connection's first notification came before its StartNotify reply, so it
                // brought the link up, at its own receive time.
                guard i + 1 < items.count, case .notification(_, .cscMeasurement, _, let first) = items[i + 1] else {
                    Issue.record("up event #\(i) not followed by the notification that raised it")
                    continue
                }
                #expect(time == first)
            case .linkDown: up = false
            case .notification: #expect(up, "notification #\(i) outside an up link: \(items.map(Self.name))")
            case .read: break
            }
        }
        #expect(items.map(Self.name).filter { $0 != "notification" && $0 != "read" } == ["up", "down", "up"])
        // Wheel revolutions are the mock's sequence number: each one once, in order.
        let revolutions = notifications().compactMap { e -> UInt32? in
            guard case .notification(_, .cscMeasurement, let v, _) = e, v.count >= 5 else { return nil }
            return UInt32(v[1]) | UInt32(v[2]) << 8 | UInt32(v[3]) << 16 | UInt32(v[4]) << 24
        }
        #expect(revolutions == (0..<UInt32(sent)).map { $0 })
    }

    static func name(_ event: SensorEvent) -> String {
        switch event {
        case .linkUp: "up"
        case .linkDown: "down"
        case .notification: "notification"
        case .read: "read"
        }
    }

    /// `strapctl scan --until` cancels on the first report (a cached sensor: before BlueZ
    /// has answered anything), and the next scan may begin at once. The ended scan sends no
    /// StartDiscovery, the new one starts once its stop is through, and discovery ends
    /// stopped when the new one is stopped too.
    @Test func scanCancelledAtOnceThenAnotherEndsWithDiscoveryStopped() throws {
        let hr = "C0:DA:E0:00:00:22"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-svc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = BlueZDeviceService.Settings(stateDirectory: directory, busAddress: mock.bus.address)
        let service = BlueZDeviceService(settings: settings, logger: Logger(level: .warning, sink: .stderr)) { _ in }
        service.start()
        defer { service.stop() }
        try eventually("ready") { service.degraded == nil }
        func discoveryCalls() -> [String] {
            ((try? mock.events()) ?? []).compactMap { $0.first as? String }.filter { $0.contains("Discovery") }
        }

        let first = ResultBox<DeviceError?>(), second = ResultBox<DeviceError?>()
        let found = ResultList<String>()
        // One turn of the bus queue for all three: no BlueZ reply is handled in between.
        let handle = service.queue.sync {
            service.scan(timeout: 600, found: { found.append($0.address) }, finished: { first.set($0) }).stop()
            return service.scan(timeout: 600, found: { _ in }, finished: { second.set($0) })
        }
        try eventually("first scan finished") { first.get() != nil }
        #expect(first.get()! == nil)
        #expect(found.items == [hr])
        try eventually("second scan discovering") { discoveryCalls().count == 3 }
        #expect(discoveryCalls() == ["SetDiscoveryFilter", "SetDiscoveryFilter", "StartDiscovery"])
        #expect(try mock.stats()["discovering"] as? Bool == true)

        handle.stop()
        try eventually("second scan finished") { second.get() != nil }
        try eventually("StopDiscovery sent") { discoveryCalls().count == 4 }
        #expect(discoveryCalls().last == "StopDiscovery")
        #expect(try mock.stats()["discovering"] as? Bool == false)
    }
}
