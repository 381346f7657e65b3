import Foundation
import StrapExport
import StrapModel

/// `workouts/power` (issue 35): the time a saved workout's power figures take (average,
/// maximum, NP, IF, TSS, work, time in zones, the mean-maximal curve 5 s … 60 min, for the
/// session and each lap) from 4 h of a power meter's 1 Hz readings: `WorkoutPower.figures`,
/// what `WorkoutSamples.addPower` runs when a workout is saved, minus the store read. The
/// part that is `PowerAnalysis` alone (one 14 400-second series to a `PowerSummary`) is timed
/// too, so the resampling's share can be told apart.
enum WorkoutPowerFigures {
    static let seconds = 14_400
    static let ftp = 250.0
    static let meter = Device(id: "AA:00:00:00:00:35", address: "AA:00:00:00:00:35", name: "Crank")

    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        let (workout, samples) = ride()
        let watts = samples.map(\.value)
        let zones = try PowerZones(functionalThresholdPower: ftp)
        let runs = quick ? 5 : 31
        print("  power: a 4 h ride, \(samples.count) power samples at 1 Hz (mean \(String(format: "%.0f", watts.reduce(0, +) / Double(watts.count))) W, "
              + "\(watts.filter { $0 == 0 }.count) s at 0 W), 4 laps of 1 h, FTP \(Int(ftp)) W; median of \(runs) runs after one warm-up")

        guard let reference = try WorkoutPower.figures(workout, samples: samples) else {
            throw BenchFailure("workouts/power: the ride gave no power figures")
        }
        var full: [Double] = []
        for _ in 0..<runs {
            let t0 = DecodeBench.now()
            let f = try WorkoutPower.figures(workout, samples: samples)
            full.append(DecodeBench.now() - t0)
            // The figures stay the same run after run (and keep the call from being dropped).
            if f?.session != reference.session { throw BenchFailure("workouts/power: figures differ between runs") }
        }

        var analysis: [Double] = [], curve: [Double] = []
        for _ in 0..<runs {
            let t0 = DecodeBench.now()
            let summary = PowerSummary(PowerAnalysis(watts: watts), zones: zones)
            analysis.append(DecodeBench.now() - t0)
            if summary?.normalized != reference.session.normalized {
                throw BenchFailure("workouts/power: PowerAnalysis alone gives another NP than WorkoutPower")
            }
            let a = PowerAnalysis(watts: watts)
            let t1 = DecodeBench.now()
            let best = a.meanMaximalPower()
            curve.append(DecodeBench.now() - t1)
            if best != reference.session.meanMaximal { throw BenchFailure("workouts/power: the curve differs") }
        }
        let ms = { (v: [Double]) in String(format: "%.2f ms (%.2f–%.2f)", median(v) * 1e3, v.min()! * 1e3, v.max()! * 1e3) }
        let s = reference.session
        print("  power: WorkoutPower.figures " + ms(full) + "; PowerAnalysis → PowerSummary alone " + ms(analysis)
              + "; of it the mean-maximal curve " + ms(curve))
        print("  power: NP " + String(format: "%.1f W, IF %.3f, TSS %.1f, best 5 s %.0f W, best 60 min %.1f W",
                                      s.normalized, s.intensityFactor ?? 0, s.trainingStressScore ?? 0,
                                      s.meanMaximal[5] ?? 0, s.meanMaximal[3_600] ?? 0))
        return [
            BenchFigure(section: section, name: "power figures over a 4 h ride (WorkoutPower.figures, median)", unit: "ms",
                        ours: median(full) * 1e3, higherIsBetter: false),
            BenchFigure(section: section, name: "power figures over a 4 h ride, PowerAnalysis alone (median)", unit: "ms",
                        ours: median(analysis) * 1e3, higherIsBetter: false),
        ]
    }

    /// Four hours of a road ride as a crank power meter reports it, one reading a second at
    /// .5 s (the resampling's own second): a warm-up, endurance riding with its noise, coasting
    /// on descents and at junctions (0 W), two sets of 4-minute threshold intervals, sprints,
    /// a cool-down. Seeded, so every run measures the same ride.
    static func ride() -> (Workout, [Sample]) {
        var rng = SplitMix(state: 35)
        var watts = [Double](repeating: 0, count: seconds)
        var coasting = 0
        for i in 0..<seconds {
            let minute = Double(i) / 60
            var target: Double
            switch minute {
            case ..<15: target = 120 + 80 * minute / 15
            case 225...: target = 150
            default: target = 205 + 15 * sin(minute / 9)
            }
            // Threshold sets at 60 and 150 min: 5 × (4 min at ~300 W, 3 min easy).
            for setStart in [60.0, 150.0] where minute >= setStart && minute < setStart + 35 {
                target = (minute - setStart).truncatingRemainder(dividingBy: 7) < 4 ? 300 : 140
            }
            // A sprint every 40 minutes: 12 s near 900 W.
            if i % 2_400 >= 1_800 && i % 2_400 < 1_812 { target = 900 }
            if coasting == 0 && target < 400 && rng.unit() < 1.0 / 240 { coasting = 5 + Int(rng.unit() * 40) }
            if coasting > 0 {
                coasting -= 1
                continue
            }
            let noise = (rng.unit() + rng.unit() + rng.unit() - 1.5) * 0.25 * target
            watts[i] = max(0, (target + noise).rounded())
        }
        let start: Millis = 1_796_000_400_000
        let samples = watts.enumerated().map { i, w in
            Sample(type: .cyclingPower, value: w, start: start + Millis(i) * 1_000 + 500, device: meter)
        }
        let laps = (0..<4).map { Workout.Lap(start: start + Millis($0) * 3_600_000, end: start + Millis($0 + 1) * 3_600_000) }
        let workout = Workout(activityType: "cycling", locationType: .outdoor, start: start,
                              end: start + Millis(seconds) * 1_000, deviceIDs: [meter.id], laps: laps,
                              summary: ["functionalThresholdPower": ftp])
        return (workout, samples)
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// Uniform in [0, 1).
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    }
}
