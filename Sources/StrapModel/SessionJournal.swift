import FoundationEssentials

/// One change of a workout session, as journaled before the session changes in memory. A
/// session is exactly the fold of its entries (recovery after a crash). JSON:
/// `{"kind": "...", "time": RFC 3339, ...}` with the kind's fields (docs/workouts.md).
public enum SessionJournalEntry: Sendable, Hashable, Codable {
    case created(session: UUID, time: Millis, configuration: WorkoutConfiguration)
    /// Devices are resolved at the first of prepare/start and repeated in `started`.
    case prepared(time: Millis, deviceIDs: [String])
    /// `profile` is the athlete's profile as it was at the start: the session's energy and
    /// zones depend on it, so recovery must not read a profile edited since.
    case started(time: Millis, deviceIDs: [String], profile: AthleteProfile?)
    case paused(time: Millis)
    case resumed(time: Millis)
    case lap(time: Millis, metadata: [String: String])
    case marker(time: Millis, metadata: [String: String])
    case stopped(time: Millis)
    case ended(time: Millis)

    public var time: Millis {
        switch self {
        case let .created(_, t, _), let .prepared(t, _), let .started(t, _, _), let .paused(t), let .resumed(t),
             let .lap(t, _), let .marker(t, _), let .stopped(t), let .ended(t): t
        }
    }

    public var kind: String {
        switch self {
        case .created: "created"
        case .prepared: "prepared"
        case .started: "started"
        case .paused: "paused"
        case .resumed: "resumed"
        case .lap: "lap"
        case .marker: "marker"
        case .stopped: "stopped"
        case .ended: "ended"
        }
    }

    enum CodingKeys: String, CodingKey { case kind, session, time, configuration, deviceIDs, profile, metadata }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(String.self, forKey: .kind)
        let time = try c.decodeTime(.time)
        switch kind {
        case "created":
            self = .created(session: try c.decode(UUID.self, forKey: .session), time: time,
                            configuration: try c.decode(WorkoutConfiguration.self, forKey: .configuration))
        case "prepared": self = .prepared(time: time, deviceIDs: try c.decode([String].self, forKey: .deviceIDs))
        case "started":
            self = .started(time: time, deviceIDs: try c.decode([String].self, forKey: .deviceIDs),
                            profile: try c.decodeIfPresent(AthleteProfile.self, forKey: .profile))
        case "paused": self = .paused(time: time)
        case "resumed": self = .resumed(time: time)
        case "lap": self = .lap(time: time, metadata: try c.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:])
        case "marker": self = .marker(time: time, metadata: try c.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:])
        case "stopped": self = .stopped(time: time)
        case "ended": self = .ended(time: time)
        default:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "unknown journal entry kind \(kind)")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(RFC3339.string(time), forKey: .time)
        switch self {
        case let .created(session, _, configuration):
            try c.encode(session, forKey: .session)
            try c.encode(configuration, forKey: .configuration)
        case let .prepared(_, ids): try c.encode(ids, forKey: .deviceIDs)
        case let .started(_, ids, profile):
            try c.encode(ids, forKey: .deviceIDs)
            try c.encodeIfPresent(profile, forKey: .profile)
        case let .lap(_, m), let .marker(_, m): try c.encode(m, forKey: .metadata)
        case .paused, .resumed, .stopped, .ended: break
        }
    }
}

/// Where the workout engine persists sessions: the store is the source of truth, so every
/// entry is durable before the session changes in memory. The daemon implements it over the
/// store (`WorkoutJournalFile`); tests use an in-memory one. Calls come serialised from the
/// engine's one queue, but for an ending session's `sync` and `save` (see `WorkoutEngine.beginEnd`).
public protocol WorkoutJournal: AnyObject {
    /// Records `entry` as `session`'s next entry; the first is always `.created`. Durable when
    /// this returns, or with `durably: false` once `sync(session:)` returned: the engine makes
    /// `end` that way, so that a slow disk's sync happens outside the lock its caller holds;
    /// the end is not acknowledged before the sync. When this throws, the command fails and the
    /// session stays as it was.
    func append(_ entry: SessionJournalEntry, session: UUID, durably: Bool) throws(StrapError)
    /// Makes every entry of the session written so far durable. When it throws they may not be
    /// (a crash may lose them); a later `sync` tries again.
    func sync(session: UUID) throws(StrapError)
    /// Stores the ended session's workout object, returned with its UUID and anchor. At most
    /// one workout per session, also across a crash between this and `remove`.
    func save(_ workout: Workout, session: UUID) throws(StrapError) -> Workout
    /// Forgets the session's entries: after its workout was saved, or when it is discarded.
    func remove(session: UUID) throws(StrapError)
}

extension WorkoutJournal {
    /// Durably records `entry` (`append(_:session:durably: true)`).
    public func append(_ entry: SessionJournalEntry, session: UUID) throws(StrapError) {
        try append(entry, session: session, durably: true)
    }
}
