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
/// sd_bus_open_system reads it from the process environment, which no test may change
/// (docs/testing.md, "The environment"): `strap-env-probe` opens the bus in a child whose
/// environment names the mock's bus. The daemon tests, in-process, pass the address through
/// `DaemonOptions.systemBusAddress` instead.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct SystemBusAddressTests {
    @Test func systemBusHonoursEnvironment() throws {
        let mock = try MockBlueZ(sensors: [])
        let exe = try #require(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let probe = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("strap-env-probe")
        try #require(FileManager.default.isExecutableFile(atPath: probe.path), "build strap-env-probe first (swift build --build-tests)")
        let child = Process()
        child.executableURL = probe
        child.arguments = ["system-bus"]
        // Explicit, plus the run's sanitizer settings (the ASan run turns leak detection off,
        // and sd-bus's allocations are still held at exit).
        var environment = ["PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": mock.bus.address]
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "SWIFT_BACKTRACE"] { environment[name] = ProcessInfo.processInfo.environment[name] }
        child.environment = environment
        let out = Pipe()
        child.standardOutput = out
        try child.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0, "\(text)")
        // The owner of org.bluez on the mock's bus: a unique name.
        #expect(text.hasPrefix("owner :"), "\(text)")
    }
}
