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
        k < finished.count ? finished[k] : current!
    }

    /// Changes lap `k` in place. A closure rather than a `_modify` accessor: the accessor's
    /// coroutine frame for a value this large was heap-allocated on every call.
    @inline(__always)
    mutating func update(_ k: Int, _ change: (inout Accumulator) -> Void) {
        if k < finished.count { change(&finished[k]) } else { change(&current!) }
    }
}
