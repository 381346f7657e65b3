/// A sensor's cumulative counter (RSC total distance, Energy Expended) turned into a total
/// that survives wraparound, resets (power cycle, a 0x2A39 reset) and saturation.
///
/// Deltas are taken modulo 2ⁿ. A delta larger than physically possible in the elapsed time
/// cannot be a wrap: it means the counter restarted from zero, so the new raw value itself
/// is what accrued since the reset.
public struct CumulativeCounter: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        /// The first value: a baseline, nothing accrued.
        case baseline
        case advanced(by: UInt64)
        /// The counter went through its maximum and started again.
        case wrapped(by: UInt64)
        /// The counter restarted; `by` is what it counted since then.
        case reset(by: UInt64)
        /// The counter sits at its saturation value and can no longer count (Energy Expended
        /// stays at 0xFFFF until reset): the total stops, the caller should ask for a reset.
        case saturated
    }

    public let bitWidth: Int
    /// Largest plausible increase per second of elapsed time, in raw units.
    public let maxRatePerSecond: Double
    /// Increases up to this many raw units are always plausible (covers timestamp jitter).
    public let minimumPlausibleStep: UInt64
    /// A value that, once reached, means the counter saturated rather than wrapped.
    public let saturationValue: UInt64?

    public private(set) var total: UInt64 = 0
    public private(set) var last: UInt64?
    var lastTime: Double = 0

    public init(bitWidth: Int, maxRatePerSecond: Double, minimumPlausibleStep: UInt64, saturationValue: UInt64? = nil) {
        precondition(bitWidth > 0 && bitWidth <= 32)
        self.bitWidth = bitWidth
        self.maxRatePerSecond = maxRatePerSecond
        self.minimumPlausibleStep = minimumPlausibleStep
        self.saturationValue = saturationValue
    }

    /// RSC Total Distance in 1/10 m: wraps at 2³²; no runner exceeds 15 m/s.
    public static func rscTotalDistance() -> CumulativeCounter {
        CumulativeCounter(bitWidth: 32, maxRatePerSecond: 150, minimumPlausibleStep: 100)
    }

    /// Energy Expended in kJ: saturates at 0xFFFF (HRS §3.1.1.3); 2 kJ/s is far above any human.
    public static func energyExpended() -> CumulativeCounter {
        CumulativeCounter(bitWidth: 16, maxRatePerSecond: 2, minimumPlausibleStep: 20, saturationValue: 0xFFFF)
    }

    /// FTMS Indoor Bike Data Total Distance in m: uint24, wraps at 2²⁴ (16 777 km, never in a
    /// ride, but a trainer's reset puts it back to 0); 30 m/s is CSCDerivation's speed gate.
    public static func indoorBikeTotalDistance() -> CumulativeCounter {
        CumulativeCounter(bitWidth: 24, maxRatePerSecond: 30, minimumPlausibleStep: 50)
    }

    /// Forget the baseline (after a reconnect the first value is a baseline again).
    public mutating func rebaseline() { last = nil }

    @discardableResult
    public mutating func update(_ raw: UInt64, at time: Double) -> Event {
        let modulus: UInt64 = 1 << UInt64(bitWidth)
        let value = raw % modulus
        defer {
            last = value
            lastTime = time
        }
        guard let previous = last else { return .baseline }
        if let saturationValue, value == saturationValue, previous == saturationValue { return .saturated }
        let delta = (value &+ modulus &- previous) % modulus
        let elapsed = max(0, time - lastTime)
        let plausible = max(minimumPlausibleStep, UInt64(min(Double(modulus), maxRatePerSecond * elapsed)))
        if delta <= plausible {
            return advance(delta, wrapped: value < previous)
        }
        // Not a wrap: a restart from zero. What it counted since is the new value itself,
        // unless even that is implausible (then count nothing rather than invent progress).
        let accrued = value <= plausible ? value : 0
        total &+= accrued
        return .reset(by: accrued)
    }

    private mutating func advance(_ delta: UInt64, wrapped: Bool) -> Event {
        total &+= delta
        return wrapped ? .wrapped(by: delta) : .advanced(by: delta)
    }
}
