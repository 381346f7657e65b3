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
                    stream.started(reply: Reply.success(id: request.id, resultJSON: Array(json.utf8))) { service.unwatch(token) }
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

/// One `workout.watch` stream (a `WorkoutEventStream`). Announcements are rare and never
/// dropped: one that does not fit a watcher who stopped reading ends the stream with an
/// `error` (`busy`), as `workout.live` does.
final class WorkoutWatchStream: WorkoutEventStream<WorkoutAnnouncement>, @unchecked Sendable {
    init(router: RequestRouter, session: ClientSession, id: RequestID) {
        super.init(router: router, session: session, id: id, reader: "watcher",
                   startOver: "list the sessions with workout.list and watch again")
    }

    override func encode(_ a: WorkoutAnnouncement) -> (kind: String, data: [UInt8]) {
        let (kind, data) = Self.encode(a)
        return (kind, JSONWriter.bytes(.object(data)))
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
