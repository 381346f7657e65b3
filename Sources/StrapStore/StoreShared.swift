import Synchronization
import StrapModel
import StrapOS

/// What readers see: the segment list, how far the log is durable, retention's floor, and
/// the deleted anchors. Replaced under a short lock; queries work on a copy.
struct Published: Sendable {
    var segments: [Segment]
    /// Anchors below this are durable and visible to anchored readers.
    var durableNext: UInt64
    /// The first anchor still retained.
    var oldest: UInt64
    var deleted: DeletedSet
}

/// State shared between the writer, the sync path and readers.
final class StoreShared: Sendable {
    let published: Mutex<Published>
    private let health = Mutex<(degraded: String?, damage: [String])>((nil, []))
    private let waiters = Mutex<(next: Int, list: [Int: CheckedContinuation<Void, Never>], closed: Bool)>((0, [:], false))
    /// `called` is `list`'s values, made when one is added or removed: the durable end
    /// advances with every sync, and an array made from the dictionary then was an allocation
    /// each time.
    private let observers = Mutex<(next: Int, list: [Int: @Sendable (UInt64) -> Void], called: [@Sendable (UInt64) -> Void])>((0, [:], []))

    init(_ p: Published, sealedDetailBudget: Int) {
        published = Mutex(p)
        self.sealedDetailBudget = sealedDetailBudget
    }

    var snapshot: Published { published.withLock { $0 } }

    /// Sealed segments' details (streams, checkpoints, minute rollups: a few hundred KB for a
    /// full segment of the simulator's mix) stay cached up to this many bytes, the most
    /// recently used. Without a bound every segment a follower or a statistics query ever
    /// read kept its detail for good, and the heap grew with the store (strap-bench soak:
    /// +111 MB over 26 M samples); a bound in segments (16 before) let memory grow with the
    /// density of the data, which the soak's 2 MB target caught.
    private let sealedDetailBudget: Int
    private let detailUse = Mutex<DetailUse>(DetailUse())

    private struct DetailUse {
        var clock: UInt64 = 0
        var bytes = 0
        var cached: [ObjectIdentifier: (segment: Segment, used: UInt64, bytes: Int)] = [:]
    }

    var cachedSealedDetailCount: Int { detailUse.withLock { $0.cached.count } }
    var cachedSealedDetailBytes: Int { detailUse.withLock { $0.bytes } }

    /// `segment.detail`, keeping sealed details cached within `sealedDetailBudget`.
    func detail(of segment: Segment) -> SegmentDetail {
        let d = segment.detail(report: report)
        guard segment.detailReloadable else { return d }
        let victims: [Segment] = detailUse.withLock { u in
            u.clock &+= 1
            let key = ObjectIdentifier(segment)
            if u.cached[key] != nil {
                u.cached[key]!.used = u.clock
                return []
            }
            let size = d.approximateBytes
            u.cached[key] = (segment, u.clock, size)
            u.bytes += size
            guard u.bytes > sealedDetailBudget, u.cached.count > 1 else { return [] }
            var out: [Segment] = []
            for (k, v) in u.cached.sorted(by: { $0.value.used < $1.value.used }) where k != key {
                guard u.bytes > sealedDetailBudget else { break }
                u.cached[k] = nil
                u.bytes -= v.bytes
                out.append(v.segment)
            }
            return out
        }
        for v in victims { v.evictDetail() }
        return d
    }

    func publishDurable(_ p: LogPosition) {
        var cur = p.segment.durableLength.load(ordering: .relaxed)
        while cur < p.offset {
            let (done, seen) = p.segment.durableLength.compareExchange(expected: cur, desired: p.offset,
                                                                       ordering: .releasing)
            if done { break }
            cur = seen
        }
        let advanced = published.withLock { s -> Bool in
            guard p.nextAnchor > s.durableNext else { return false }
            s.durableNext = p.nextAnchor
            return true
        }
        if advanced { durableAdvanced(to: p.nextAnchor) }
    }

    func replaceOpenSegment(sealed: Segment, open: Segment, durableNext: UInt64) {
        let advanced = published.withLock { s -> Bool in
            if let i = s.segments.lastIndex(where: { $0.firstAnchor == sealed.firstAnchor }) {
                s.segments[i] = sealed
            }
            s.segments.append(open)
            defer { s.durableNext = max(s.durableNext, durableNext) }
            return durableNext > s.durableNext
        }
        if advanced { durableAdvanced(to: durableNext) } else { wakeAll() }
    }

    func replaceEmptyOpenSegment(_ open: Segment) {
        published.withLock { s in
            if let i = s.segments.lastIndex(where: { $0.firstAnchor == open.firstAnchor }) { s.segments[i] = open }
        }
    }

    // MARK: health

    func degrade(_ e: SystemCallError) -> StrapError {
        let why = e.errno.isNoSpace ? "disk full: \(e)" : "I/O error: \(e)"
        health.withLock { $0.degraded = why }
        return .unavailable(why)
    }

    func clearDegraded() {
        health.withLock { if $0.degraded != nil { $0.degraded = nil } }
    }

    func report(_ problem: String) {
        health.withLock { if !$0.damage.contains(problem) { $0.damage.append(problem) } }
    }

    var degraded: String? { health.withLock { $0.degraded } }
    var damage: [String] { health.withLock { $0.damage } }

    // MARK: waiting for new durable records (follow mode)

    /// Returns once the durable end passes `anchor`, the task is cancelled, or the store closes.
    func waitDurable(beyond anchor: UInt64) async {
        let id = waiters.withLock { w -> Int in w.next += 1; return w.next }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = waiters.withLock { w -> Bool in
                    if w.closed || Task.isCancelled { return true }
                    if published.withLock({ $0.durableNext > anchor + 1 }) { return true }
                    w.list[id] = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            waiters.withLock { $0.list.removeValue(forKey: id) }?.resume()
        }
    }

    // MARK: commit observers (the daemon's follow engine)

    /// `observer` is called with the new latest durable anchor each time the durable end
    /// advances, on the thread that advanced it (on the writer queue or in the group-commit
    /// leader's sync): it must return quickly and must not call back into the store.
    func addObserver(_ observer: @escaping @Sendable (UInt64) -> Void) -> Int {
        observers.withLock { o in
            o.next += 1
            o.list[o.next] = observer
            o.called = Array(o.list.values)
            return o.next
        }
    }

    func removeObserver(_ id: Int) {
        observers.withLock { o in
            o.list[id] = nil
            o.called = Array(o.list.values)
        }
    }

    /// Called outside `published`'s lock, after the new durable end is visible to readers.
    private func durableAdvanced(to next: UInt64) {
        wakeAll()
        let list = observers.withLock { $0.called }
        for observer in list { observer(next - 1) }
    }

    func wakeAll() {
        let list = waiters.withLock { w -> [CheckedContinuation<Void, Never>] in
            let l = Array(w.list.values); w.list.removeAll(); return l
        }
        for c in list { c.resume() }
    }

    func close() {
        waiters.withLock { $0.closed = true }
        wakeAll()
    }

    var isClosed: Bool { waiters.withLock { $0.closed } }
}
