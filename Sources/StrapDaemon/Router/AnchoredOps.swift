import Dispatch
import StrapModel
import Synchronization
import StrapStore
import StrapWire

extension RequestRouter {
    /// `samples.anchored {"types", "predicate", "anchor", "limit", "follow"}` →
    /// `{"added": [...], "deleted": [...], "anchor": N}`; with `follow`, then `added` and
    /// `deleted` events from that anchor on (docs/protocol.md).
    func samplesAnchored(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["types", "predicate", "anchor", "limit", "follow"])
        let types = try objectTypes(params, session)
        let predicate = try params.predicate("predicate")
        try session.grants.checkPredicate(predicate)
        let anchor = try params.anchor("anchor")
        let limit = Int(try params.int("limit", in: 1...100_000) ?? 1000)
        let follow = try params.bool("follow") ?? false
        let id = request.id
        let budget = resultBudget(id, session)
        let store = context.store
        let stream = follow ? FollowStream(router: self, session: session, id: id) : nil
        if let stream { streamStarted(stream, id: id, in: session) }
        session.pendingReplies += 1
        run(request.op, in: session) { [self] in
            var next: UInt64?
            let bytes: [UInt8]
            do throws(StrapError) {
                // A reply holds at most maximumReplyBytes anyway; reading far more than that
                // from the store would only be thrown away.
                let page = try store.anchored(types: types, predicate: predicate, anchor: anchor, limit: min(limit, 20_000))
                let (body, continueFrom) = Self.encodePage(page, budget: budget)
                next = continueFrom
                bytes = Reply.success(id: id, resultJSON: body)
            } catch {
                bytes = Reply.failure(id: id, error: WireError(error))
            }
            return { [self, next] in
                session.pendingReplies -= 1
                write(bytes, id: id, to: session)
                if let stream {
                    if let next {
                        stream.start(store: store, types: types, predicate: predicate, from: next, limit: configuration.followPageLimit,
                                     budget: lineBudget(session))
                    } else {
                        stream.failedToStart()
                    }
                }
                finishIfIdle(session)
            }
        }
    }

    /// The object types a request reads: `"types"` may name sample types and `"workout"`.
    private func objectTypes(_ params: Params, _ session: ClientSession) throws(WireError) -> Set<ObjectType>? {
        let names = try params.strings("types")
        var quantities: Set<QuantityType>? = nil
        var workouts = false
        if let names {
            var q = Set<QuantityType>()
            for n in names {
                if n == "workout" { workouts = true; continue }
                guard let t = QuantityType(rawValue: n) else {
                    throw Params.notOneOf("types", n, QuantityType.allCases.map(\.rawValue) + ["workout"], what: "type")
                }
                q.insert(t)
            }
            quantities = q
        }
        if workouts, !session.grants.readsWorkouts {
            throw WireError(.notAuthorized, "not authorized to read workouts")
        }
        guard let readable = try session.grants.readable(asked: quantities) else { return nil }
        var out = Set(readable.map(ObjectType.quantity))
        // Unnamed types mean every readable type, workouts included when granted.
        if workouts || (names == nil && session.grants.readsWorkouts) { out.insert(.workout) }
        return out
    }

    /// The result object of one page, cut at `budget` bytes; the anchor is then the last
    /// item written, so continuing from it neither skips nor repeats.
    static func encodePage(_ page: AnchoredResult, budget: Int) -> (body: [UInt8], anchor: UInt64) {
        var added: [UInt8] = [], deleted: [UInt8] = []
        var anchor = page.anchor
        var scratch: [UInt8] = []
        var cut = false
        for item in AnchoredItem.merged(page) {
            scratch.removeAll(keepingCapacity: true)
            switch item {
            case .added(let o): SampleJSON.append(o, into: &scratch)
            case .deleted(let d): SampleJSON.append(d, into: &scratch)
            }
            if added.count + deleted.count + scratch.count > budget, !(added.isEmpty && deleted.isEmpty) {
                cut = true
                break
            }
            switch item {
            case .added:
                if !added.isEmpty { added.append(UInt8(ascii: ",")) }
                added += scratch
            case .deleted:
                if !deleted.isEmpty { deleted.append(UInt8(ascii: ",")) }
                deleted += scratch
            }
            anchor = item.anchor
        }
        if !cut { anchor = page.anchor }
        var body: [UInt8] = Array(#"{"added":["#.utf8)
        body += added
        body += Array(#"],"deleted":["#.utf8)
        body += deleted
        body += Array("],\"anchor\":\(anchor)}".utf8)
        return (body, anchor)
    }
}

/// The follow phase of `samples.anchored`: pages of `anchored` from the first page's anchor,
/// one event line per item, read on the router's worker queue. Each page continues exactly
/// where the previous ended, so the catch-up → live switch has no gap and no duplicate.
/// While the connection is above its high-water mark the loop stops at its anchor (nothing
/// is read ahead or buffered) and resumes from there once the client drained. Caught up, it
/// parks in the router's `FollowEngine`, which resumes it when a commit passes its anchor.
///
/// A plain Dispatch loop rather than the store's async `follow`: a follower must never depend
/// on the cooperative thread pool, which blocking code elsewhere in the process can exhaust.
final class FollowStream: RouterStream, ParkedFollower, @unchecked Sendable {
    private enum State { case starting, running, ended }
    private struct Query {
        let store: Store
        let types: Set<ObjectType>?
        let predicate: SamplePredicate?
        let limit: Int
        /// Bytes of event lines one page may write (see `RequestRouter.lineBudget`).
        let budget: Int
    }

    /// Weak: a stream's last hop may run after the router is gone (a daemon stopped).
    private weak var router: RequestRouter?
    private let session: ClientSession
    private let id: RequestID
    /// Confined to the server queue.
    private var state = State.starting
    private var cancelRequested = false
    private var anchor: UInt64 = 0
    /// Set once before the first step; read on the worker queue after that hop.
    private var startedQuery: Query?
    /// Whether steps should go on; the one piece of state the worker queue reads.
    private let active = Atomic<Bool>(true)
    /// Lines written while above high water wait here (rejected), or nothing (paused).
    private var paused = false
    private var retry: [UInt8]?

    init(router: RequestRouter, session: ClientSession, id: RequestID) {
        self.router = router
        self.session = session
        self.id = id
    }

    func start(store: Store, types: Set<ObjectType>?, predicate: SamplePredicate?, from anchor: UInt64, limit: Int, budget: Int) {
        guard state == .starting else { return }
        if cancelRequested || session.connection.isClosed {
            state = .ended
            if cancelRequested { writeFinal("cancelled", [:]) }
            router?.streamEnded(id: id, in: session, stream: self)
            return
        }
        state = .running
        self.anchor = anchor
        startedQuery = Query(store: store, types: types, predicate: predicate, limit: limit, budget: budget)
        schedule()
    }

    /// The first page failed (its error is the reply): nothing to follow.
    func failedToStart() {
        state = .ended
        router?.streamEnded(id: id, in: session, stream: self)
    }

    /// Continues from `anchor` on the worker queue (on the server queue).
    private func schedule() {
        let from = anchor
        router?.worker.async { [self] in step(from: from)?.send() }
    }

    /// The follow engine saw a commit pass `anchor`: the step runs right here, on the
    /// engine's queue, so a follower the commit does not concern (its pages match nothing)
    /// reads and parks again within the engine's one wake-up, with no hop of its own. What
    /// is left for the server queue is returned: the engine sends one pass's in one hop.
    func resume(from anchor: UInt64) -> ServerHop? {
        step(from: anchor)
    }

    /// Pages of only non-matching items read in a row before the stream hops through the
    /// server queue anyway (so a narrow follower over a long backlog shares the queues).
    static let quietPagesInline = 8

    /// On the worker queue (or the follow engine's): the next page after `from`, or, when
    /// nothing new is durable, parking in the follow engine until there is. An idle follower
    /// costs no hop at all.
    private func step(from start: UInt64) -> ServerHop? {
        guard let query = startedQuery else { return nil }
        guard let engine = router?.follow else { return nil }
        var from = start
        var quietPages = 0
        while true {
            guard active.load(ordering: .acquiring) else { return nil }
            if !engine.proceedOrPark(self, at: from) {
                // Ended meanwhile: `cancel`/`stop` cleared `active` before unparking, so one of
                // the two unparks sees the other.
                if !active.load(ordering: .acquiring) { engine.unpark(self) }
                return nil
            }
            engine.pageRead()
            let result = Result { () throws(StrapError) -> AnchoredResult in
                try query.store.anchored(types: query.types, predicate: query.predicate, anchor: from, limit: query.limit)
            }
            switch result {
            case .success(let page):
                // Cut to the budget, a page always fits the client buffer; it then ends at the
                // last item written and the next page starts right after it.
                let (lines, pageEnd) = Self.eventLines(page, id: id, budget: query.budget)
                // A page of only non-matching items writes nothing: go on from its anchor. The
                // server queue's `anchor` catches up with the next page that writes.
                if lines.isEmpty, pageEnd > from, quietPages < Self.quietPagesInline {
                    quietPages += 1
                    engine.quietPage()
                    from = pageEnd
                    continue
                }
                return ServerHop(queue: session.connection.queue) { [self] in
                    guard state == .running else { return }
                    anchor = max(anchor, pageEnd)
                    if lines.isEmpty { schedule() } else { write(lines) }
                }
            case .failure(let error):
                let data = FollowerError.data(error)
                return ServerHop(queue: session.connection.queue) { [self] in stop(kind: "error", data: data) }
            }
        }
    }

    private func write(_ lines: [UInt8]) {
        let connection = session.connection
        switch connection.write(lines) {
        case .queued:
            if connection.isAboveHighWater { paused = true } else { schedule() }
        case .rejected where connection.isAboveHighWater:
            paused = true
            retry = lines
        case .rejected:
            // Only one item larger than the whole budget gets here (pages are cut to it).
            stop(kind: "error", data: FollowerError.refused("an item", bytes: lines.count))
        case .closed:
            state = .ended
            deactivate()
        }
    }

    func outputDrained() {
        guard state == .running, paused else { return }
        paused = false
        if let lines = retry {
            retry = nil
            write(lines)
        } else {
            schedule()
        }
    }

    func cancel(notify: Bool) {
        switch state {
        case .starting:
            // The first page is still being read; its reply goes first, then `cancelled`.
            cancelRequested = notify
            if !notify { state = .ended }
        case .running:
            state = .ended
            deactivate()
            retry = nil
            if notify { writeFinal("cancelled", [:]) }
        case .ended:
            break
        }
    }

    private func stop(kind: String, data: JSONObject) {
        guard state == .running else { return }
        state = .ended
        deactivate()
        writeFinal(kind, data)
        router?.streamEnded(id: id, in: session, stream: self)
    }

    /// No step goes on after this; a parked follower is woken no more.
    private func deactivate() {
        active.store(false, ordering: .releasing)
        router?.follow.unpark(self)
    }

    private func writeFinal(_ kind: String, _ data: JSONObject) {
        session.connection.write(Reply.event(id: id, kind: kind, data: data))
    }

    /// The page's event lines, at most `budget` bytes (at least one item), and the anchor
    /// the next page starts from: the page's, or the last item written when cut.
    static func eventLines(_ page: AnchoredResult, id: RequestID, budget: Int) -> (lines: [UInt8], anchor: UInt64) {
        var lines: [UInt8] = []
        var scratch: [UInt8] = []
        var written: UInt64 = 0
        for item in AnchoredItem.merged(page) {
            scratch.removeAll(keepingCapacity: true)
            let mark = lines.count
            switch item {
            case .added(let o):
                SampleJSON.append(o, into: &scratch)
                Reply.appendEvent(id: id, kind: "added", dataJSON: scratch, into: &lines)
            case .deleted(let d):
                SampleJSON.append(d, into: &scratch)
                Reply.appendEvent(id: id, kind: "deleted", dataJSON: scratch, into: &lines)
            }
            if lines.count > budget, mark > 0 {
                lines.removeSubrange(mark...)
                return (lines, written)
            }
            written = item.anchor
        }
        return (lines, page.anchor)
    }
}

/// Work a follow step leaves for the server queue (writing its page, or its error).
struct ServerHop {
    let queue: DispatchQueue
    let work: @Sendable () -> Void

    func send() { queue.async(execute: work) }
}
