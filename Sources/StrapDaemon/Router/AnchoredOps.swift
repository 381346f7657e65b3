import StrapModel
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
        let budget = configuration.maximumReplyBytes
        let store = context.store
        let stream = follow ? FollowStream(router: self, session: session, id: id) : nil
        if let stream { streamStarted(stream, id: id, in: session) }
        session.pendingReplies += 1
        worker.async { [self] in
            var next: UInt64?
            let bytes: [UInt8]
            do throws(StrapError) {
                let page = try store.anchored(types: types, predicate: predicate, anchor: anchor, limit: limit)
                let (body, continueFrom) = Self.encodePage(page, budget: budget)
                next = continueFrom
                bytes = Reply.success(id: id, resultJSON: body)
            } catch {
                bytes = Reply.failure(id: id, error: WireError(error))
            }
            session.connection.queue.async { [self, next] in
                session.pendingReplies -= 1
                write(bytes, id: id, to: session)
                if let stream {
                    if let next {
                        stream.start(store: store, types: types, predicate: predicate, from: next, limit: configuration.followPageLimit)
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
                guard let t = QuantityType(rawValue: n) else { throw .bad("unknown type \"\(n)\"") }
                q.insert(t)
            }
            quantities = q
        }
        if session.grants.readableTypes != nil, workouts {
            throw WireError(.notAuthorized, "not authorized to read workouts")
        }
        guard let readable = try session.grants.readable(asked: quantities) else { return nil }
        var out = Set(readable.map(ObjectType.quantity))
        if workouts { out.insert(.workout) }
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
            case .added(let o): SampleEncoder.append(o, into: &scratch)
            case .deleted(let d): SampleEncoder.append(d, into: &scratch)
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

/// The follow phase of `samples.anchored`: the store's follow stream from the first page's
/// anchor, one event line per item. While the connection is above its high-water mark the
/// stream waits, and the store's follower pauses at its anchor: nothing is lost or buffered
/// without bound, and it resumes exactly where it stopped.
final class FollowStream: RouterStream, @unchecked Sendable {
    private enum State { case starting, running, ended }
    private unowned let router: RequestRouter
    private let session: ClientSession
    private let id: RequestID
    /// Confined to the server queue.
    private var state = State.starting
    private var cancelRequested = false
    private var waiter: CheckedContinuation<Bool, Never>?
    private var retry: [UInt8]?
    private var task: Task<Void, Never>?

    init(router: RequestRouter, session: ClientSession, id: RequestID) {
        self.router = router
        self.session = session
        self.id = id
    }

    func start(store: Store, types: Set<ObjectType>?, predicate: SamplePredicate?, from anchor: UInt64, limit: Int) {
        guard state == .starting else { return }
        if cancelRequested || session.connection.isClosed {
            state = .ended
            if cancelRequested { writeFinal("cancelled", [:]) }
            return
        }
        state = .running
        let id = self.id
        task = Task.detached { [self] in
            do {
                for try await page in store.follow(types: types, predicate: predicate, from: anchor, limit: limit) {
                    var lines: [UInt8] = []
                    var scratch: [UInt8] = []
                    for item in AnchoredItem.merged(page) {
                        scratch.removeAll(keepingCapacity: true)
                        switch item {
                        case .added(let o):
                            SampleEncoder.append(o, into: &scratch)
                            Reply.appendEvent(id: id, kind: "added", dataJSON: scratch, into: &lines)
                        case .deleted(let d):
                            SampleEncoder.append(d, into: &scratch)
                            Reply.appendEvent(id: id, kind: "deleted", dataJSON: scratch, into: &lines)
                        }
                    }
                    guard await deliver(lines) else { return }
                }
                await end(kind: "finished", data: ["reason": .string("the store closed")])
            } catch let error as StrapError {
                let e = WireError(error)
                var data: JSONObject = ["code": .string(e.code.rawValue), "message": .string(e.message)]
                if let extra = e.data { for (k, v) in extra.entries { data[k] = v } }
                await end(kind: "error", data: data)
            } catch {
                await end(kind: "error", data: ["code": .string("internal"), "message": .string("\(error)")])
            }
        }
    }

    /// The first page failed (its error is the reply): nothing to follow.
    func failedToStart() {
        state = .ended
        router.streamEnded(id: id, in: session, stream: self)
    }

    /// Writes one page of events; suspends while the client is above high water.
    /// False when the stream ended meanwhile.
    private func deliver(_ lines: [UInt8]) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            session.connection.queue.async { [self] in
                guard state == .running else { return continuation.resume(returning: false) }
                write(lines, continuation)
            }
        }
    }

    private func write(_ lines: [UInt8], _ continuation: CheckedContinuation<Bool, Never>) {
        let connection = session.connection
        switch connection.write(lines) {
        case .queued:
            if connection.isAboveHighWater { waiter = continuation } else { continuation.resume(returning: true) }
        case .rejected where connection.isAboveHighWater:
            waiter = continuation
            retry = lines
        case .rejected:
            // A page larger than the whole buffer: the follow page limit is set far below it.
            continuation.resume(returning: false)
            stop(kind: "error", data: ["code": .string("internal"), "message": .string("follow page larger than the client buffer")])
        case .closed:
            continuation.resume(returning: false)
        }
    }

    func outputDrained() {
        guard let continuation = waiter else { return }
        waiter = nil
        if let lines = retry {
            retry = nil
            write(lines, continuation)
        } else {
            continuation.resume(returning: true)
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
            task?.cancel()
            waiter?.resume(returning: false)
            waiter = nil
            if notify { writeFinal("cancelled", [:]) }
        case .ended:
            break
        }
    }

    private func end(kind: String, data: JSONObject) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.connection.queue.async { [self] in
                stop(kind: kind, data: data)
                continuation.resume()
            }
        }
    }

    private func stop(kind: String, data: JSONObject) {
        guard state == .running else { return }
        state = .ended
        task?.cancel()
        writeFinal(kind, data)
        router.streamEnded(id: id, in: session, stream: self)
    }

    private func writeFinal(_ kind: String, _ data: JSONObject) {
        session.connection.write(Reply.event(id: id, kind: kind, data: data))
    }
}
