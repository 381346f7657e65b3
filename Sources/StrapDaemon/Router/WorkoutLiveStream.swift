import FoundationEssentials
import StrapModel
import StrapWire
import StrapWorkout

extension RequestRouter {
    /// `workout.live {"session"}` → `ok` with the session as `workout.get` shows it, then
    /// `state`, `event`, `message`, `statistics` (at most once a second), and finally `saved`
    /// or `discarded` followed by `finished`. Any number of followers per session.
    func workoutLive(_ request: Request, _ session: ClientSession) throws(WireError) {
        let workout = try Params(request, allowed: ["session"]).requiredUUID("session")
        let service = try workouts
        let stream = WorkoutLiveStream(router: self, session: session, id: request.id, workout: workout)
        streamStarted(stream, id: request.id, in: session)
        session.pendingReplies += 1
        // Registering takes the engine's lock, which a command may hold across a journal sync.
        worker.async { [self] in
            let outcome: Result<(token: Int, info: WorkoutSessionInfo), StrapError>
            do throws(StrapError) {
                outcome = .success(try service.follow(workout, follower: .init(deliver: { [weak stream] e in stream?.enqueue(e) },
                                                                                connection: session.connection.id)))
            } catch { outcome = .failure(error) }
            session.connection.queue.async { [self] in
                session.pendingReplies -= 1
                switch outcome {
                case .success(let (token, info)):
                    stream.started(token: token, service: service, reply: Reply.success(id: request.id, resultJSON: Array(((try? Self.json(info)) ?? "{}").utf8)))
                case .failure(let error):
                    stream.failedToStart(Reply.failure(id: request.id, error: WireError(error)))
                    streamEnded(id: request.id, in: session, stream: stream)
                }
                finishIfIdle(session)
            }
        }
    }
}

/// One `workout.live` follower. Events reach it on any queue and are written on the
/// connection's; until the `ok` is written they wait, so the reply always comes first. A
/// follower above its connection's high-water mark misses statistics and is told how many
/// (`dropped`); `workout.get` gives the whole picture again. Any other event is delivered or
/// the stream ends with an `error` (`busy`) after the last one delivered: never a silent gap.
final class WorkoutLiveStream: RouterStream, @unchecked Sendable {
    /// Weak: a stream's last hop may run after the router is gone (a daemon stopped).
    private weak var router: RequestRouter?
    let session: ClientSession
    let id: RequestID
    let workout: UUID
    /// Confined to the connection's queue.
    private var token: Int?
    private var service: WorkoutService?
    private var waiting: [WorkoutFeedEvent] = []
    private var isStarted = false
    private var ended = false
    private var dropped = 0
    /// The `error` that ends an overflowed stream, until the connection has room for it.
    private var pendingError: [UInt8]?

    init(router: RequestRouter, session: ClientSession, id: RequestID, workout: UUID) {
        self.router = router
        self.session = session
        self.id = id
        self.workout = workout
    }

    /// Any queue.
    func enqueue(_ event: WorkoutFeedEvent) {
        session.connection.queue.async { [self] in
            if isStarted { write(event) } else { waiting.append(event) }
        }
    }

    func started(token: Int, service: WorkoutService, reply: [UInt8]) {
        self.token = token
        self.service = service
        guard !ended else { service.unfollow(workout, token: token); return }
        session.connection.write(reply)
        isStarted = true
        let pending = waiting
        waiting = []
        for e in pending { write(e) }
    }

    func failedToStart(_ reply: [UInt8]) {
        ended = true
        session.connection.write(reply)
    }

    private func write(_ event: WorkoutFeedEvent) {
        guard !ended else { return }
        let (kind, data) = Self.encode(event)
        // State changes and saves are rare: never dropped; statistics are dropped when behind.
        if case .statistics = event, session.connection.isAboveHighWater {
            dropped += 1
            return
        }
        if dropped > 0 { flushDropped() }
        switch session.connection.write(Reply.event(id: id, kind: kind, dataJSON: data)) {
        case .queued:
            guard case .finished = event else { return }
            end()
            router?.streamEnded(id: id, in: session, stream: self)
        case .rejected:
            overflowed(by: kind)
        case .closed:
            break
        }
    }

    /// An event the stream promises not to drop does not fit the connection's buffer (a
    /// follower that stopped reading while `message`s, which are never dropped either, filled
    /// it). Rather than leave a gap the follower cannot see, the stream ends here: its last
    /// event is an `error`, written as soon as there is room for it.
    private func overflowed(by kind: String) {
        end()
        pendingError = Reply.event(id: id, kind: "error", data: [
            "code": .string(ErrorCode.busy.rawValue),
            "message": .string("this follower fell behind: a \(kind) event did not fit its connection's output buffer " +
                               "(client_buffer), so the stream ends here; read the session with workout.get and follow it again"),
        ])
        flushPendingError()
    }

    private func flushPendingError() {
        guard let error = pendingError else { return }
        if session.connection.write(error) == .rejected { return }
        pendingError = nil
        router?.streamEnded(id: id, in: session, stream: self)
    }

    private func flushDropped() {
        if session.connection.write(Reply.event(id: id, kind: "dropped", dataJSON: Array("{\"count\":\(dropped)}".utf8))) == .queued {
            dropped = 0
        }
    }

    func outputDrained() {
        if pendingError != nil { flushPendingError() } else if !ended, dropped > 0 { flushDropped() }
    }

    func cancel(notify: Bool) {
        if let error = pendingError {
            // Ended by the overflow already: the follower learns that, not a plain `cancelled`.
            pendingError = nil
            if notify { session.connection.write(error) }
            return
        }
        guard !ended else { return }
        end()
        if notify { session.connection.write(Reply.event(id: id, kind: "cancelled", data: [:])) }
    }

    private func end() {
        ended = true
        if let token, let service { service.unfollow(workout, token: token) }
    }

    static func encode(_ event: WorkoutFeedEvent) -> (String, [UInt8]) {
        func json<T: Encodable>(_ v: T) -> [UInt8] { Array(((try? RequestRouter.json(v)) ?? "{}").utf8) }
        switch event {
        case let .state(from, to, time):
            return ("state", JSONWriter.bytes(.object(["from": .string(from.rawValue), "to": .string(to.rawValue),
                                                       "time": .string(RFC3339.string(time))])))
        case .event(let e): return ("event", json(e))
        case let .message(text, time):
            return ("message", Array("{\"payload\":\(text),\"time\":\"\(RFC3339.string(time))\"}".utf8))
        case .statistics(let s): return ("statistics", json(s))
        case .saved(let w): return ("saved", Array("{\"workout\":".utf8) + json(w) + [UInt8(ascii: "}")])
        case .discarded(let time): return ("discarded", JSONWriter.bytes(.object(["time": .string(RFC3339.string(time))])))
        case .failed(let f): return ("failed", JSONWriter.bytes(.object(failureJSON(f))))
        case .finished: return ("finished", Array("{}".utf8))
        case .shutdown: return ("shutdown", Array("{}".utf8))
        }
    }

    /// A `failed` event's data (workout.live and workout.watch alike).
    static func failureJSON(_ f: SessionFailure) -> JSONObject {
        let e = WireError(f.error)
        return ["session": .string(f.session.uuidString), "state": .string(f.state.rawValue), "operation": .string(f.operation),
                "code": .string(e.code.rawValue), "message": .string(e.message), "time": .string(RFC3339.string(f.time))]
    }
}
