import Dispatch
import FoundationEssentials
import StrapModel
import StrapStore
import StrapWire
import Synchronization

/// When a followed statistics collection may send its next update. The daemon's is the
/// monotonic clock and a Dispatch timer; tests hold the timer and fire it themselves, so no
/// test waits for (or asserts) wall-clock time.
public struct UpdatePacing: Sendable {
    /// Milliseconds on a clock that never steps back.
    public var now: @Sendable () -> Millis
    /// Runs `work` (on any queue) `delay` milliseconds from now.
    public var schedule: @Sendable (_ delay: Millis, _ work: @escaping @Sendable () -> Void) -> Void
    /// The least time between two updates of one stream.
    public var interval: Millis

    public init(now: @escaping @Sendable () -> Millis, schedule: @escaping @Sendable (Millis, @escaping @Sendable () -> Void) -> Void,
                interval: Millis = 1000) {
        self.now = now
        self.schedule = schedule
        self.interval = interval
    }

    public static let live = UpdatePacing(
        now: { Millis(DispatchTime.now().uptimeNanoseconds / 1_000_000) },
        schedule: { delay, work in DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay)), execute: work) })
}

/// What a followed collection computes, fixed at the request: the same grid of intervals
/// (`boundaries`: interval i is `[b[i], b[i+1])`) for the reply and every update.
struct CollectionQuery: Sendable {
    let store: Store
    let type: QuantityType
    let predicate: SamplePredicate
    let options: StatisticsOptions
    let anchorDate: Millis
    let interval: StatisticsInterval
    let timeZone: TimeZone
    let boundaries: [Millis]

    /// The interval holding `t`, if the collection has one.
    func index(of t: Millis) -> Int? {
        guard let first = boundaries.first, let last = boundaries.last, t >= first, t < last else { return nil }
        var l = 0, h = boundaries.count
        while l < h { let m = (l + h) / 2; if boundaries[m] <= t { l = m + 1 } else { h = m } }
        return l - 1
    }

    /// Statistics of intervals `range` (indices), in order.
    func statistics(_ range: ClosedRange<Int>) throws(StrapError) -> [Statistics] {
        try store.statisticsCollection(type: type, predicate: predicate, options: options, anchorDate: anchorDate, interval: interval,
                                       from: boundaries[range.lowerBound], to: boundaries[range.upperBound + 1], timeZone: timeZone)
    }

    /// What tells an interval's figures changed: its encoding, hashed.
    static func fingerprint(_ s: Statistics, options: StatisticsOptions) -> Int {
        var h = Hasher()
        h.combine(JSONWriter.bytes(.object(RequestRouter.statisticsJSON(s, options: options))))
        return h.finalize()
    }
}

/// The follow phase of `statistics.collection` (HealthKit's `statisticsUpdateHandler`): after
/// the reply, the intervals that samples stored since then fall into are computed again and
/// sent as `statistics` events, at most once per `UpdatePacing.interval`, those whose figures
/// changed only. New samples come from the store from the reply's anchor on, through the
/// router's `FollowEngine` (parked at no cost while nothing is stored), so a late sample for an
/// old interval is noticed as surely as the newest one. A deletion among the collection's type
/// (a tombstone does not say when the sample was) makes every interval a candidate; only the
/// changed ones are sent.
///
/// A follower above its connection's high-water mark gets nothing and loses nothing: the
/// intervals wait as candidates and go out, recomputed, once it has drained.
final class StatisticsFollowStream: RouterStream, ParkedFollower, @unchecked Sendable {
    private enum State { case starting, running, ended }
    /// Intervals to compute again; filled by the reading step, taken by a flush.
    private struct Candidates {
        var intervals = Set<Int>()
        var all = false
        var isEmpty: Bool { !all && intervals.isEmpty }
    }

