import StrapModel

/// The heart-rate-targeted step (issue 35 item 4, docs/trainer.md "Holding a heart rate"): the
/// trainer's ERG power is moved to keep the athlete's heart rate in a range. Pure: the caller
/// feeds heart-rate readings and ticks with monotonic milliseconds, and sets the power this
/// returns through `TrainerControl`.
///
/// Heart rate follows power with a lag of a minute or more, so the controller is deliberately
/// slow and bounded: it decides once per `interval` from the mean of that interval's readings,
/// moves by a proportional step no larger than `maximumChange`, holds while the heart rate is
/// inside the range or its trend will carry it there within `anticipation`, and never leaves
/// [floor, ceiling].
public struct HeartRateTargetController: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var range: ClosedRange<Double>
        public var floor: Double
        public var ceiling: Double
        /// The largest change of power per decision, W.
        public var maximumChange: Double
        /// Between decisions, ms.
        public var interval: Int64
        /// Watts per bpm of error (before the bound).
        public var gain: Double
        /// Without a reading for this long (ms) the heart rate is lost.
        public var lostAfter: Int64
        /// How far ahead (ms) the heart rate's trend is projected: one heading into the range
        /// within this time is left to arrive, since pushing harder then is what makes such
        /// loops overshoot (heart rate lags power by about a minute).
        public var anticipation: Int64

        public init(range: ClosedRange<Double>, floor: Double, ceiling: Double, maximumChange: Double = 10,
                    interval: Int64 = 10_000, gain: Double = 1.0, lostAfter: Int64 = 10_000, anticipation: Int64 = 60_000) {
            self.range = range; self.floor = floor; self.ceiling = ceiling; self.maximumChange = maximumChange
            self.interval = interval; self.gain = gain; self.lostAfter = lostAfter; self.anticipation = anticipation
        }

        public func validate() throws(StrapError) {
            guard range.lowerBound >= 30, range.upperBound <= 250, range.upperBound - range.lowerBound >= 2 else {
                throw .invalidOption("heart-rate target range must lie within 30...250 bpm and be at least 2 bpm wide, got \(range)")
            }
            guard floor.isFinite, ceiling.isFinite, floor >= 0, floor < ceiling else {
                throw .invalidOption("power floor and ceiling must be finite with 0 <= floor < ceiling, got \(floor) and \(ceiling)")
            }
            guard maximumChange > 0, maximumChange <= 100, interval >= 1000, gain > 0, lostAfter >= 1000,
                  (0...600_000).contains(anticipation) else {
                throw .invalidOption("maximumChange 0<…<=100 W, interval and lostAfter >= 1 s, gain > 0, anticipation 0…600 s")
            }
        }
    }

    public enum Decision: Equatable, Sendable {
        /// Set the trainer to this power.
        case setPower(Double)
        /// No reading for `lostAfter`: the power goes to the floor and stays there until the
        /// heart rate is back for a whole interval.
        case heartRateLost(floor: Double)
        /// Readings are back; control resumes from the floor.
        case heartRateRegained
    }

    public let configuration: Configuration
    public private(set) var power: Double
    public private(set) var lost = false
    private var lastReading: Int64?
    private var intervalStart: Int64?
    private var sum = 0.0, count = 0
    private var previousMean: Double?

    /// `start` is the power to begin with (the previous step's, or the floor), clamped.
    public init(_ configuration: Configuration, start: Double) throws(StrapError) {
        try configuration.validate()
        self.configuration = configuration
        power = min(max(start, configuration.floor), configuration.ceiling)
    }

    /// One heart-rate reading (only real readings: the caller drops 0 and off-skin values, as
    /// `Sample.isHeartRateReading` does).
    public mutating func reading(_ bpm: Double, at now: Int64) -> [Decision] {
        guard bpm.isFinite, bpm > 0 else { return tick(now) }
        var out: [Decision] = []
        if lost {
            // Back: a fresh interval starts; control resumes once it is complete.
            lost = false
            out.append(.heartRateRegained)
            intervalStart = now; sum = 0; count = 0; previousMean = nil
        }
        lastReading = now
        if intervalStart == nil { intervalStart = now }
        sum += bpm; count += 1
        return out + tick(now)
    }

    /// Time passed: at the end of an interval a decision; without readings, the loss.
    public mutating func tick(_ now: Int64) -> [Decision] {
        let c = configuration
        if !lost, let last = lastReading, now - last >= c.lostAfter {
            lost = true
            power = c.floor
            intervalStart = nil; sum = 0; count = 0; previousMean = nil
            return [.heartRateLost(floor: c.floor)]
        }
        guard !lost, let start = intervalStart, now - start >= c.interval, count > 0 else { return [] }
        let mean = sum / Double(count)
        let perMinute = previousMean.map { (mean - $0) * 60_000 / Double(now - start) }
        intervalStart = now; sum = 0; count = 0; previousMean = mean
        let next = decide(mean: mean, perMinute: perMinute)
        guard next != power else { return [] }
        power = next
        return [.setPower(next)]
    }

    /// The proportional step towards the middle of the range, bounded; none inside the range
    /// or while the trend carries the heart rate into it within `anticipation`.
    func decide(mean: Double, perMinute: Double?) -> Double {
        let c = configuration
        let projected = mean + (perMinute ?? 0) * Double(c.anticipation) / 60_000
        if mean < c.range.lowerBound {
            if projected >= c.range.lowerBound { return power }
        } else if mean > c.range.upperBound {
            if projected <= c.range.upperBound { return power }
        } else {
            return power
        }
        let error = (c.range.lowerBound + c.range.upperBound) / 2 - mean
        let step = min(max(c.gain * error, -c.maximumChange), c.maximumChange)
        return min(max((power + step).rounded(), c.floor), c.ceiling)
    }
}
