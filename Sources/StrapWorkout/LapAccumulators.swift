/// A session's per-lap accumulators. The current lap's is kept inline, beside the session's
/// totals, so that counting a live sample touches no array storage; finished laps move to
/// an array (a late sample may still land in one).
struct LapAccumulators: Sendable, Hashable {
    private var finished: [Accumulator] = []
    private var current: Accumulator?

    /// 0 before the start.
    var count: Int { current == nil ? 0 : finished.count + 1 }

    /// The start: lap 0 begins.
    mutating func start() {
        finished = []
        current = Accumulator()
    }

    /// A lap: the current one is finished and a new one begins.
    mutating func beginLap() {
        if let c = current { finished.append(c) }
        current = Accumulator()
    }

    /// Lap `k` (0 ..< count).
    subscript(k: Int) -> Accumulator {
        get { k < finished.count ? finished[k] : current! }
        _modify {
            if k < finished.count { yield &finished[k] } else { yield &current! }
        }
    }
}
