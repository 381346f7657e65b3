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
