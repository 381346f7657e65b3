import StrapModel

/// A session's activity intervals (start/resume → pause/stop/end) and lap boundaries, mapping
/// wall time to *active* time: milliseconds of activity since the start, pauses left out.
/// Every statistic is computed in active time, so what a sample contributes depends only on
/// its timestamps and the event times, never on when it arrived.
///
/// Lookups take the newest interval and lap first (nearly every sample falls there) and
/// binary-search otherwise: O(1) for live data, O(log n) for a late sample.
struct ActiveTimeline: Sendable, Hashable {
    private(set) var begins: [Millis] = []
    /// `Millis.max` while the interval is open.
    private(set) var ends: [Millis] = []
    /// Active milliseconds before interval i.
    private(set) var activeBefore: [Millis] = []
    /// Wall time each lap begins (lap 0 at the start).
    private(set) var lapStarts: [Millis] = []
    /// Active time each lap begins at.
    private(set) var lapStartActive: [Millis] = []

    var isOpen: Bool { ends.last == Millis.max }
    var hasStarted: Bool { !begins.isEmpty }
    var lapCount: Int { lapStarts.count }
    var start: Millis? { begins.first }
    /// Where the last interval closed (stop or end); nil while open or before the start.
    var closedAt: Millis? { isOpen ? nil : ends.last }

    /// Start or resume. The first call also begins lap 0.
    mutating func open(at t: Millis) {
        guard !isOpen else { return }
        let before = begins.isEmpty ? 0 : activeBefore[activeBefore.count - 1] + (ends[ends.count - 1] - begins[begins.count - 1])
        let at = max(t, ends.last ?? t)
        if begins.isEmpty {
            lapStarts.append(at)
            lapStartActive.append(0)
        }
        begins.append(at)
        ends.append(.max)
        activeBefore.append(before)
    }

    /// Pause, stop or end.
    mutating func close(at t: Millis) {
        guard isOpen else { return }
        ends[ends.count - 1] = max(t, begins[begins.count - 1])
    }

    /// Closes the current lap at `t` and begins the next.
    mutating func beginLap(at t: Millis) {
        guard hasStarted else { return }
        let at = max(t, lapStarts[lapStarts.count - 1])
        lapStarts.append(at)
        lapStartActive.append(active(at: at))
    }

    /// Index of the last interval beginning before `t`; -1 at or before the start.
    @inline(__always)
    private func interval(containing t: Millis) -> Int {
        let n = begins.count
        if n == 0 || t <= begins[0] { return -1 }
        if begins[n - 1] < t { return n - 1 }
        var lo = 0, hi = n - 1  // begins[lo] < t <= begins[hi]
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if begins[mid] < t { lo = mid } else { hi = mid }
        }
        return lo
    }

    /// Active milliseconds from the start to `t`.
    @inline(__always)
    func active(at t: Millis) -> Millis {
        let i = interval(containing: t)
        if i < 0 { return 0 }
        return activeBefore[i] + (min(t, ends[i]) - begins[i])
    }

    /// Whether a sample stamped `t` counts: intervals are (begin, end], since a sample's time
    /// marks the end of what it measured. So a sample stamped exactly at a start or resume does
    /// not count and one at a pause or stop does, whichever side of the command it arrives on.
    @inline(__always)
    func isActive(_ t: Millis) -> Bool {
        let i = interval(containing: t)
        return i >= 0 && t <= ends[i]
    }

    /// The lap a time belongs to: laps are (start, next start], so a sample stamped at a lap
    /// boundary belongs to the lap ending there (lap 0 at or before the start).
    @inline(__always)
    func lapIndex(at t: Millis) -> Int {
        let n = lapStarts.count
        if n <= 1 || t > lapStarts[n - 1] { return max(0, n - 1) }
        if t <= lapStarts[1] { return 0 }
        var lo = 1, hi = n - 1  // lapStarts[lo] < t <= lapStarts[hi]
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if lapStarts[mid] < t { lo = mid } else { hi = mid }
        }
        return lo
    }

    /// Active time at which lap `k` ends (the next lap's start), or nil for the last lap.
    func lapEndActive(_ k: Int) -> Millis? {
        k + 1 < lapStartActive.count ? lapStartActive[k + 1] : nil
    }

    func lapEnd(_ k: Int) -> Millis? {
        k + 1 < lapStarts.count ? lapStarts[k + 1] : nil
    }
}
