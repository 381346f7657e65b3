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
                    stream.started(reply: Reply.success(id: request.id, resultJSON: Array(((try? Self.json(info)) ?? "{}").utf8))) {
                        service.unfollow(workout, token: token)
                    }
                case .failure(let error):
                    stream.failedToStart(Reply.failure(id: request.id, error: WireError(error)))
                    streamEnded(id: request.id, in: session, stream: stream)
                }
                finishIfIdle(session)
            }
        }
    }
}

/// One `workout.live` follower (a `WorkoutEventStream`). A follower above its connection's
/// high-water mark misses statistics and is told how many (`dropped`); `workout.get` gives
/// the whole picture again. Any other event is delivered or ends the stream with an `error`.
final class WorkoutLiveStream: WorkoutEventStream<WorkoutFeedEvent>, @unchecked Sendable {
    let workout: UUID
    /// Confined to the connection's queue.
    private var dropped = 0

    init(router: RequestRouter, session: ClientSession, id: RequestID, workout: UUID) {
        self.workout = workout
        super.init(router: router, session: session, id: id, reader: "follower",
                   startOver: "read the session with workout.get and follow it again")
    }

    override func encode(_ event: WorkoutFeedEvent) -> (kind: String, data: [UInt8]) { Self.encode(event) }

    /// State changes and saves are rare: never dropped; statistics are dropped when behind.
    override func admit(_ event: WorkoutFeedEvent) -> Bool {
        if case .statistics = event, session.connection.isAboveHighWater {
            dropped += 1
            return false
        }
        if dropped > 0 { flushDropped() }
        return true
    }

    override func isLast(_ event: WorkoutFeedEvent) -> Bool {
        if case .finished = event { return true }
        return false
    }

    private func flushDropped() {
        if session.connection.write(Reply.event(id: id, kind: "dropped", dataJSON: Array("{\"count\":\(dropped)}".utf8))) == .queued {
            dropped = 0
        }
    }

    override func outputDrained() {
        if owesError { super.outputDrained() } else if !ended, dropped > 0 { flushDropped() }
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
