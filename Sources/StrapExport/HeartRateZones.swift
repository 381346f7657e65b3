import StrapModel

/// Time spent in heart-rate zones: zone i spans `boundaries[i] ..< boundaries[i + 1]` bpm (the
/// last boundary may be infinite) and holds `seconds[i]`.
public struct HeartRateZones: Sendable, Equatable, Codable {
    public let boundaries: [Double]
    public let seconds: [Double]

    public init(boundaries: [Double], seconds: [Double]) throws(ChartError) {
        guard boundaries.count >= 2 else { throw .invalidZones("need at least two boundaries, got \(boundaries.count)") }
        guard seconds.count == boundaries.count - 1 else {
            throw .invalidZones("\(boundaries.count) boundaries make \(boundaries.count - 1) zones, got \(seconds.count) times")
        }
        for i in 1..<boundaries.count where !(boundaries[i] > boundaries[i - 1]) {
            throw .invalidZones("boundaries must increase (\(boundaries[i - 1]) then \(boundaries[i]))")
        }
        guard boundaries.dropLast().allSatisfy(\.isFinite), seconds.allSatisfy({ $0 >= 0 && $0.isFinite }) else {
            throw .invalidZones("boundaries must be finite (but the last) and times non-negative")
        }
        self.boundaries = boundaries
        self.seconds = seconds
    }

    /// "<114" for a first zone from 0, "≥172" for an open last zone, else "114-133".
    var labels: [String] {
        (0..<seconds.count).map { i in
            let lower = Int(boundaries[i].rounded()), upper = boundaries[i + 1]
            if i == 0 && lower == 0 && upper.isFinite { return "<\(Int(upper.rounded()))" }
            if !upper.isFinite { return ">=\(lower)" }
            return "\(lower)-\(Int(upper.rounded()))"
        }
    }

    /// Seconds per zone over a workout, from the export's per-second timeline (docs/export.md
    /// "Resampling"): every second with the timer running and a heart-rate value counts once,
    /// in the zone of that value. Values outside every zone count nowhere.
    public static func timeInZones(boundaries: [Double], workout: Workout, samples: SampleSource,
                                   holdSeconds: Int = 5) throws(ExportError) -> HeartRateZones {
        let schedule = try ExportSchedule(workout)
        var timeline = ExportTimeline(schedule: schedule, workout: workout, samples: samples.makeIterator(),
                                      holdSeconds: holdSeconds)
        var seconds = [Double](repeating: 0, count: max(0, boundaries.count - 1))
        while try timeline.advance() {
            let s = timeline.current
            guard !s.paused, let hr = s.value(.heartRate) else { continue }
            for i in seconds.indices where hr >= boundaries[i] && hr < boundaries[i + 1] {
                seconds[i] += 1
                break
            }
        }
        do {
            return try HeartRateZones(boundaries: boundaries, seconds: seconds)
        } catch {
            throw .invalidOptions(error.description)
        }
    }
}
