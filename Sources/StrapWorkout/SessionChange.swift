import FoundationEssentials
import StrapModel

/// What the engine tells its observer (the daemon mirrors it to `workout.live` followers).
public struct SessionChange: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case created(WorkoutConfiguration)
        /// prepare, start, pause, resume, stop, end.
        case state(from: WorkoutSessionState, to: WorkoutSessionState)
        /// lap and marker (pause and resume arrive as state changes).
        case event(Workout.Event)
        /// A client's `send` payload: relayed, never persisted.
        case message(String)
        /// The ended session's workout, as stored.
        case saved(Workout)
        case discarded
    }

    public var session: UUID
    public var time: Millis
    public var kind: Kind

    public init(session: UUID, time: Millis, kind: Kind) {
        self.session = session; self.time = time; self.kind = kind
    }
}

/// A session as `workout.get`/`workout.list` answer it: the session, its statistics now, and
/// the saved workout once it ended.
public struct WorkoutSessionInfo: Sendable, Hashable, Codable {
    public var session: WorkoutSession
    public var statistics: LiveStatistics
    public var workout: Workout?
}
