/// The figures of a ride's power, from one value per second of active time: average, maximum,
/// normalized power, intensity factor, training stress score, work, time in power zones and the
/// mean-maximal power curve. docs/workouts.md ("Power figures") has the definitions.
///
/// The series is what the workout's 1 Hz resampling gives: a second without a reading counts
/// as 0 W (a power meter sends 0 while the pedals stand still, and a gap is coasting more often
/// than not). Values that are not finite, and negative ones (back-pedalling on some meters),
/// count as 0 W.
///
/// Normalized power follows GoldenCheetah's computation (its `coggan_np` metric), the reference
/// desktop tool on Linux: every second's power goes into a 30-second window that starts filled
/// with zeros, the window's mean is raised to the 4th power for every second, and NP is the 4th
/// root of their mean. The zero-filled start lowers NP a little in a ride's first minute; it
/// counts every second, so NP, IF and TSS agree with GoldenCheetah's for the same series.
public struct PowerAnalysis: Sendable {
    /// The rolling window of normalized power, in seconds.
    public static let normalizedPowerWindow = 30
    /// The durations of the mean-maximal curve a workout reports (5 s … 60 min).
    public static let curveDurations = [5, 10, 30, 60, 120, 300, 600, 1_200, 1_800, 3_600]

    /// Watts per second, sanitized (see above).
    public let watts: [Double]
    public let averagePower: Double?
    public let maximumPower: Double?
    public let normalizedPower: Double?
    /// Kilojoules: the sum of the watts over their seconds.
    public let work: Double

    public var seconds: Int { watts.count }

    public init(watts raw: [Double]) {
        let w = raw.map { $0.isFinite && $0 > 0 ? $0 : 0 }
        watts = w
        guard !w.isEmpty else {
            averagePower = nil
            maximumPower = nil
            normalizedPower = nil
            work = 0
            return
        }
        var sum = 0.0, maximum = 0.0
        var window = [Double](repeating: 0, count: Self.normalizedPowerWindow)
        var windowSum = 0.0, fourth = 0.0, slot = 0
        for v in w {
            sum += v
            if v > maximum { maximum = v }
            windowSum += v - window[slot]
            window[slot] = v
            slot = slot == window.count - 1 ? 0 : slot + 1
            // A running sum drifts below 0 by rounding once the window holds only zeros again.
            let mean = max(0, windowSum) / Double(Self.normalizedPowerWindow)
            let squared = mean * mean
            fourth += squared * squared
        }
        averagePower = sum / Double(w.count)
        maximumPower = maximum
        normalizedPower = (fourth / Double(w.count)).squareRoot().squareRoot()
        work = sum / 1_000
    }

    /// Normalized power over FTP.
    public func intensityFactor(_ zones: PowerZones) -> Double? {
        normalizedPower.map { $0 / zones.functionalThresholdPower }
    }

    /// Coggan's training stress score: the normalized work times IF, against an hour at FTP,
    /// in percent (an hour at FTP scores 100).
    public func trainingStressScore(_ zones: PowerZones) -> Double? {
        guard let np = normalizedPower, let intensity = intensityFactor(zones) else { return nil }
        let ftp = zones.functionalThresholdPower
        return Double(seconds) * np * intensity / (ftp * 3_600) * 100
    }

    /// Seconds in zones 1…7.
    public func timeInZones(_ zones: PowerZones) -> [Double] {
        var seconds = [Double](repeating: 0, count: PowerZones.count)
        for v in watts { seconds[zones.zone(of: v) - 1] += 1 }
        return seconds
    }

    /// The best average power over any run of `duration` consecutive seconds, for each duration
    /// the ride is long enough for (HealthKit has none; GoldenCheetah calls it the mean-maximal
    /// curve): a prefix sum makes each duration one pass.
    public func meanMaximalPower(durations: [Int] = Self.curveDurations) -> [Int: Double] {
        var prefix = [Double](repeating: 0, count: watts.count + 1)
        for (i, v) in watts.enumerated() { prefix[i + 1] = prefix[i] + v }
        var best: [Int: Double] = [:]
        for d in durations where d > 0 && d <= watts.count {
            var top = 0.0
            for end in d...watts.count {
                let s = prefix[end] - prefix[end - d]
                if s > top { top = s }
            }
            best[d] = top / Double(d)
        }
        return best
    }
}
