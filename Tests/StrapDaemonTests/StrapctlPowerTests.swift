import Foundation
@testable import StrapControl
import StrapExport
import StrapModel
import StrapWire
import Testing
import ThirdPartyReaders
@testable import StrapDaemon

/// A ride with power through the daemon: the FTP set with `strapctl profile set`, power samples
/// appended to the store directly (the power meter's ingest is another piece of work), the
/// workout ended through the socket; its saved summary, `workout show` and its FIT export carry
/// the power figures `PowerAnalysis` gives for the ride's seconds.
@Suite struct StrapctlPowerTests {
    typealias Clock = WorkoutProtocolTests.TestClock

    func strapctl(_ h: RouterHarness, _ args: String...) -> CommandOutput {
        Strapctl.run(["--socket", h.socketPath] + args)
    }

    /// 90 s at 150 W, then 30 s at 330 W with a 1 Hz meter half a second into each second.
    static func watts(_ i: Int) -> Double { i < 90 ? 150 : 330 }

    @Test func theSavedWorkoutShowAndFITCarryThePowerFigures() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let meter = h.identities[0].address
        #expect(strapctl(h, "profile", "set", "ftp=200").exitCode == 0)
        #expect(strapctl(h, "workout", "start", "--activity", "cycling", "--device", meter).exitCode == 0)
        let device = Device(id: meter, address: meter, name: "meter")
        try h.store.append((0..<120).map { i in
            Sample(type: .cyclingPower, value: Self.watts(i), start: WorkoutProtocolTests.origin + Millis(i) * 1000 + 500, device: device)
        })
        clock.set(seconds: 120)
        let end = strapctl(h, "workout", "end")
        #expect(end.exitCode == 0, "\(end.stderr)")

        let ride = PowerAnalysis(watts: (0..<120).map(Self.watts))
        let zones = try PowerZones(functionalThresholdPower: 200)
        let saved = try h.client().call(#"{"id":2,"op":"samples.anchored","types":["workout"]}"#).result.objects("added")
        let workout = try #require(saved.first)
        let summary = try #require(workout.object("summary"))
        #expect(summary.number("functionalThresholdPower") == 200)
        #expect(summary.number("powerNormalized") == ride.normalizedPower && summary.number("powerAverage") == ride.averagePower)
        #expect(summary.number("powerTrainingStressScore") == ride.trainingStressScore(zones))
        #expect(summary.number("timeInPowerZone7") == 30 && summary.number("powerBest60s") == ride.meanMaximalPower()[60])

        let uuid = try #require(workout.string("uuid"))
        let shown = strapctl(h, "workout", "show", uuid, "--chart", "none").stdout
        let np = Int(ride.normalizedPower!.rounded()), tss = Int(ride.trainingStressScore(zones)!.rounded())
        #expect(shown.contains("\n  power       avg 195 W, max 330 W, NP \(np) W, work 23 kJ\n"), "\(shown)")
        #expect(shown.contains("\n              FTP 200 W: IF \(TextFormat.fixed(ride.intensityFactor(zones)!, 2)), TSS \(tss)\n"), "\(shown)")
        #expect(shown.contains("\n              P1 0:00 · P2 1:30 · P3 0:00 · P4 0:00 · P5 0:00 · P6 0:00 · P7 0:30\n"), "\(shown)")
        #expect(shown.contains("\n  best power  5 s 330 W · 1 min \(Int(ride.meanMaximalPower()[60]!.rounded())) W\n"), "\(shown)")

        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ride.fit").path
        #expect(strapctl(h, "workout", "export", uuid, "-o", path).exitCode == 0)
        try ThirdPartyReaders.verifyFIT(URL(fileURLWithPath: path), expect: ["session": [
            "timer": 120.0, "avg_power": 195, "max_power": 330, "np": np, "ftp": 200, "tss": ride.trainingStressScore(zones)!,
            "if": ride.intensityFactor(zones)!, "work": Int((ride.work * 1000).rounded()),
        ]])
    }
}
