import FoundationEssentials
import StrapModel
import StrapWire

/// A session's command that strapd could not journal or save (HealthKit's
/// `workoutSession(_:didFailWithError:)`; docs/protocol-workouts.md *Failures*). The session
/// goes on in ``state``; the command may be sent again.
public struct WorkoutFailure: Sendable, Equatable {
    /// The session.
    public var session: UUID
    /// The command that failed: `prepare`, `start`, `pause`, `resume`, `lap`, `marker`, `stop`,
    /// `end`, `save` or `discard`.
    public var operation: String
    /// Why, with the daemon's code (`unavailable` for a disk that cannot be written).
    public var error: StrapKitError
    /// The session's state, unchanged by the failed command.
    public var state: WorkoutSession.State?
    /// When it failed.
    public var date: Date

    static func read(_ data: JSONObject) throws(StrapKitError) -> WorkoutFailure {
        guard let session = data.string("session").flatMap(UUID.init(uuidString:)) else { throw .malformedReply("failed without session") }
        return WorkoutFailure(session: session, operation: data.string("operation") ?? "", error: StrapKitError(wire: data),
                              state: data.string("state").flatMap(WorkoutSession.State.init(rawValue:)),
                              date: Date(millis: try data.time("time")))
    }
}

/// What `workout.watch` announces about the sessions on the box (HealthKit's
/// `workoutSessionMirroringStartHandler`, for every session at once).
public enum WorkoutAnnouncement: Sendable, Equatable {
    /// A session was created; follow it with ``WorkoutSession/init(mirroring:store:)``.
    case created(session: UUID, date: Date)
    /// A session changed state.
    case stateChanged(session: UUID, from: WorkoutSession.State?, to: WorkoutSession.State, date: Date)
    /// A session's workout was stored under `workout` (read it with an ``AnchoredQuery`` or
    /// `workout.get`).
    case saved(session: UUID, workout: UUID, date: Date)
    /// A session was discarded; nothing was saved.
    case discarded(session: UUID, date: Date)
    /// A session's command could not be journaled or saved.
    case failed(WorkoutFailure)

    static func read(_ kind: String, _ data: JSONObject) throws(StrapKitError) -> WorkoutAnnouncement? {
        if kind == "failed" { return .failed(try WorkoutFailure.read(data)) }
        guard ["created", "state", "saved", "discarded"].contains(kind) else { return nil }
        guard let session = data.string("session").flatMap(UUID.init(uuidString:)) else { throw .malformedReply("\(kind) without session") }
        let date = Date(millis: try data.time("time"))
        switch kind {
        case "created": return .created(session: session, date: date)
        case "state":
            guard let to = data.string("state").flatMap(WorkoutSession.State.init(rawValue:)) else { throw .malformedReply("state without state") }
            return .stateChanged(session: session, from: data.string("from").flatMap(WorkoutSession.State.init(rawValue:)), to: to, date: date)
        case "saved":
            guard let workout = data.string("workout").flatMap(UUID.init(uuidString:)) else { throw .malformedReply("saved without workout") }
            return .saved(session: session, workout: workout, date: date)
        default: return .discarded(session: session, date: date)
        }
    }
}

extension StrapStore {
    /// The sessions open (or recently ended) now, and every later creation, state change, save,
    /// discard and failure on the box (`workout.watch`, protocol 1.1): a change is either among
    /// the sessions or among the announcements, never both and never lost. The stream is open
    /// when this returns; ending the iteration ends it.
    public func watchWorkoutSessions() async throws -> (sessions: [UUID], announcements: WorkoutFeed<WorkoutAnnouncement>) {
        let (first, events, cancel) = try await cancellableStream("workout.watch", [:])
        var sessions: [UUID] = []
        if case .array(let items)? = try first.object()["sessions"] {
            for item in items {
                guard case .object(let info) = item else { continue }
                if let id = info.object("session")?.string("session").flatMap(UUID.init(uuidString:)) { sessions.append(id) }
            }
        }
        return (sessions, WorkoutFeed(events: events, cancel: cancel) { kind, data throws(StrapKitError) in try WorkoutAnnouncement.read(kind, data) })
    }

    /// The protocol version the daemon speaks (`status`'s `protocol.version`, docs/protocol.md
    /// *Versioning*); "1.0.0" for a daemon from before it was answered.
    public func protocolVersion() async throws -> String {
        let status = try await request("status")
        return status.object("protocol")?.string("version") ?? "1.0.0"
    }
}

extension WorkoutSession {
    /// The session's failed commands from now on, whoever sent them (HealthKit's
    /// `didFailWithError`); the session goes on after each.
    public func failures() async throws -> WorkoutFeed<WorkoutFailure> {
        try await follow { kind, data throws(StrapKitError) in kind == "failed" ? try WorkoutFailure.read(data) : nil }
    }
}