    private weak var router: RequestRouter?
    private let session: ClientSession
    private let id: RequestID
    private let pacing: UpdatePacing
    /// Set once in `start`, before the first step; read by steps and flushes after it.
    private var query: CollectionQuery?
    private let candidates = Mutex(Candidates())
    private let active = Atomic<Bool>(true)
    /// Confined to the server queue.
    private var state = State.starting
    private var cancelRequested = false
    private var fingerprints: [Int] = []
    private var lastFlush: Millis?
    private var flushScheduled = false
    private var computing = false
    private var behind = false
    private var budget = 0

    init(router: RequestRouter, session: ClientSession, id: RequestID, pacing: UpdatePacing) {
        self.router = router
        self.session = session
        self.id = id
        self.pacing = pacing
    }

    /// On the server queue, after the reply: follows from `anchor`, the store's durable end
    /// before the reply's figures were computed, which are `initial`.
    func start(_ query: CollectionQuery, from anchor: UInt64, initial: [Statistics], budget: Int) {
        guard state == .starting else { return }
        if cancelRequested || session.connection.isClosed {
            state = .ended
            if cancelRequested { session.connection.write(Reply.event(id: id, kind: "cancelled", data: [:])) }
            router?.streamEnded(id: id, in: session, stream: self)
            return
        }
        state = .running
        self.query = query
        self.budget = budget
        fingerprints = initial.map { CollectionQuery.fingerprint($0, options: query.options) }
        router?.worker.async { [self] in _ = step(from: anchor) }
    }

    func failedToStart() {
        state = .ended
        router?.streamEnded(id: id, in: session, stream: self)
    }

    func resume(from anchor: UInt64) -> ServerHop? { step(from: anchor) }

    /// On the worker (or the follow engine's queue): reads what was stored after `start`, notes
    /// the intervals it touches, and parks once caught up. Never writes: flushes do.
    private func step(from start: UInt64) -> ServerHop? {
        guard let query, let engine = router?.follow else { return nil }
        var from = start
        while active.load(ordering: .acquiring) {
            if !engine.proceedOrPark(self, at: from) {
                if !active.load(ordering: .acquiring) { engine.unpark(self) }
                return nil
            }
            engine.pageRead()
            let page: AnchoredResult
            do throws(StrapError) {
                page = try query.store.anchored(types: [.quantity(query.type)], predicate: query.predicate, anchor: from, limit: 1024)
            } catch {
                let data = FollowerError.data(error)
                return ServerHop(queue: session.connection.queue) { [self] in stop(kind: "error", data: data) }
            }
            var touched = Set<Int>()
            for case .sample(let s) in page.added { if let i = query.index(of: s.start) { touched.insert(i) } }
            let deletion = !page.deleted.isEmpty
            if deletion || !touched.isEmpty {
                candidates.withLock { c in
                    c.intervals.formUnion(touched)
                    c.all = c.all || deletion
                }
                session.connection.queue.async { [self] in requestFlush() }
            }
            from = page.anchor
        }
        return nil
    }

    /// On the server queue: a flush as soon as the pacing allows (at once for the first).
    private func requestFlush() {
        guard state == .running, !flushScheduled else { return }
        if computing || behind { return }  // the running flush or the drain asks again
        flushScheduled = true
        let delay = lastFlush.map { max(0, $0 + pacing.interval - pacing.now()) } ?? 0
        let queue = session.connection.queue
        pacing.schedule(delay) { [weak self] in
            guard let stream = self else { return }
            queue.async { stream.flush() }
        }
    }

    private func flush() {
        flushScheduled = false
        guard state == .running, let query, let worker = router?.worker else { return }
        if session.connection.isAboveHighWater { behind = true; return }
        let taken = candidates.withLock { c -> Candidates in defer { c = Candidates() }; return c }
        guard !taken.isEmpty else { return }
        let range: ClosedRange<Int>
        if taken.all { range = 0...(query.boundaries.count - 2) } else { range = taken.intervals.min()!...taken.intervals.max()! }
        lastFlush = pacing.now()
        computing = true
        worker.async { [self] in
            let result = Result { () throws(StrapError) -> [Statistics] in try query.statistics(range) }
            session.connection.queue.async { [self] in
                computing = false
                switch result {
                case .success(let list): send(list, first: range.lowerBound, candidates: taken)
                case .failure(let error):
                    let e = WireError(error)
                    stop(kind: "error", data: ["code": .string(e.code.rawValue), "message": .string(e.message)])
                }
                if candidates.withLock({ !$0.isEmpty }) { requestFlush() }
            }
        }
    }

