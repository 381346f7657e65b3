import FoundationEssentials
import StrapModel
import StrapWorkout

/// What a `workout.live` follower receives (docs/protocol-workouts.md "workout.live").
public enum WorkoutFeedEvent: Sendable {
    case state(from: WorkoutSessionState, to: WorkoutSessionState, time: Millis)
    case event(Workout.Event)
    case message(String, time: Millis)
    case statistics(LiveStatistics)
    case saved(Workout)
    case discarded(time: Millis)
    /// A command's journal write or the save failed (HealthKit's `didFailWithError`); the
    /// session is as it was before that command.
    case failed(SessionFailure)
    /// The session is over for followers (after saved/discarded).
    case finished
    case shutdown

    init(_ change: SessionChange) {
        switch change.kind {
        case let .state(from, to): self = .state(from: from, to: to, time: change.time)
        case let .event(e): self = .event(e)
        case let .message(m): self = .message(m, time: change.time)
        case let .saved(w): self = .saved(w)
        case .discarded: self = .discarded(time: change.time)
        case .created: self = .state(from: .notStarted, to: .notStarted, time: change.time)
        }
    }
}

/// A session's journal could not be written, or its workout could not be saved. The command
/// that needed it failed and changed nothing; the session goes on in `state` (an ended
/// session keeps its unsaved workout: `workout.end` again retries the save).
public struct SessionFailure: Sendable {
    public var session: UUID
    /// The session's state after the failure (unchanged by it).
    public var state: WorkoutSessionState
    /// The command that failed: `prepare`, `start`, `pause`, `resume`, `lap`, `marker`,
    /// `stop`, `end`, `save` or `discard`.
    public var operation: String
    public var error: StrapError
    public var time: Millis

    /// The command that writes each kind of journal entry.
    static func operation(writing entry: SessionJournalEntry) -> String {
        switch entry {
        case .created: "create"
        case .prepared: "prepare"
        case .started: "start"
        case .paused: "pause"
        case .resumed: "resume"
        case .lap: "lap"
        case .marker: "marker"
        case .stopped: "stop"
        case .ended: "end"
        }
    }
}

/// What a `workout.watch` stream hears of every session on the box (HealthKit's
/// `workoutSessionMirroringStartHandler`, for any number of sessions): creation, state
/// changes, the save, the discard, and failures. Laps, markers, messages and statistics are
/// `workout.live`'s.
public enum WorkoutAnnouncement: Sendable {
    case created(session: UUID, configuration: WorkoutConfiguration, time: Millis)
    case state(session: UUID, from: WorkoutSessionState, to: WorkoutSessionState, time: Millis)
    case saved(session: UUID, workout: Workout, time: Millis)
    /// `state`: the session's last state, when this process knew it.
    case discarded(session: UUID, state: WorkoutSessionState?, time: Millis)
    case failed(SessionFailure)
}

/// The `workout.watch` streams of a `WorkoutService`, and what their announcements need. A
/// value kept under the service's lock: every call is made holding it.
struct SessionWatchers {
    private var watchers: [Int: @Sendable (WorkoutAnnouncement) -> Void] = [:]
    /// The state of every open session this process announced or recovered, so a discard or a
    /// failure can say it without reading the engine.
    var knownStates: [UUID: WorkoutSessionState] = [:]
    /// Announcements of a session being created, until its first command succeeded.
    private var held: [WorkoutAnnouncement]?

    mutating func add(_ token: Int, _ deliver: @escaping @Sendable (WorkoutAnnouncement) -> Void) { watchers[token] = deliver }
    mutating func remove(_ token: Int) { watchers[token] = nil }

    /// A session's creation, state change, save or discard (laps, markers and messages are
    /// not announced).
    mutating func announce(_ change: SessionChange) {
        let id = change.session
        switch change.kind {
        case .created(let configuration):
            knownStates[id] = .notStarted
            announce(.created(session: id, configuration: configuration, time: change.time))
        case let .state(from, to):
            knownStates[id] = to
            announce(.state(session: id, from: from, to: to, time: change.time))
        case .saved(let workout):
            knownStates[id] = nil
            announce(.saved(session: id, workout: workout, time: change.time))
        case .discarded:
            announce(.discarded(session: id, state: knownStates.removeValue(forKey: id), time: change.time))
        case .event, .message:
            break
        }
    }

    mutating func announce(_ announcement: WorkoutAnnouncement) {
        if held != nil { held?.append(announcement); return }
        for w in watchers.values { w(announcement) }
    }

    /// Keeps announcements back while a session is created and its first command runs: one
    /// whose first command failed is dropped again before its id is given out, so announcing
    /// its creation and discard would only be noise.
    mutating func hold() { held = [] }

    mutating func release(announce: Bool) {
        let kept = held ?? []
        held = nil
        if announce { for a in kept { self.announce(a) } }
    }
}
