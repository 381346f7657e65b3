import FoundationEssentials
import StrapModel

/// HealthKit's `HKWorkoutSessionState`.
public enum WorkoutSessionState: String, Codable, Sendable, CaseIterable, Hashable {
    case notStarted, prepared, running, paused, stopped, ended
}

/// What a client asks of a session. `discard` produces no journal entry: it removes the
/// journal. Devices and the profile are resolved by the engine before the command is built.
public enum WorkoutCommand: Sendable, Hashable {
    case prepare(deviceIDs: [String])
    case start(deviceIDs: [String], profile: AthleteProfile?)
    case pause
    case resume
    case stop
    case lap(metadata: [String: String])
    case marker(metadata: [String: String])
    case end
    case discard

    public var name: String {
        switch self {
        case .prepare: "prepare"
        case .start: "start"
        case .pause: "pause"
        case .resume: "resume"
        case .stop: "stop"
        case .lap: "lap"
        case .marker: "marker"
        case .end: "end"
        case .discard: "discard"
        }
    }

    /// The states the command is legal in (docs/workouts.md, "States").
    public var allowedStates: [WorkoutSessionState] {
        switch self {
        case .prepare: [.notStarted]
        case .start: [.notStarted, .prepared]
        case .pause: [.running]
        case .resume: [.paused]
        case .stop: [.running, .paused]
        case .lap, .marker: [.running, .paused]
        case .end: [.running, .paused, .stopped]
        case .discard: [.notStarted, .prepared, .running, .paused, .stopped]
        }
    }

    /// The state after the command; nil when it leaves the state as is (lap, marker) or
    /// removes the session (discard).
    var target: WorkoutSessionState? {
        switch self {
        case .prepare: .prepared
        case .start, .resume: .running
        case .pause: .paused
        case .stop: .stopped
        case .end: .ended
        case .lap, .marker, .discard: nil
        }
    }
}

/// One workout session as a value (HealthKit's `HKWorkoutSession`): its configuration, state,
/// devices, events and times. It changes only by applying journal entries, so the journal
/// rebuilds it exactly. `entry(for:at:)` checks a command and says what to journal;
/// `apply(_:)` makes the change.
public struct WorkoutSession: Sendable, Hashable {
    public let id: UUID
    public let configuration: WorkoutConfiguration
    public let created: Millis
    public private(set) var state: WorkoutSessionState = .notStarted
    /// Resolved at prepare or start.
    public private(set) var deviceIDs: [String] = []
    public private(set) var startDate: Millis?
    /// When the activity stopped: `stop`, or `end` straight from running/paused. The saved
    /// workout ends here.
    public private(set) var stopDate: Millis?
    public private(set) var endDate: Millis?
    /// pause, resume, lap and marker, in order.
    public private(set) var events: [Workout.Event] = []
    /// The athlete's profile as it was at the start.
    public private(set) var profile: AthleteProfile?
    /// Entries are never earlier than this (a clock step back cannot reorder events).
    public private(set) var lastEventTime: Millis

    public init(id: UUID, configuration: WorkoutConfiguration, created: Millis) {
        self.id = id
        self.configuration = configuration
        self.created = created
        lastEventTime = created
    }

    /// The session its journal describes; `internal` naming the entry when the journal is
    /// not a legal history (it was written by this code, so that means damage).
    public init(rebuildingFrom entries: [SessionJournalEntry]) throws(StrapError) {
        guard case let .created(id, time, configuration)? = entries.first else {
            throw .internal("a session journal must begin with a created entry")
        }
        self.init(id: id, configuration: configuration, created: time)
        for (i, e) in entries.dropFirst().enumerated() {
            do throws(StrapError) { try apply(e) } catch {
                throw .internal("session \(id) journal entry \(i + 2) (\(e.kind)): \(error.description)")
            }
        }
    }

    /// Whether the session holds its devices (other sessions may not use them).
    public var holdsDevices: Bool { state == .prepared || state == .running || state == .paused }