    /// Writes the candidates whose figures changed, in events below the line budget.
    private func send(_ list: [Statistics], first: Int, candidates taken: Candidates) {
        guard state == .running, let query else { return }
        var changed: [(index: Int, fingerprint: Int, json: JSONObject)] = []
        for (k, s) in list.enumerated() {
            let i = first + k
            guard i < fingerprints.count, taken.all || taken.intervals.contains(i) else { continue }
            let print = CollectionQuery.fingerprint(s, options: query.options)
            if print != fingerprints[i] { changed.append((i, print, RequestRouter.statisticsJSON(s, options: query.options))) }
        }
        var n = 0
        while n < changed.count, state == .running {
            // As many intervals as fit one line (always at least one).
            var items: [JSONValue] = [], line: [UInt8] = [], end = n
            while end < changed.count {
                let next = Reply.event(id: id, kind: "statistics", data: ["statistics": .array(items + [.object(changed[end].json)])])
                if next.count > budget, !items.isEmpty { break }
                items.append(.object(changed[end].json))
                line = next
                end += 1
            }
            switch session.connection.write(line) {
            case .queued:
                for c in changed[n..<end] { fingerprints[c.index] = c.fingerprint }
                n = end
            case .rejected where session.connection.isAboveHighWater:
                // Not read yet: what is left waits for the drain, recomputed then.
                let rest = Set(changed[n...].map(\.index))
                candidates.withLock { $0.intervals.formUnion(rest) }
                behind = true
                return
            case .rejected:
                // Lines are cut to the budget, which always fits an empty buffer: not reached.
                stop(kind: "error", data: FollowerError.refused("an update", bytes: line.count))
                return
            case .closed:
                state = .ended
                deactivate()
                return
            }
        }
        if session.connection.isAboveHighWater { behind = true }
    }

    func outputDrained() {
        guard state == .running, behind else { return }
        behind = false
        if candidates.withLock({ !$0.isEmpty }) { requestFlush() }
    }

    func cancel(notify: Bool) {
        switch state {
        case .starting:
            cancelRequested = notify
            if !notify { state = .ended }
        case .running:
            state = .ended
            deactivate()
            if notify { session.connection.write(Reply.event(id: id, kind: "cancelled", data: [:])) }
        case .ended:
            break
        }
    }

    private func stop(kind: String, data: JSONObject) {
        guard state == .running else { return }
        state = .ended
        deactivate()
        session.connection.write(Reply.event(id: id, kind: kind, data: data))
        router?.streamEnded(id: id, in: session, stream: self)
    }

    private func deactivate() {
        active.store(false, ordering: .releasing)
        router?.follow.unpark(self)
    }
}

/// The `error` events that end a follower (`samples.anchored` and `statistics.collection`
/// with `follow`).
enum FollowerError {
    /// A store read failed: its code, message and detail (e.g. `oldestAnchor`).
    static func data(_ error: StrapError) -> JSONObject {
        let e = WireError(error)
        var data: JSONObject = ["code": .string(e.code.rawValue), "message": .string(e.message)]
        if let extra = e.data { for (k, v) in extra.entries { data[k] = v } }
        return data
    }

    /// A line refused by a connection that is not behind: larger than its whole buffer. Lines
    /// are cut to a budget that fits, so only one item larger than that budget gets here.
    static func refused(_ what: String, bytes: Int) -> JSONObject {
        ["code": .string(ErrorCode.internal.rawValue), "message": .string(
            "\(what) of \(bytes) bytes does not fit this connection's buffer; raise client_buffer in strapd.conf")]
    }
}
