import StrapModel

/// A session's activity intervals (start/resume → pause/stop/end) and lap boundaries, mapping
/// wall time to *active* time: milliseconds of activity since the start, pauses left out.
/// Every statistic is computed in active time, so what a sample contributes depends only on
/// its timestamps and the event times, never on when it arrived.
///
/// The newest interval and lap are kept inline and the older ones in arrays: a live sample
/// falls in the newest ones and reads no array storage (each array is one more cache miss for
/// a session whose last sample was a second ago). A late sample binary-searches: O(log n).
struct ActiveTimeline: Sendable, Hashable {
    struct Interval: Sendable, Hashable {
        var begin: Millis
        /// `Millis.max` while the interval is open.
        var end: Millis
        /// Active milliseconds before the interval.
        var activeBefore: Millis
    }

    struct LapMark: Sendable, Hashable {
        /// Wall time the lap begins (lap 0 at the start).
        var start: Millis
        /// Active time the lap begins at.
        var startActive: Millis
    }

    /// nil before the start.
    private var newest: Interval?
    private var newestLap: LapMark?
    /// Every interval and lap but the newest, oldest first.
    private var earlier: [Interval] = []
    private var earlierLaps: [LapMark] = []

    var isOpen: Bool { newest?.end == Millis.max }
    var hasStarted: Bool { newest != nil }
    var lapCount: Int { newestLap == nil ? 0 : earlierLaps.count + 1 }
    var start: Millis? { earlier.first?.begin ?? newest?.begin }
    /// Where the last interval closed (stop or end); nil while open or before the start.
    var closedAt: Millis? { isOpen ? nil : newest?.end }

    /// Start or resume. The first call also begins lap 0.
    mutating func open(at t: Millis) {
        guard !isOpen else { return }
        guard let last = newest else {
            newest = Interval(begin: t, end: .max, activeBefore: 0)
            newestLap = LapMark(start: t, startActive: 0)
            return
        }
        earlier.append(last)
        newest = Interval(begin: max(t, last.end), end: .max, activeBefore: last.activeBefore + (last.end - last.begin))
    }

    /// Pause, stop or end.
    mutating func close(at t: Millis) {
        guard isOpen, let last = newest else { return }
        newest!.end = max(t, last.begin)
    }

    /// Closes the current lap at `t` and begins the next.
    mutating func beginLap(at t: Millis) {
        guard let lap = newestLap else { return }
        let at = max(t, lap.start)
        earlierLaps.append(lap)
        newestLap = LapMark(start: at, startActive: active(at: at))
    }

    /// The last interval beginning before `t`; nil at or before the start.
    @inline(__always)
    private func interval(containing t: Millis) -> Interval? {
        guard let last = newest else { return nil }
        if last.begin < t { return last }
        guard let first = earlier.first, first.begin < t else { return nil }
        var lo = 0, hi = earlier.count  // earlier[lo].begin < t <= begin of hi (the newest when hi == count)
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if earlier[mid].begin < t { lo = mid } else { hi = mid }
        }
        return earlier[lo]
    }

    /// Active milliseconds from the start to `t`.
    @inline(__always)
    func active(at t: Millis) -> Millis {
        guard let i = interval(containing: t) else { return 0 }
        return i.activeBefore + (min(t, i.end) - i.begin)
    }

    /// Whether a sample stamped `t` counts: intervals are (begin, end], since a sample's time
    /// marks the end of what it measured. So a sample stamped exactly at a start or resume does
    /// not count and one at a pause or stop does, whichever side of the command it arrives on.
    @inline(__always)
    func isActive(_ t: Millis) -> Bool {
        guard let i = interval(containing: t) else { return false }
        return t <= i.end
    }

    @inline(__always)
    private func lap(_ k: Int) -> LapMark {
        k < earlierLaps.count ? earlierLaps[k] : newestLap!
    }

    /// The lap a time belongs to: laps are (start, next start], so a sample stamped at a lap
    /// boundary belongs to the lap ending there (lap 0 at or before the start).
    @inline(__always)
    func lapIndex(at t: Millis) -> Int {
        guard let last = newestLap else { return 0 }
        let n = earlierLaps.count + 1
        if n == 1 || t > last.start { return n - 1 }
        if t <= lap(1).start { return 0 }
        var lo = 1, hi = n - 1  // start of lo < t <= start of hi
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if lap(mid).start < t { lo = mid } else { hi = mid }
        }
        return lo
    }

    /// Wall time lap `k` begins.
    func lapStart(_ k: Int) -> Millis { lap(k).start }

    /// Active time lap `k` begins at.
    @inline(__always)
    func lapStartActive(_ k: Int) -> Millis { lap(k).startActive }

    /// Active time at which lap `k` ends (the next lap's start), or nil for the last lap.
    func lapEndActive(_ k: Int) -> Millis? {
        k + 1 < lapCount ? lap(k + 1).startActive : nil
    }

    func lapEnd(_ k: Int) -> Millis? {
        k + 1 < lapCount ? lap(k + 1).start : nil
    }
}
