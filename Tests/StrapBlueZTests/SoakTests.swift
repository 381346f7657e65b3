import Foundation
import StrapBlueZ
import StrapDBus
import MockBlueZSupport
import Testing

/// Ten mock sensors notifying at 4 Hz each: every notification arrives exactly once and in
/// order per characteristic. STRAPD_SOAK_SECONDS overrides the 60 s default.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct SoakTests {
    static var seconds: Double {
        ProcessInfo.processInfo.environment["STRAPD_SOAK_SECONDS"].flatMap(Double.init) ?? 60
    }

    @Test func tenSensorsAtFourHertz() throws {
        let kinds = ["hr", "csc", "rsc"]
        let sensors = (1...10).map { i in
            MockBlueZ.SensorSpec(address: String(format: "C0:50:AC:00:00:%02X", i), kind: kinds[i % 3], hz: 4)
        }
        let mock = try MockBlueZ(sensors: sensors)
        let daemon = try Daemon(address: mock.bus.address)
        var options = Daemon.fast
        options.readOnConnect = false
        for s in sensors { daemon.add(s.address, options) }
        try eventually("all ten streaming") { sensors.allSatisfy { daemon.phase($0.address) == .streaming } }
        Thread.sleep(forTimeInterval: Self.seconds)
        try mock.call("SetStreaming", [.boolean(false)])
        var total = 0
        for s in sensors {
            let sent = try mock.sent(s.address)
            try eventually(timeout: 10, "all of \(s.address)'s \(sent) notifications") {
                Set(daemon.sink.sequence(s.address)).count >= sent
            }
            let check = DeliveryCheck(sequence: daemon.sink.sequence(s.address), sent: sent)
            #expect(check.lost == 0 && check.duplicated == 0 && check.outOfOrder == 0, "\(s.address) (\(s.kind)): \(check)")
            // No rate assertion: the mock's timer runs on a shared machine (no wall-clock checks).
            #expect(sent > 0, "\(s.address) sent nothing")
            total += check.received
        }
        print("SOAK | 10 sensors × 4 Hz × \(Self.seconds) s | \(total) notifications, each exactly once and in order")
    }
}
