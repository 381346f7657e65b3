import Dispatch
import StrapIngest
import StrapModel
import StrapOS
import StrapSystem
import StrapWire
import Synchronization

extension RequestRouter {
    /// `live.subscribe {"types", "devices"}` → `ok`, then `sample`, `device` and `link` events
    /// (and `dropped` after falling behind) until cancelled or disconnected.
    func liveSubscribe(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["types", "devices"])
        let types = try session.grants.readable(asked: try params.quantityTypes("types"))
        let devices = try params.addresses("devices").map(Set.init)
        // Subscribed before the reply goes out: a client that sees the reply and then makes a
        // sensor notify must get that notification (a reply written first left a window, on
        // a loaded machine, in which the events went to no subscriber). The fan-out writes on
        // this queue, after this turn, so the reply still comes first.
        let stream = LiveStream(fanout: fanout, session: session, id: request.id, types: types, devices: devices)
        if streamStarted(stream, id: request.id, in: session) { fanout.add(stream) }
        session.connection.write(Reply.success(id: request.id))
    }
}

/// One subscription of the router to the live hub, fanned out to every `live.subscribe`
/// stream. Each event is encoded once, on the publisher's thread, into a buffer both sides
/// reuse (`LiveLines`), and the same bytes go to every subscriber.
final class LiveFanout: @unchecked Sendable {
    private let hub: LiveHub
    /// The streams by identity, and the same as a list made on each change (rare), so that a
    /// turn reads it without building an array.
    private struct Subscribers {
        var byID: [ObjectIdentifier: LiveStream] = [:]
        var list: [LiveStream] = []
    }
    private let subscribers = Mutex(Subscribers())
    /// Encoded events waiting for the server queue, and whether a drain is scheduled there.
    /// Everything that arrives while a fan-out runs goes out together in the next one, one
    /// write per subscriber: when the machine falls behind, the work per event shrinks and
    /// the backlog clears instead of growing a queue of small fan-outs. Bounded: beyond
    /// `maximumPendingEvents` events are not kept — each subscriber is told how many it
    /// missed (`dropped`) — so a flood cannot grow memory.
    private struct Pending {
        var lines = LiveLines()
        var missed = 0
        var scheduled = false
    }
    private let pending = Mutex(Pending())
    static let maximumPendingEvents = 16_384
    private let hubSubscription = Mutex<Int?>(nil)
    /// Confined to the server queue (`fanOut`): the turn's events, swapped with `pending`'s
    /// (emptied) under its lock, and the lines of the first subscriber id, built again each
    /// turn in the same storage. Kept between turns, so a turn allocates nothing for them.
    /// One property reached once per turn (`TurnBuffers`): each of the three reached on its
    /// own from the class was a dynamic exclusivity check, six per notification.
    private var buffers = TurnBuffers()
    /// The fan-out's turn of the server queue as a work item made once (`RenewingWorkItem`).
    private let turn = Mutex(RenewingWorkItem())

    init(hub: LiveHub) {
        self.hub = hub
    }

    var count: Int { subscribers.withLock { $0.byID.count } }

    func add(_ stream: LiveStream) {
        let first = subscribers.withLock { s in
            s.byID[ObjectIdentifier(stream)] = stream
            s.list = Array(s.byID.values)
            return s.byID.count == 1
        }
        // Subscribed lazily, outside the lock: the hub delivers on its queue and takes it.
        if first, hubSubscription.withLock({ $0 == nil }) {
            let id = hub.subscribe { [weak self] events in self?.publish(events) }
            let extra = hubSubscription.withLock { current -> Int? in
                if current == nil { current = id; return nil }
                return id
            }
            if let extra { hub.unsubscribe(extra) }
        }
    }

    func remove(_ stream: LiveStream) {
        subscribers.withLock { s in
            if s.byID.removeValue(forKey: ObjectIdentifier(stream)) != nil { s.list = Array(s.byID.values) }
        }
    }

    func detach() {
        if let id = hubSubscription.withLock({ s -> Int? in defer { s = nil }; return s }) { hub.unsubscribe(id) }
    }

    private func publish(_ events: [LiveEvent]) {
        guard let queue = subscribers.withLock({ $0.list.first?.session.connection.queue }) else { return }
        // Encoded under the lock, straight into the pending buffer: the server queue takes the
        // lock only to swap buffers, and publishers (the pipeline, the RSSI readings) keep
        // their order.
        let schedule = pending.withLock { p -> Bool in
            let before = p.lines.count
            if before >= Self.maximumPendingEvents {
                p.missed += events.reduce(0) { n, e in
                    switch e {
                    case .samples(let s): n + s.count
                    case .quietNotification: n
                    default: n + 1
                    }
                }
            } else {
                for event in events { p.lines.append(event) }
                // A turn of quiet notifications only: nothing for clients, no turn of the server queue.
                if p.lines.count == before { return false }
            }
            defer { p.scheduled = true }
            return !p.scheduled
        }
        // Every connection lives on the server's one queue: one turn of it for all subscribers,
        // taken on this thread (`sync`). An idle queue runs the turn right here; a hop (`async`)
        // woke a Dispatch worker for every notification, the largest share of strapd's CPU in
        // the lab's profile (docs/benchmarks.md). A busy queue makes this thread wait for its
        // turn, which is one request's parsing or one reply's write: work that may take long
        // (store scans, device snapshots, exports) runs on the router's worker, never on the
        // server queue. The server queue in turn never waits on the pipeline's or the Bluetooth
        // queue, which this thread may be holding (docs/architecture.md#queues-and-who-waits-on-whom).
        if schedule { queue.sync(execute: turnItem(on: queue)) }
    }

