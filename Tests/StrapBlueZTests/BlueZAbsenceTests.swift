import Dispatch
import Foundation
import StrapBlueZ
import StrapDBus
import MockBlueZSupport
import Testing

/// An org.bluez that is not there (yet): the client logs, waits and picks it up later.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct BlueZAbsenceTests {
    static let address = "C0:AB:5E:00:00:01"

    @Test func waitsForBluetoothdThenStreams() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.address, kind: "rsc", hz: 10)], start: false)
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.address)
        Thread.sleep(forTimeInterval: 1)
        #expect(daemon.queue.sync { daemon.client.available } == false)
        #expect(daemon.phase(Self.address) == .waitingForDevice)
        try mock.launch()
        try eventually("streaming once bluetoothd appears") { daemon.sink.count(Self.address) >= 5 }
        #expect(daemon.phase(Self.address) == .streaming)
    }

    @Test func callsWithoutBluetoothdFailWithTypedError() throws {
        let mock = try MockBlueZ(sensors: [], start: false)
        let daemon = try Daemon(address: mock.bus.address)
        let result: Result<Void, BusError> = try onQueue(daemon.queue) { done in
            daemon.client.connect(device: ObjectPath(unchecked: "/org/bluez/hci0/dev_00")) { done($0) }
        }
        guard case .failure(.reply(let reply)) = result else {
            Issue.record("expected an error reply, got \(result)")
            return
        }
        #expect(reply.freedesktop == .serviceUnknown)
    }

    @Test func unknownObjectPathIsATypedError() throws {
        let mock = try MockBlueZ(sensors: [])
        let daemon = try Daemon(address: mock.bus.address)
        try eventually("org.bluez loaded") { daemon.queue.sync { daemon.client.available } }
        let result: Result<Void, BusError> = try onQueue(daemon.queue) { done in
            daemon.client.connect(device: ObjectPath(unchecked: "/org/bluez/hci0/dev_DE_AD")) { done($0) }
        }
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.errorName?.hasPrefix("org.freedesktop.DBus.Error.Unknown") == true, "\(error)")
        #expect(FailureClass(error) == .deviceMissing)
    }
}

/// `Bus.system` finds the bus through DBUS_SYSTEM_BUS_ADDRESS, as the daemon will under test.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason), .serialized)
struct SystemBusAddressTests {
    @Test func systemBusHonoursEnvironment() throws {
        let mock = try MockBlueZ(sensors: [])
        let previous = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", mock.bus.address, 1)
        defer {
            if let previous { setenv("DBUS_SYSTEM_BUS_ADDRESS", previous, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        }
        let queue = DispatchQueue(label: "system-bus-test")
        let bus = try queue.sync { try Bus.system(queue: queue) }
        defer { queue.sync { bus.close() } }
        let owner: Result<[DBusValue], BusError> = try onQueue(queue) { done in
            bus.call(destination: "org.freedesktop.DBus", path: ObjectPath(unchecked: "/org/freedesktop/DBus"),
                     interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string("org.bluez")]) { done($0) }
        }
        #expect(try owner.get().first?.string?.hasPrefix(":") == true)
    }
}
