import Foundation
import StrapBlueZ
import StrapDBus
import StrapGATT
import MockBlueZSupport
import Testing

/// Sensor links against the mock bluetoothd (Tests/Fixtures/mockbluez): a mock, not real
/// BlueZ or radios.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct SensorLinkIntegrationTests {
    static let hr = "C0:11:22:33:44:01"

    @Test func streamsAndReadsDeviceInformation() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr", hz: 10)])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.hr)
        try eventually("20 notifications") { daemon.sink.count(Self.hr) >= 20 }
        try eventually("device information reads") { daemon.sink.reads.count >= 6 }
        #expect(daemon.phase(Self.hr) == .streaming)
        let reads = daemon.sink.reads
        #expect(reads[Self.hr + "/" + GATTCharacteristic.bodySensorLocation.uuidString] == [1])
        #expect(reads[Self.hr + "/" + GATTCharacteristic.batteryLevel.uuidString] == [87])
        #expect(reads[Self.hr + "/" + GATTCharacteristic.manufacturerName.uuidString] == Array("Strap Mock".utf8))
        #expect(daemon.sink.battery[Self.hr] == 87)
        let first = try #require(daemon.sink.notifications.first)
        #expect(first.characteristic == GATTCharacteristic.heartRateMeasurement.uuidString)
        #expect(first.wallNanoseconds > 1_600_000_000 * 1_000_000_000)
        #expect(first.monotonicNanoseconds > 0)
    }

    @Test func notificationSentRightAfterStartNotifyIsDelivered() throws {
        // Streaming off: the only notification is the one the mock sends as soon as
        // StartNotify returns, which needs the handler attached beforehand.
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")], streaming: false)
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.hr)
        try eventually("the immediate notification") { daemon.sink.count(Self.hr) >= 1 }
        try eventually("mock counted it") { (try? mock.sent(Self.hr)) == 1 }
        #expect(daemon.sink.sequence(Self.hr) == [0])
    }

    /// bluetoothd forwards a notification that arrives before the CCC write response, so it
    /// reaches the link ahead of the StartNotify reply: it is data of the new connection and
    /// is delivered while the link still subscribes (the device service relies on this order).
    @Test func notificationAheadOfTheStartNotifyReplyIsDeliveredWhileSubscribing() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")], streaming: false)
        try mock.setFault(Self.hr, "notify_before_reply")
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.hr)
        try eventually("streaming") { daemon.phase(Self.hr) == .streaming }
        try eventually("both notifications") { daemon.sink.count(Self.hr) >= 2 }
        #expect(daemon.sink.sequence(Self.hr) == [0, 1])
        let order = daemon.sink.order(Self.hr).filter { $0 == "notification" || $0 == "subscribing" || $0 == "streaming" }
        #expect(order == ["subscribing", "notification", "streaming", "notification"])
    }

    /// Battery Level (0x2A19) is subscribed where it has the notify flag, so a new level
    /// arrives as a notification while BlueZ's Battery1 still says the old one; where it does
    /// not notify, it is only read on connect.
    @Test func batteryLevelIsSubscribedWhereItNotifies() throws {
        let (notifying, readOnly) = ("C0:11:22:33:44:B1", "C0:11:22:33:44:B2")
        let mock = try MockBlueZ(sensors: [.init(address: notifying, kind: "hr"), .init(address: readOnly, kind: "csc", batteryNotify: false)])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(notifying)
        daemon.add(readOnly)
        let battery = GATTCharacteristic.batteryLevel.uuidString
        try eventually("battery read on connect") {
            daemon.sink.reads[notifying + "/" + battery] == [87] && daemon.sink.reads[readOnly + "/" + battery] == [87]
        }
        try eventually("battery notifications on") { (try? mock.batteryStartNotifyCalls(notifying)) == 1 }
        try mock.setBattery(readOnly, 63)
        try mock.setBattery(notifying, 64)
        try eventually("the new level notified") {
            daemon.sink.notifications.contains { $0.device == notifying && $0.characteristic == battery && $0.value == [64] }
        }
        #expect(daemon.sink.battery[notifying] == 87)
        #expect(try mock.batteryStartNotifyCalls(readOnly) == 0)
        #expect(!daemon.sink.notifications.contains { $0.device == readOnly && $0.characteristic == battery })
        #expect(daemon.phase(notifying) == .streaming && daemon.phase(readOnly) == .streaming)
    }

    @Test func disconnectsAreLoggedWithTheirReason() throws {
        let address = "C0:11:22:33:44:0D"
        let lines = ResultList<String>()
        let chained = ResultBox<BusLog.Handler>()
        let (previous, minimum) = BusLog.install(minimum: .info) { level, text, metadata in
            // The address travels as metadata, not only inside the text.
            if metadata[BusLog.deviceAddressKey] == address { lines.append(text) }
            chained.get()?(level, text, metadata)
        }
        chained.set(previous)
        defer { BusLog.install(minimum: minimum, previous) }
        let mock = try MockBlueZ(sensors: [.init(address: address, kind: "hr", hz: 10)])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(address)
        try eventually("streaming") { daemon.sink.count(address) >= 3 }
        try mock.call("Drop", [.string(address), .string("org.bluez.Reason.Remote")])
        try eventually("reason logged") { lines.items.contains { $0.contains("disconnected: org.bluez.Reason.Remote") } }
        try eventually("streaming again") { daemon.phase(address) == .streaming }
        // Older BlueZ has no Disconnected signal: the Connected=false transition is logged.
        try mock.call("Drop", [.string(address), .string("")])
        try eventually("fallback logged") { lines.items.contains { $0.contains("disconnected: Connected=false (no reason signal)") } }
    }

    @Test func adoptsConnectionMadeByBlueZAutoConnect() throws {
        let address = "C0:11:22:33:44:0A"
        let mock = try MockBlueZ(sensors: [.init(address: address, kind: "csc", hz: 10)])
        // strapd's own connects keep failing, so only BlueZ's auto-connect can bring the link up.
        try mock.setFault(address, "connect_abort", 1000)
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(address)
        try eventually("backing off after a failed connect") {
            if case .backingOff = daemon.phase(address) { return true }
            return false
        }
        try mock.call("AutoConnect", [.string(address)])
        try eventually("streaming on BlueZ's connection") { daemon.sink.count(address) >= 5 }
        #expect(daemon.phase(address) == .streaming)
        // Every Connect strapd made failed (the fault outlasts the test), so the stream runs on
        // the connection BlueZ made.
        #expect(try mock.events().filter { ($0.first as? String) == "Connect" }.count >= 1)
    }

    @Test func forgetDisconnectsAndRemovesTheDevice() throws {
        let address = "C0:11:22:33:44:0F"
        let mock = try MockBlueZ(sensors: [.init(address: address, kind: "rsc", hz: 10)])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(address)
        try eventually("streaming") { daemon.sink.count(address) >= 3 }
        let result: Result<Void, BusError> = try onQueue(daemon.queue) { done in daemon.manager.forget(address: address) { done($0) } }
        #expect(throws: Never.self) { try result.get() }
        #expect(daemon.phase(address) == nil)
        try eventually("device gone from the mirror") { daemon.queue.sync { daemon.client.mirror.devices(address: address).isEmpty } }
        let events = try mock.events().compactMap { $0.first as? String }
        #expect(events.contains("RemoveDevice"))
        #expect(try (mock.stats()["connected"] as? [String: Bool])?[address] == false)
    }

    @Test func energyExpendedResetWritesOneToControlPoint() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.hr)
        try eventually("streaming") { daemon.phase(Self.hr) == .streaming }
        let link = try #require(daemon.queue.sync { daemon.manager.links[Self.hr] })
        let result: Result<Void, BusError> = try onQueue(daemon.queue) { done in link.resetEnergyExpended { done($0) } }
        #expect(throws: Never.self) { try result.get() }
        let writes = try mock.events().filter { ($0.first as? String) == "WriteValue" }
        #expect(writes.count == 1)
        #expect(writes.first?[2] as? String == "2a39")
        #expect(writes.first?[3] as? [Int] == [1])
    }

    @Test func discoveryReportsSensorsAsTheyArrive() throws {
        let csc = "C0:11:22:33:44:02"
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr"), .init(address: csc, kind: "csc")])
        _ = try mock.call("RemoveAdapter")
        _ = try mock.call("AddAdapter")   // adapter without cached devices: only discovery finds them
        let daemon = try Daemon(address: mock.bus.address)
        try eventually("adapter visible") { daemon.queue.sync { daemon.client.mirror.adapters.count == 1 } }
        let found = ResultList<DiscoveredSensor>()
        let session = daemon.queue.sync {
            let s = DiscoverySession(client: daemon.client) { found.append($0) }
            s.start()
            return s
        }
        try eventually("two sensors reported") { Set(found.items.map(\.address)).count == 2 }
        daemon.queue.sync { session.stop() }
        let hr = try #require(found.items.first { $0.address == Self.hr })
        #expect(hr.services == [.heartRate])
        #expect(hr.rssi == -58)
        #expect(hr.name == "Mock HR")
        #expect(found.items.first { $0.address == csc }?.services == [.cyclingSpeedAndCadence])
        let filter = try #require(try mock.stats()["filter"] as? [String: Any])
        #expect(filter["Transport"] as? String == "le")
        #expect(Set(filter["UUIDs"] as? [String] ?? []) == Set(SensorService.discoveryUUIDs))
    }

    @Test func gattProfileApplicationIsRegisteredWithSensorUUIDs() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        try eventually(timeout: 5, "RegisterApplication and GetManagedObjects") {
            let apps = (try? mock.stats()["applications"] as? [[String: Any]]) ?? []
            return (apps.first?["uuids"] as? [String])?.isEmpty == false
        }
        let apps = try #require(try mock.stats()["applications"] as? [[String: Any]])
        #expect(apps.first?["path"] as? String == "/org/strapd/gatt")
        #expect(Set(apps.first?["uuids"] as? [String] ?? []) == Set(SensorService.discoveryUUIDs))
        _ = daemon
    }
}