    /// The work item that runs `fanOut` on `queue`: the same one each turn, renewed now and then.
    private func turnItem(on queue: DispatchQueue) -> DispatchWorkItem {
        turn.withLock { t in
            t.item(on: queue) { DispatchWorkItem { [weak self] in self?.fanOut(on: queue) } }
        }
    }

    /// On the server queue.
    private func fanOut(on queue: DispatchQueue) {
        dispatchPrecondition(condition: .onQueue(queue))
        buffers.run(self)
    }

    private struct TurnBuffers: ~Copyable {
        var draining = LiveLines()
        var sharedLines: [UInt8] = []
        var batch = WriteBatch()

        /// The fan-out's turn, on the server queue.
        mutating func run(_ fanout: LiveFanout) {
            let missed = fanout.pending.withLock { p in
                swap(&p.lines, &draining)
                defer { p.missed = 0; p.scheduled = false }
                return p.missed
            }
            defer { draining.removeAll() }
            let streams = fanout.subscribers.withLock { $0.list }
            // Subscribers that take everything and share a request id (most use id 1) share one
            // buffer of lines: the same bytes go to each socket, built once. Other ids get theirs.
            var sharedID: RequestID?
            var others: [(id: RequestID, lines: [UInt8])] = []
            // The sends leave together, from more than one thread (`WriteBatch`: most of a send
            // is waking its reader).
            for stream in streams {
                if missed > 0 { stream.noteMissed(missed) }
                if draining.isEmpty { continue }
                if stream.admitsEverything || draining.entries.allSatisfy(stream.admits) {
                    let lines: [UInt8]
                    if sharedID == nil || sharedID == stream.id {
                        if sharedID == nil {
                            sharedID = stream.id
                            sharedLines.removeAll(keepingCapacity: true)
                            _ = draining.appendLines(prefix: stream.linePrefix, into: &sharedLines) { _ in true }
                        }
                        lines = sharedLines
                    } else if let built = others.first(where: { $0.id == stream.id }) {
                        lines = built.lines
                    } else {
                        var built: [UInt8] = []
                        _ = draining.appendLines(prefix: stream.linePrefix, into: &built) { _ in true }
                        others.append((stream.id, built))
                        lines = built
                    }
                    stream.deliver(lines: lines, count: draining.count, in: &batch)
                } else {
                    var mine: [UInt8] = []
                    let n = draining.appendLines(prefix: stream.linePrefix, into: &mine, admits: stream.admits)
                    if n > 0 { stream.deliver(lines: mine, count: n, in: &batch) }
                }
            }
            batch.send()
        }
    }
}

/// One `live.subscribe`. Events for a connection above its high-water mark are dropped and
/// counted; once it drains, a `dropped` event says how many it missed.
final class LiveStream: RouterStream, @unchecked Sendable {
    /// Weak: the stream may outlive the router that owns the fan-out.
    private weak var fanout: LiveFanout?
    let session: ClientSession
    let id: RequestID
    private let types: Set<QuantityType>?
    private let devices: Set<SensorAddress>?
    /// No filter: every event is this stream's.
    let admitsEverything: Bool
    /// `{"id":N,"event":"`: what each of this stream's lines starts with, before the event's
    /// tail (`LiveLines`).
    let linePrefix: [UInt8]
    /// Confined to the server queue.
    private var ended = false
    private var dropped = 0

    init(fanout: LiveFanout, session: ClientSession, id: RequestID, types: Set<QuantityType>?, devices: Set<SensorAddress>?) {
        self.fanout = fanout
        self.session = session
        self.id = id
        self.types = types
        self.devices = devices
        admitsEverything = types == nil && devices == nil
        linePrefix = Self.linePrefix(id: id)
    }

    static func linePrefix(id: RequestID) -> [UInt8] {
        var prefix: [UInt8] = []
        prefix.appendLiteral(#"{"id":"#)
        JSONWriter.write(id.json, into: &prefix)
        prefix.appendLiteral(#","event":""#)
        return prefix
    }

    /// Any queue; reads only immutable state.
    func admits(_ event: LiveLines.Entry) -> Bool {
        if let devices, !devices.contains(event.address) { return false }
        if let types, let t = event.type, !types.contains(t) { return false }
        return true
    }

    /// Events the fan-out could not even queue (the server queue was too far behind); an
    /// upper bound, since they are counted before this stream's filter.
    func noteMissed(_ count: Int) {
        guard !ended else { return }
        dropped += count
    }

    /// `lines` holds `count` events, already in this stream's id.
    func deliver(lines: [UInt8], count: Int, in batch: inout WriteBatch) {
        guard !ended else { return }
        let connection = session.connection
        if connection.isAboveHighWater {
            dropped += count
            return
        }
        if dropped > 0 {
            // Its own write: the event lines are shared with other subscribers.
            var notice: [UInt8] = []
            appendDropped(dropped, into: &notice)
            switch connection.write(notice, in: &batch) {
            case .queued: dropped = 0
            case .rejected: dropped += count; return
            case .closed: ended = true; return
            }
        }
        switch connection.write(lines, in: &batch) {
        case .queued: break
        case .rejected: dropped += count
        case .closed: ended = true
        }
    }

    func outputDrained() {
        guard !ended, dropped > 0 else { return }
        var lines: [UInt8] = []
        appendDropped(dropped, into: &lines)
        if session.connection.write(lines) == .queued { dropped = 0 }
    }

    func cancel(notify: Bool) {
        guard !ended else { return }
        ended = true
        fanout?.remove(self)
        if notify { session.connection.write(Reply.event(id: id, kind: "cancelled", data: ["dropped": .int(Int64(dropped))])) }
    }

    private func appendDropped(_ count: Int, into lines: inout [UInt8]) {
        Reply.appendEvent(id: id, kind: "dropped", dataJSON: Array("{\"count\":\(count)}".utf8), into: &lines)
    }
}
