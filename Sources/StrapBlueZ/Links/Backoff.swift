/// Capped exponential backoff with jitter. The random source is injected so the link
/// state machine stays deterministic under test.
public struct BackoffPolicy: Sendable, Equatable {
    /// Seconds before the first retry.
    public var base: Double
    /// Upper bound in seconds.
    public var cap: Double
    /// Fraction of the delay randomised either way (0.2 = ±20 %).
    public var jitter: Double
    /// Delay for transient BlueZ errors such as le-connection-abort-by-local
    /// (bleak-retry-connector retries those after 0.25 s).
    public var transient: Double
    /// Delay when the controller is out of connection slots (bleak-retry-connector: 4 s).
    public var outOfSlots: Double

    public init(base: Double = 1, cap: Double = 60, jitter: Double = 0.2, transient: Double = 0.25, outOfSlots: Double = 4) {
        self.base = base
        self.cap = cap
        self.jitter = jitter
        self.transient = transient
        self.outOfSlots = outOfSlots
    }

    /// Delay for the n-th consecutive failure (1-based), before jitter.
    public func nominal(attempt: Int) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        return min(cap, base * pow2(exponent))
    }

    private func pow2(_ e: Double) -> Double {
        var r = 1.0
        for _ in 0..<Int(e) { r *= 2 }
        return r
    }

    public func jittered(_ seconds: Double, unit: Double) -> Double {
        max(0, seconds * (1 + jitter * (2 * unit - 1)))
    }
}

/// A running backoff sequence.
struct Backoff {
    let policy: BackoffPolicy
    private(set) var attempt = 0
    var random: () -> Double = { Double.random(in: 0...1) }

    init(policy: BackoffPolicy) { self.policy = policy }

    mutating func next() -> Double {
        attempt += 1
        return policy.jittered(policy.nominal(attempt: attempt), unit: random())
    }

    mutating func reset() { attempt = 0 }
}

extension Double {
    var formatted: String {
        let ms = (self * 1000).rounded()
        return String(Int(ms) / 1000) + "." + String(repeating: "0", count: 3 - String(Int(ms) % 1000).count) + String(Int(ms) % 1000)
    }
}
