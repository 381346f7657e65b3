import Foundation
import MockBlueZSupport
import StrapControl
import StrapBlueZ
import StrapDBus
import StrapWire
import StrapIngest
import StrapSystem
import Glibc
import Synchronization
import Testing
@testable import StrapDaemon

/// strapd without `--simulate`, against the MOCK bluetoothd (Tests/Fixtures/mockbluez on a
/// private dbus-daemon), not real BlueZ or radios: everything through the real socket.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct DaemonBlueZTests {
    /// Scan, pair, connect, stream into the store, a drop and reconnect seen live and in the
    /// data with nothing lost, remembered across a restart and reconnected, then reset
    /// energy, disconnect and forget.
    @Test func recordsARealSensorThroughItsWholeLife() throws {
        let hr = "C0:DA:E0:00:00:01"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr", hz: 5)], known: false)
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)

        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        let status = h.strapctl("status")
        #expect(status.exitCode == 0 && status.stdout.contains("(bluetooth)"))

        // Scan: the sensor is not known to BlueZ until discovery finds it.
        let scan = h.strapctl("scan", "--timeout", "2")
        #expect(scan.exitCode == 0 && scan.stdout.contains(hr) && scan.stdout.contains("Mock HR"), "\(scan.stdout)\(scan.stderr)")

        // Seen but not remembered: listed, not known.
        let seen = try h.info(hr)
        #expect(seen.bool("known") == false && seen.bool("connected") == false && seen.string("rssiUnavailable") == "not connected")

        // Pair through strapd's agent ([bluetooth] pair_agent = yes).
        let pair = h.strapctl("pair", hr)
        #expect(pair.exitCode == 0 && pair.stdout == "paired \(hr)\n", "\(pair.stderr)")
        #expect((try mock.stats()["pair_results"] as? [[String]])?.last == [hr, "paired"])

        let live = try h.client()
        #expect(try live.call(#"{"id":"l","op":"live.subscribe"}"#).isOK)

        // Connect: answered once streaming; remembered in known-devices.json.
        let connect = h.strapctl("connect", hr)
        #expect(connect.exitCode == 0 && connect.stdout == "connected \(hr)\n", "\(connect.stderr)")
        let knownFile = h.stateDirectory + "/known-devices.json"
        #expect(try String(contentsOfFile: knownFile, encoding: .utf8).contains(hr))
        _ = try live.read { $0.event == "link" && $0.data.bool("up") == true }

        // Notifications are decoded from the mock's bytes and stored.
        try eventually("HR samples stored") { ((try? h.stored("heartRate")) ?? []).count >= 8 }

        // RSSI: present, or absent with a reason (this kernel has no AF_BLUETOOTH).
        try eventually("RSSI measured") {
            let info = (try? h.info(hr)) ?? [:]
            return info.int("rssi") != nil || (info.string("rssiUnavailable").map { $0 != "not measured yet" } ?? false)
        }
        let info = try h.info(hr)
        #expect(info.bool("known") == true && info.bool("connected") == true && info.bool("paired") == true)
        #expect(info.int("battery") == 87)
        let infoText = h.strapctl("info", hr)
        #expect(infoText.stdout.contains("rssi") && infoText.stdout.contains("known:"), "\(infoText.stdout)")

        // The link drops with BlueZ's reason and comes back by itself.
        try mock.call("Drop", [.string(hr), .string("org.bluez.Reason.Timeout")])
        let down = try live.read { $0.event == "link" && $0.data.bool("up") == false }.match.data
        #expect(down.string("reason")?.hasPrefix("org.bluez.Reason.Timeout") == true)
        let up = try live.read { $0.event == "link" && $0.data.bool("up") == true }.match.data
        let downTime = try #require(down.string("time")), upTime = try #require(up.string("time"))
        try eventually("streaming again") { ((try? h.stored("heartRate")) ?? []).contains { ($0.string("start") ?? "") > upTime } }

        // Quiesce, then every notification the mock sent is stored once, in order, and none
        // while the link was down: the drop is a gap in the data, not a loss.
        try mock.call("SetStreaming", [.boolean(false)])
        try eventually("everything sent is stored") { (try? h.stored("heartRate").count) == (try? mock.sent(hr)) }
        var samples = try h.stored("heartRate")
        #expect(Self.consecutive(mockSequence(samples)))
        #expect(samples.contains { ($0.string("start") ?? "") <= downTime })
        #expect(!samples.contains { ($0.string("start") ?? "") > downTime && ($0.string("start") ?? "") < upTime })
        #expect(try h.info(hr).string("lastDisconnectReason")?.hasPrefix("org.bluez.Reason.Timeout") == true)

        // Restart: the known device is reconnected without being asked.
        let before = samples.count
        try h.restart()
        try mock.call("SetStreaming", [.boolean(true)])
        try eventually("reconnected after restart") { ((try? h.stored("heartRate")) ?? []).count >= before + 5 }
        try mock.call("SetStreaming", [.boolean(false)])
        try eventually("everything sent is stored after restart") { (try? h.stored("heartRate").count) == (try? mock.sent(hr)) }
        samples = try h.stored("heartRate")
        #expect(Self.consecutive(mockSequence(samples)))
        #expect(try h.info(hr).bool("known") == true)

        // Energy reset writes 0x01 to the control point.
        let reset = h.strapctl("reset-energy", hr)
        #expect(reset.exitCode == 0, "\(reset.stderr)")
        #expect(try mock.events().contains { ($0.first as? String) == "WriteValue" && ($0[2] as? String) == "2a39" })

        // Disconnect: stays known, not auto-connected (also saved for the next start).
        let disconnect = h.strapctl("disconnect", hr)
        #expect(disconnect.exitCode == 0, "\(disconnect.stderr)")
        try eventually("disconnected") { (try? h.info(hr).bool("connected")) == false }
        #expect(try h.info(hr).bool("known") == true)
        #expect(try String(contentsOfFile: knownFile, encoding: .utf8).contains(#""autoConnect" : false"#))

        // Forget: removed from BlueZ and from the file.
        let forget = h.strapctl("forget", hr)
        #expect(forget.exitCode == 0, "\(forget.stderr)")
        #expect(try mock.events().contains { ($0.first as? String) == "RemoveDevice" })
        #expect(try !String(contentsOfFile: knownFile, encoding: .utf8).contains(hr))
        // Gone from BlueZ: not shown any more (notFound), or shown unknown if it advertises again.
        #expect((try? h.info(hr).bool("known")) != true)
    }

    /// Without bluetoothd the daemon starts, says why it is degraded, answers device
    /// operations with `unavailable`, and recovers when bluetoothd appears.
    @Test func startsDegradedWithoutBluetoothdAndRecovers() throws {
        let hr = "C0:DA:E0:00:00:02"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")], start: false)
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)
        try eventually("degraded") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result.string("degraded"))?.hasPrefix("bluetooth: bluetoothd is not running") == true
        }
        let connect = h.strapctl("connect", hr)
        #expect(connect.exitCode == ExitCode.daemonError && connect.stderr.contains("unavailable"), "\(connect.stderr)")
        let live = try h.client()
        #expect(try live.call(#"{"id":"l","op":"live.subscribe"}"#).isOK)
        try mock.launch()
        try eventually("ready once bluetoothd is there") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        #expect(h.strapctl("connect", hr).exitCode == 0)
        // The first link-quality reading goes live: a value, or why there is none.
        let quality = try live.read { $0.event == "device" && $0.data.string("change") == "rssi" }.match.data
        #expect(quality.string("address") == hr)
        #expect(quality.int("rssi") != nil || quality.string("rssiUnavailable")?.isEmpty == false)
    }

    /// `strapctl scan --until ADDR` ends as soon as discovery finds ADDR, and its cancel
    /// reaches BlueZ: the adapter stops discovering (StopDiscovery), not 60 s later.
    @Test func scanUntilStopsDiscoveryOnceTheSensorIsFound() throws {
        let hr = "C0:DA:E0:00:00:08"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")], known: false)
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        // The mock's Discovering follows a running scan (so the last check below can fail).
        let plainScanDone = DispatchSemaphore(value: 0)
        Thread { _ = h.strapctl("scan", "--timeout", "2"); plainScanDone.signal() }.start()
        try eventually(timeout: 10, "discovering") { (try? mock.stats()["discovering"] as? Bool) == true }
        plainScanDone.wait()

        let scan = h.strapctl("scan", "--until", hr, "--timeout", "60")
        #expect(scan.exitCode == 0 && scan.stdout.hasSuffix("\(hr) found\n"), "\(scan.stdout)\(scan.stderr)")
        try eventually(timeout: 10, "discovery stopped") { (try? mock.stats()["discovering"] as? Bool) == false }
    }

    /// `[bluetooth] adapter` names an adapter that isn't there: degraded, sensors left alone.
    @Test func configuredAdapterMissingIsDegraded() throws {
        let hr = "C0:DA:E0:00:00:07"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, config: "adapter = hci1")
        try eventually("degraded") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result.string("degraded")) == "bluetooth: no Bluetooth adapter"
        }
        let connect = h.strapctl("connect", hr)
        #expect(connect.exitCode == ExitCode.daemonError && connect.stderr.contains("no Bluetooth adapter"), "\(connect.stderr)")
        #expect(try mock.events().filter { ($0.first as? String) == "Connect" }.isEmpty)
    }

    /// No D-Bus at all: still starts, degraded, and never crashes on device operations.
    @Test func startsWithoutASystemBus() throws {
        let h = try BlueZDaemonHarness(busAddress: "unix:path=/nonexistent/strapd-test-bus")
        let status = try h.client().call(#"{"id":1,"op":"status"}"#).result
        #expect(status.string("degraded")?.hasPrefix("bluetooth: no system D-Bus") == true)
        let scan = h.strapctl("scan", "--timeout", "1")
        #expect(scan.exitCode == ExitCode.daemonError && scan.stderr.contains("unavailable"), "\(scan.stderr)")
    }

    /// Three sensors at once, one kind each, with per-device settings: `[device.ADDR]
    /// notify_mode = acquire` (AcquireNotify fd) and `name`; all three measurement
    /// characteristics reach the store through the 128-bit UUID mapping.
    @Test func severalSensorsWithPerDeviceSettings() throws {
        let (hr, csc, rsc) = ("C0:DA:E0:00:00:11", "C0:DA:E0:00:00:12", "C0:DA:E0:00:00:13")
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr", hz: 5), .init(address: csc, kind: "csc", hz: 5),
                                           .init(address: rsc, kind: "rsc", hz: 5)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, config: """
            [device.\(csc.lowercased())]
            notify_mode = acquire
            name = Bike
            """, startNow: false)
        let entries = [hr, csc, rsc].map { #"{"address":"\#($0)","autoConnect":true}"# }.joined(separator: ",")
        try #"{"version":1,"devices":[\#(entries)]}"#.write(toFile: h.stateDirectory + "/known-devices.json", atomically: true, encoding: .utf8)
        try h.start()
        for type in ["heartRate", "cyclingSpeed", "runningSpeed"] {
            try eventually("\(type) stored") { ((try? h.stored(type)) ?? []).count >= 3 }
        }
        #expect(try mock.acquireCalls(csc) >= 1)
        #expect(try mock.acquireCalls(hr) == 0 && mock.startNotifyCalls(hr) >= 1)
        #expect(try h.info(csc).string("name") == "Bike")
        let devices = h.strapctl("devices")
        #expect(devices.exitCode == 0 && [hr, csc, rsc].allSatisfy { devices.stdout.contains($0) } && devices.stdout.contains("Bike"))
        let status = try h.client().call(#"{"id":1,"op":"status"}"#).result
        #expect(status.int("knownSensors") == 3)
    }

    /// Without `[bluetooth] pair_agent`, pairing relies on another agent; BlueZ (≥ 5.72, and
    /// the mock) refuses it without one, and the error says what to do.
    @Test func pairingWithoutAgentExplainsTheSetting() throws {
        let hr = "C0:DA:E0:00:00:06"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, pairAgent: false)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        let pair = h.strapctl("pair", hr)
        #expect(pair.exitCode == ExitCode.daemonError)
        #expect(pair.stderr.contains("org.bluez.Error.AuthenticationFailed") && pair.stderr.contains("pair_agent = yes"), "\(pair.stderr)")
        let missing = h.strapctl("pair", "C0:DA:E0:00:00:FF")
        #expect(missing.exitCode == ExitCode.daemonError && missing.stderr.contains("notFound"), "\(missing.stderr)")
    }

    /// Issue 14 item 5: a bluetoothd that stops answering `Pair` is named in strapd's log
    /// (which call, on which object) within seconds, and strapctl says what it waits for.
    @Test func aPairBlueZLeavesUnansweredIsNamedInTheLogAndByStrapctl() throws {
        let hr = "C0:DA:E0:00:00:07"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        let lines = Mutex<[String]>([])
        let chained = Mutex<BusLog.Handler?>(nil)
        let (previous, minimum) = BusLog.install(minimum: .info) { level, text, metadata in
            if text.contains("dev_C0_DA_E0_00_00_07") { lines.withLock { $0.append(text) } }
            chained.withLock { $0 }?(level, text, metadata)
        }
        chained.withLock { $0 = previous }
        defer { BusLog.install(minimum: minimum, previous) }
        try mock.setFault(hr, "stall_pair", 7)
        let pair = h.strapctl("pair", hr)
        #expect(pair.exitCode == 0, "\(pair.stderr)")
        #expect(pair.stderr.contains("still waiting for strapd to pair \(hr)"), "\(pair.stderr)")
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("Device1.Pair on /org/bluez/hci0/dev_C0_DA_E0_00_00_07 unanswered for") }, "\(logged)")
        #expect(logged.contains { $0.contains("Device1.Pair on /org/bluez/hci0/dev_C0_DA_E0_00_00_07 answered after") }, "\(logged)")
    }

    /// The system bus itself going away is a degraded state with the reason, not a crash;
    /// the streaming sensor's link goes down with that reason.
    @Test func lostBusIsDegradedNotACrash() throws {
        let hr = "C0:DA:E0:00:00:05"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr", hz: 5)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        #expect(h.strapctl("connect", hr).exitCode == 0)
        let live = try h.client()
        #expect(try live.call(#"{"id":"l","op":"live.subscribe","types":["heartRate"]}"#).isOK)
        mock.bus.kill()
        let down = try live.read { $0.event == "link" && $0.data.bool("up") == false }.match.data
        #expect(down.string("reason") == "system D-Bus connection lost")
        try eventually("degraded") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result.string("degraded"))?.hasPrefix("bluetooth: no system D-Bus") == true
        }
        #expect(try h.info(hr).string("lastDisconnectReason") == "system D-Bus connection lost")
    }

    /// A corrupt known-devices file is kept aside and reported; the daemon still starts and
    /// the next save writes a fresh file.
    @Test func corruptKnownDevicesFileIsSetAside() throws {
        let hr = "C0:DA:E0:00:00:03"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr")])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, startNow: false)
        let file = h.stateDirectory + "/known-devices.json"
        try "{\"version\":1,\"devices\":[{\"addr".write(toFile: file, atomically: true, encoding: .utf8)
        try h.start()
        #expect(FileManager.default.fileExists(atPath: file + ".corrupt"))
        #expect(try h.client().call(#"{"id":1,"op":"status"}"#).isOK)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        #expect(h.strapctl("connect", hr).exitCode == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains(hr))
    }

    /// A device remembered in the file but unknown to BlueZ (cache cleared, new adapter) is
    /// rediscovered and connected at start, without any request; a user's scan that ends
    /// meanwhile does not stop that.
    @Test func knownDeviceMissingFromBlueZIsRediscoveredAtStart() throws {
        let csc = "C0:DA:E0:00:00:04"
        let mock = try MockBlueZ(sensors: [.init(address: csc, kind: "csc", hz: 5)], known: false)
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address, startNow: false)
        try #"{"version":1,"devices":[{"address":"\#(csc.lowercased())","autoConnect":true}]}"#
            .write(toFile: h.stateDirectory + "/known-devices.json", atomically: true, encoding: .utf8)
        try h.start()
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        let scan = h.strapctl("scan", "--timeout", "1")
        #expect(scan.exitCode == 0 && scan.stdout.contains(csc), "\(scan.stdout)\(scan.stderr)")
        try eventually("cycling samples stored") { ((try? h.stored("cyclingCadence")) ?? []).count + ((try? h.stored("cyclingSpeed")) ?? []).count >= 3 }
        let info = try h.info(csc)
        #expect(info.bool("known") == true && info.bool("connected") == true)
    }

    /// The first notification of each connection comes ahead of the StartNotify reply
    /// (bluetoothd forwards what arrives before the CCC write response): the pipeline hears of
    /// the new connection first, so no speed, cadence or distance is derived across a drop.
    @Test func noCyclingDeltaAcrossAReconnect() throws {
        let csc = "C0:DA:E0:00:00:0A"
        let mock = try MockBlueZ(sensors: [.init(address: csc, kind: "csc", hz: 10)])
        try mock.setFault(csc, "notify_before_reply", 2)
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        let live = try h.client()
        #expect(try live.call(#"{"id":"l","op":"live.subscribe","types":["cyclingSpeed"]}"#).isOK)
        #expect(h.strapctl("connect", csc).exitCode == 0)
        _ = try live.read { $0.event == "link" && $0.data.bool("up") == true }
        try eventually("distance stored") { ((try? h.stored("cyclingDistance")) ?? []).count >= 3 }
        try mock.call("Drop", [.string(csc), .string("org.bluez.Reason.Timeout")])
        let downTime = try #require(try live.read { $0.event == "link" && $0.data.bool("up") == false }.match.data.string("time"))
        let upTime = try #require(try live.read { $0.event == "link" && $0.data.bool("up") == true }.match.data.string("time"))
        try eventually("distance after the reconnect") {
            ((try? h.stored("cyclingDistance")) ?? []).filter { ($0.string("start") ?? "") >= upTime }.count >= 3
        }
        try mock.call("SetStreaming", [.boolean(false)])
        let distances = try h.stored("cyclingDistance")
        #expect(distances.allSatisfy { ($0.string("end") ?? "") <= downTime || ($0.string("start") ?? "") >= upTime },
                "a distance spans the drop (\(downTime) – \(upTime))")
        for type in ["cyclingSpeed", "cyclingCadence"] {
            // Strictly before the up event: the one right after the early notification may share its millisecond.
            let across = try h.stored(type).filter { ($0.string("start") ?? "") > downTime && ($0.string("start") ?? "") < upTime }
            #expect(across.isEmpty, "\(type) derived across the drop: \(across)")
        }
        // The device was first heard of through its up event, which carries the name.
        let names = Set(distances.map { sample -> String? in
            guard case .object(let device)? = sample["device"] else { return nil }
            return device.string("name")
        })
        #expect(names == ["Mock CSC"])
    }

    /// Battery Level with the notify flag is subscribed: a new level reaches the device and
    /// the store at once, while BlueZ's Battery1 (the mock leaves it alone) still says 87.
    @Test func batteryLevelNotificationsReachTheDeviceAndTheStore() throws {
        let hr = "C0:DA:E0:00:00:09"
        let mock = try MockBlueZ(sensors: [.init(address: hr, kind: "hr", hz: 5)])
        let h = try BlueZDaemonHarness(busAddress: mock.bus.address)
        try eventually("bluetooth ready") {
            (try? h.client().call(#"{"id":1,"op":"status"}"#).result["degraded"]) == .null
        }
        #expect(h.strapctl("connect", hr).exitCode == 0)
        try eventually("battery read on connect and notifications on") {
            (try? h.info(hr).int("battery")) == 87 && (try? mock.batteryStartNotifyCalls(hr)) == 1
        }
        let live = try h.client()
        #expect(try live.call(#"{"id":"l","op":"live.subscribe","types":["batteryLevel"]}"#).isOK)
        try mock.setBattery(hr, 64)
        let change = try live.read { $0.event == "device" && $0.data.string("change") == "battery" }.match.data
        #expect(change.int("battery") == 64 && change.string("address") == hr)
        try eventually("battery sample stored") { ((try? h.stored("batteryLevel")) ?? []).contains { $0.number("value") == 64 } }
        #expect(try h.stored("batteryLevel").compactMap { $0.number("value") } == [87, 64])
        #expect(try h.info(hr).int("battery") == 64)
    }

    /// Each value is the previous + 1 (mod 120, the mock's bpm cycle): none lost or repeated.
    static func consecutive(_ seq: [Int]) -> Bool {
        !seq.isEmpty && zip(seq, seq.dropFirst()).allSatisfy { ($0.1 - $0.0 + 120) % 120 == 1 }
    }
}
