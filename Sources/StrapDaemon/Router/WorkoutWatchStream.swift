import FoundationEssentials
import StrapModel
import StrapWire
import StrapWorkout

extension RequestRouter {
    /// `workout.watch {}` → `ok` with `{"sessions": [...]}` (open and recently ended, as
    /// `workout.list` gives them), then `created`, `state`, `saved`, `discarded` and `failed`
    /// events for every session on the box until `cancel` or disconnect.
    func workoutWatch(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        let service = try workouts
        let stream = WorkoutWatchStream(router: self, session: session, id: request.id)
        streamStarted(stream, id: request.id, in: session)
        session.pendingReplies += 1
        // Registering takes the engine's lock, which a command may hold across a journal sync.
        worker.async { [self] in
            let (token, sessions) = service.watch { [weak stream] a in stream?.enqueue(a) }
            let body = Result { () throws(StrapError) -> String in
                "{\"sessions\":[" + (try sessions.map(Self.json).joined(separator: ",")) + "]}"
            }
            session.connection.queue.async { [self] in
                session.pendingReplies -= 1
                switch body {
                case .success(let json):
                    stream.started(token: token, service: service, reply: Reply.success(id: request.id, resultJSON: Array(json.utf8)))
                case .failure(let error):
                    service.unwatch(token)
                    stream.failedToStart(Reply.failure(id: request.id, error: WireError(error)))
                    streamEnded(id: request.id, in: session, stream: stream)
                }
                finishIfIdle(session)
            }
        }
    }
}

/// One `workout.watch` stream. Announcements reach it on any queue and are written on the
/// connection's, after the `ok`. They are rare and never dropped: one that does not fit a
/// follower who stopped reading ends the stream with an `error` (`busy`), as `workout.live` does.
final class WorkoutWatchStream: RouterStream, @unchecked Sendable {
    /// Weak: a stream's last hop may run after the router is gone (a daemon stopped).
    private weak var router: RequestRouter?
    let session: ClientSession
    let id: RequestID
    /// Confined to the connection's queue.
    private var token: Int?
    private var service: WorkoutService?
    private var waiting: [WorkoutAnnouncement] = []
    private var isStarted = false
    private var ended = false
    private var pendingError: [UInt8]?

    init(router: RequestRouter, session: ClientSession, id: RequestID) {
        self.router = router
        self.session = session
        self.id = id
    }

    /// Any queue.
    func enqueue(_ announcement: WorkoutAnnouncement) {
        session.connection.queue.async { [self] in
            if isStarted { write(announcement) } else { waiting.append(announcement) }
        }
    }

    func started(token: Int, service: WorkoutService, reply: [UInt8]) {
        self.token = token
        self.service = service
        guard !ended else { service.unwatch(token); return }
        session.connection.write(reply)
        isStarted = true
        let pending = waiting
        waiting = []
        for a in pending { write(a) }
    }

    func failedToStart(_ reply: [UInt8]) {
        ended = true
        session.connection.write(reply)
    }

    private func write(_ announcement: WorkoutAnnouncement) {
        guard !ended else { return }
        let (kind, data) = Self.encode(announcement)
        if session.connection.write(Reply.event(id: id, kind: kind, data: data)) == .rejected {
            end()
            pendingError = Reply.event(id: id, kind: "error", data: [
                "code": .string(ErrorCode.busy.rawValue),
                "message": .string("this watcher fell behind: a \(kind) event did not fit its connection's output buffer " +
                                   "(client_buffer), so the stream ends here; list the sessions with workout.list and watch again"),
            ])
            flushPendingError()
        }
    }

    private func flushPendingError() {
        guard let error = pendingError else { return }
        if session.connection.write(error) == .rejected { return }
        pendingError = nil
        router?.streamEnded(id: id, in: session, stream: self)
    }

    func outputDrained() { flushPendingError() }

    func cancel(notify: Bool) {
        if let error = pendingError {
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
        if let token, let service { service.unwatch(token) }
    }

    /// Every event names the session (upper case) and the state it is in after the change.
    static func encode(_ a: WorkoutAnnouncement) -> (String, JSONObject) {
        func time(_ t: Millis) -> JSONValue { .string(RFC3339.string(t)) }
        switch a {
        case let .created(session, configuration, t):
            var o: JSONObject = ["session": .string(session.uuidString), "state": .string(WorkoutSessionState.notStarted.rawValue),
                                 "time": time(t)]
            // As `workout.get` shows it (activity, athlete, devices, metadata).
            o["configuration"] = (try? RequestRouter.json(configuration)).flatMap { try? JSONParser.parse(Array($0.utf8)) } ?? .null
            return ("created", o)
        case let .state(session, from, to, t):
            return ("state", ["session": .string(session.uuidString), "state": .string(to.rawValue), "from": .string(from.rawValue),
                              "time": time(t)])
        case let .saved(session, workout, t):
            return ("saved", ["session": .string(session.uuidString), "state": .string(WorkoutSessionState.ended.rawValue),
                              "workout": .string(workout.uuid.uuidString), "anchor": .int(Int64(clamping: workout.anchor)),
                              "time": time(t)])
        case let .discarded(session, state, t):
            return ("discarded", ["session": .string(session.uuidString), "state": state.map { .string($0.rawValue) } ?? .null,
                                  "time": time(t)])
        case .failed(let f):
            return ("failed", WorkoutLiveStream.failureJSON(f))
        }
    }
}
