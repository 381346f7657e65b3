/// Reconnect delays: exponential from `initial` to `maximum`, each with "equal jitter" (half
/// fixed, half random) so that many boxes cut off by the same broker outage do not all come
/// back in the same second. The random source is injected so tests see exact delays.
public struct ReconnectBackoff: Sendable {
    public let initial: Duration
    public let maximum: Duration
    private var attempt = 0

    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(60)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt; `unit` is a random number in [0, 1).
    public mutating func next(unit: Double) -> Duration {
        let ceiling = min(maximum, initial * (1 << min(attempt, 20)))
        attempt += 1
        return ceiling / 2 + ceiling * (max(0, min(unit, 1)) / 2)
    }

    /// A connection was accepted: the next failure starts small again.
    public mutating func reset() { attempt = 0 }

    public var attempts: Int { attempt }
}