    /// The entry `command` produces at `time` (never before the previous event), or
    /// `invalidTransition` / `invalidOption`; the session is not changed. Nil for `discard`.
    public func entry(for command: WorkoutCommand, at time: Millis) throws(StrapError) -> SessionJournalEntry? {
        guard command.allowedStates.contains(state) else {
            var hint = ""
            if command == .end && state == .prepared { hint = "; a session that never started has nothing to save: discard it" }
            throw .invalidTransition("workout session \(id) is \(state.rawValue): \(command.name) is allowed only when "
                + command.allowedStates.map(\.rawValue).joined(separator: " or ") + hint)
        }
        let t = max(time, lastEventTime)
        switch command {
        case .prepare(let ids): return .prepared(time: t, deviceIDs: ids)
        case let .start(ids, profile): return .started(time: t, deviceIDs: state == .prepared ? deviceIDs : ids, profile: profile)
        case .pause: return .paused(time: t)
        case .resume: return .resumed(time: t)
        case .stop: return .stopped(time: t)
        case .lap(let m):
            try MetadataLimits.validate(m, "lap metadata")
            return .lap(time: t, metadata: m)
        case .marker(let m):
            try MetadataLimits.validate(m, "marker metadata")
            return .marker(time: t, metadata: m)
        case .end: return .ended(time: t)
        case .discard: return nil
        }
    }

    /// Applies one entry after checking it is legal now.
    public mutating func apply(_ entry: SessionJournalEntry) throws(StrapError) {
        let command: WorkoutCommand
        switch entry {
        case .created: throw .invalidTransition("workout session \(id) already exists")
        case .prepared(_, let ids): command = .prepare(deviceIDs: ids)
        case let .started(_, ids, p): command = .start(deviceIDs: ids, profile: p)
        case .paused: command = .pause
        case .resumed: command = .resume
        case .lap(_, let m): command = .lap(metadata: m)
        case .marker(_, let m): command = .marker(metadata: m)
        case .stopped: command = .stop
        case .ended: command = .end
        }
        guard command.allowedStates.contains(state) else {
            throw .invalidTransition("workout session \(id) is \(state.rawValue): \(entry.kind) cannot follow")
        }
        let t = max(entry.time, lastEventTime)
        lastEventTime = t
        switch entry {
        case .created: break
        case .prepared(_, let ids): deviceIDs = ids
        case let .started(_, ids, p):
            deviceIDs = ids
            profile = p
            startDate = t
        case .paused: events.append(Workout.Event(kind: "pause", time: t))
        case .resumed: events.append(Workout.Event(kind: "resume", time: t))
        case .lap(_, let m): events.append(Workout.Event(kind: "lap", time: t, metadata: m))
        case .marker(_, let m): events.append(Workout.Event(kind: "marker", time: t, metadata: m))
        case .stopped: stopDate = t
        case .ended:
            if stopDate == nil { stopDate = t }
            endDate = t
        }
        if let target = command.target { state = target }
    }

    /// Checks, journals nothing, applies: the value-level path (tests, tools).
    @discardableResult
    public mutating func perform(_ command: WorkoutCommand, at time: Millis) throws(StrapError) -> SessionJournalEntry? {
        guard let e = try entry(for: command, at: time) else { return nil }
        try apply(e)
        return e
    }

    /// The samples to re-feed after recovery: the session's devices from its start, every
    /// sample overlapping that span (an energy increment begun before the start counts in
    /// part). Nil before the start.
    public var replayPredicate: SamplePredicate? {
        guard let startDate else { return nil }
        return .and([.time(from: startDate, to: stopDate.map { $0 + 1 }, options: []),
                     .or(deviceIDs.map { .device(.id, $0) })])
    }
}

extension WorkoutSession: Codable {
    enum CodingKeys: String, CodingKey {
        case session, configuration, created, state, deviceIDs, start, stop, end, events
    }

    /// The session as clients see it (`workout.get`); the profile snapshot stays inside.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .session)
        try c.encode(configuration, forKey: .configuration)
        try c.encode(RFC3339.string(created), forKey: .created)
        try c.encode(state, forKey: .state)
        try c.encode(deviceIDs, forKey: .deviceIDs)
        if let startDate { try c.encode(RFC3339.string(startDate), forKey: .start) }
        if let stopDate { try c.encode(RFC3339.string(stopDate), forKey: .stop) }
        if let endDate { try c.encode(RFC3339.string(endDate), forKey: .end) }
        try c.encode(events, forKey: .events)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .session)
        configuration = try c.decode(WorkoutConfiguration.self, forKey: .configuration)
        created = try c.decodeTime(.created)
        state = try c.decode(WorkoutSessionState.self, forKey: .state)
        deviceIDs = try c.decode([String].self, forKey: .deviceIDs)
        startDate = try c.decodeTimeIfPresent(.start)
        stopDate = try c.decodeTimeIfPresent(.stop)
        endDate = try c.decodeTimeIfPresent(.end)
        events = try c.decode([Workout.Event].self, forKey: .events)
        lastEventTime = max(created, events.last?.time ?? created, startDate ?? created, stopDate ?? created, endDate ?? created)
    }
}
