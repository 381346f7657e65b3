import FoundationEssentials
import StrapModel

/// Every workout session of the daemon: commands by session id, samples routed to the session
/// holding their device, live statistics, the saved workout at the end.
///
/// Each change is journaled (`WorkoutJournal.append`) before it is made in memory; when the
/// journal throws, the command fails with that error and nothing changed. (`end`'s entry is
/// synced after, outside the caller's lock, and before the end is acknowledged: `beginEnd`.) Time comes only from
/// `now`. Not thread-safe: the daemon calls it from one queue. docs/workouts.md has the rules.
public final class WorkoutEngine {
    public typealias ProfileLookup = (_ athlete: String) -> AthleteProfile?

    final class Record {
        /// First, with what `queue` reads after it: keeping a sample reads the object's header
        /// (its reference count), the id, `watched` and `pending`, and a session's sample comes
        /// about a second after the previous one, so each cache line it touches is likely a miss.
        let id: UUID
        /// Followed: samples are counted as they come (`watch`).
        var watched = false
        /// Samples `queue` kept, not counted yet: `settle` counts them.
        var pending: [Sample] = []
        var builder = LiveWorkoutBuilder()
        var session: WorkoutSession
        /// Set once the ended session's workout is stored.
        var workout: Workout?
        /// Between `beginEnd` and `finishEnd`: the workout is being saved outside the caller's
        /// lock, so no other command may touch the session.
        var saving = false
        init(_ session: WorkoutSession) {
            self.id = session.id
            self.session = session
        }
    }

    /// Who gets a device's samples: the session holding it, and the stopped session that held
    /// it before (a sample from before that stop may still be on its way).
    struct Route {
        var current: Record
        var previous: Record?
    }

    let journal: any WorkoutJournal
    let profiles: ProfileLookup
    let now: () -> Millis
    let makeID: () -> UUID
    /// Ended sessions kept for `get`/`list` after their workout is saved (oldest dropped).
    public let keptEndedSessions: Int
    /// The most sessions open at once (not ended, or ended with the workout unsaved): each
    /// holds a journal file descriptor. `create` beyond it is `busy`.
    public let maximumOpenSessions: Int
    public static let defaultMaximumOpenSessions = 64
    /// Called after every change, on the caller's thread.
    public var onChange: ((SessionChange) -> Void)?

    /// Sessions not yet ended, and ended ones whose workout is not saved yet.
    var open: [UUID: Record] = [:]
    var ended: [Record] = []
    var routes: [String: Route] = [:]
    /// The last device looked up (one sensor sends most samples in a row) and its route. The
    /// device by identity only, not retained: it is set only while `routesByObject` holds that
    /// device, and both are emptied together.
    var cachedDevice: ObjectIdentifier?
    var cachedRoute: Route?
    /// Routes by device object (the pipeline keeps one `Device` per sensor), misses included:
    /// with many sensors interleaved this spares hashing the id string and touching its
    /// storage for every sample. The entry holds its `Device`, so an object address is never
    /// reused while it is a key. Emptied whenever a route changes.
    var routesByObject: [ObjectIdentifier: (device: Device, route: Route?)] = [:]
    /// The session `queue` gave the previous sample to, by identity only (a reused address
    /// costs a cold count, never a wrong one).
    var lastQueued: ObjectIdentifier?

    /// The most samples `queue` keeps for a session before counting them.
    public static let pendingLimit = 32

    /// A command is never timed more than this ahead of the clock to cover a sample already
    /// counted (see `commandTime`).
    public static let sampleLeadTolerance: Millis = 5_000
    /// `send` payloads, UTF-8 bytes.
    public static let maximumMessageBytes = 4096

    public init(journal: any WorkoutJournal, profiles: @escaping ProfileLookup, now: @escaping () -> Millis,
                makeID: @escaping () -> UUID = { UUID() }, keptEndedSessions: Int = 16,
                maximumOpenSessions: Int = WorkoutEngine.defaultMaximumOpenSessions) {
        self.journal = journal
        self.profiles = profiles
        self.now = now
        self.makeID = makeID
        self.keptEndedSessions = keptEndedSessions
        self.maximumOpenSessions = max(1, maximumOpenSessions)
    }

    // MARK: commands

    /// A new session in `notStarted` (HealthKit: creating the `HKWorkoutSession`).
    @discardableResult
    public func create(_ configuration: WorkoutConfiguration) throws(StrapError) -> WorkoutSession {
        try configuration.validate()
        guard open.count < maximumOpenSessions else {
            throw .busy("\(open.count) workout sessions are open, the most strapd keeps (\(maximumOpenSessions)); end or discard one first")
        }
        let id = makeID()
        guard open[id] == nil, !ended.contains(where: { $0.session.id == id }) else {
            throw .internal("session id \(id) is already in use")
        }
        let t = now()
        try journal.append(.created(session: id, time: t, configuration: configuration), session: id)
        let r = Record(WorkoutSession(id: id, configuration: configuration, created: t))
        open[id] = r
        notify(r, .created(configuration), at: t)
        return r.session
    }

    /// Creates and starts in one step; if the start fails, the new session is dropped again.
    @discardableResult
    public func start(_ configuration: WorkoutConfiguration, connectedDevices: [String]) throws(StrapError) -> WorkoutSession {
        let s = try create(configuration)
        return try orDrop(s.id) { () throws(StrapError) in try start(s.id, connectedDevices: connectedDevices) }
    }

    /// Creates and prepares in one step (`workout.prepare` without a session); if the prepare
    /// fails (a device busy), the new session is dropped again: the client never learnt its id.
    @discardableResult
    public func prepare(_ configuration: WorkoutConfiguration, connectedDevices: [String]) throws(StrapError) -> WorkoutSession {
        let s = try create(configuration)
        return try orDrop(s.id) { () throws(StrapError) in try prepare(s.id, connectedDevices: connectedDevices) }
    }

    /// Runs the first command of a session just created; when it fails, the session and its
    /// journal go again, and followers (none yet, in practice) hear it was discarded.
    private func orDrop(_ id: UUID, _ body: () throws(StrapError) -> WorkoutSession) throws(StrapError) -> WorkoutSession {
        do throws(StrapError) {
            return try body()
        } catch {
            if let r = open.removeValue(forKey: id) {
                try? journal.remove(session: id)
                notify(r, .discarded, at: now())
            }
            throw error
        }
    }

    /// notStarted → prepared; claims the devices (sensors warm up, nothing counts yet).
    @discardableResult
    public func prepare(_ id: UUID, connectedDevices: [String]) throws(StrapError) -> WorkoutSession {
        let r = try record(id)
        _ = try r.session.entry(for: .prepare(deviceIDs: []), at: now())
        let ids = try resolveDevices(for: r, connected: connectedDevices)
        try run(r, .prepare(deviceIDs: ids))
        claim(r)
        return r.session
    }

    /// notStarted | prepared → running. Without devices in the configuration the session takes
    /// every connected device no other session holds; the athlete's profile is read now.
    @discardableResult
    public func start(_ id: UUID, connectedDevices: [String]) throws(StrapError) -> WorkoutSession {
        let r = try record(id)
        _ = try r.session.entry(for: .start(deviceIDs: [], profile: nil), at: now())
        let ids = r.session.state == .prepared ? r.session.deviceIDs : try resolveDevices(for: r, connected: connectedDevices)
        try run(r, .start(deviceIDs: ids, profile: profiles(r.session.configuration.athlete)))
        claim(r)
        return r.session
    }

    @discardableResult
    public func pause(_ id: UUID) throws(StrapError) -> WorkoutSession { try run(try record(id), .pause) }

    @discardableResult
    public func resume(_ id: UUID) throws(StrapError) -> WorkoutSession { try run(try record(id), .resume) }

    /// HealthKit's `stopActivity`: the activity ends here; the devices are free for other
    /// sessions; `end` saves the workout.
    @discardableResult
    public func stop(_ id: UUID) throws(StrapError) -> WorkoutSession { try run(try record(id), .stop) }

    @discardableResult
    public func lap(_ id: UUID, metadata: [String: String] = [:]) throws(StrapError) -> WorkoutSession {
        try run(try record(id), .lap(metadata: metadata))
    }

    @discardableResult
    public func marker(_ id: UUID, metadata: [String: String]) throws(StrapError) -> WorkoutSession {
        try run(try record(id), .marker(metadata: metadata))
    }

    /// Ends the session and saves its workout, returned as stored (UUID, anchor). If saving
    /// fails the session stays `ended` with its workout unsaved; `end` again retries the save
    /// (also after recovery, for a journal that ended before its workout was saved).
    @discardableResult
    public func end(_ id: UUID) throws(StrapError) -> Workout {
        let draft = try beginEnd(id)
        let saved: Workout
        do throws(StrapError) {
            try journal.sync(session: id)
            saved = try journal.save(draft, session: id)
        } catch {
            abandonEnd(id)
            throw error
        }
        // The workout is stored: a journal left behind by a failed removal is recognised as
        // saved at the next start-up (WorkoutJournalFile), so the end stands.
        try? journal.remove(session: id)
        return finishEnd(id, saved: saved)
    }

    /// `end` in three steps, for a caller that saves without holding the lock it calls the
    /// engine under (the daemon: the save reads the store and syncs): ends the session (the
    /// journal's `end` entry, written but not synced), frees its devices and returns the
    /// workout to save. The caller then syncs the journal (`WorkoutJournal.sync`), saves, and
    /// calls `finishEnd`, or `abandonEnd` when either throws; the end is acknowledged only
    /// after that sync, so a crash before it loses nothing a client was told. Until
    /// `finishEnd` or `abandonEnd`, every other command on the session is `busy`.
    public func beginEnd(_ id: UUID) throws(StrapError) -> Workout {
        let r = try record(id)
        if r.session.state != .ended { try run(r, .end, durably: false) }
        settle(r)
        release(r)
        r.saving = true
        return r.builder.workout(for: r.session)
    }

    /// The save failed: the session stays ended with its workout unsaved (`end` retries).
    public func abandonEnd(_ id: UUID) {
        open[id]?.saving = false
    }

    /// The workout `beginEnd` returned is stored (and the journal removed).
    @discardableResult
    public func finishEnd(_ id: UUID, saved: Workout) -> Workout {
        guard let r = open.removeValue(forKey: id) else { return saved }
        r.saving = false
        r.workout = saved
        ended.append(r)
        if ended.count > keptEndedSessions { ended.removeFirst(ended.count - keptEndedSessions) }
        notify(r, .saved(saved), at: r.session.lastEventTime)
        return saved
    }

    /// Drops the session: nothing is saved, its journal is removed. Any state but ended (an
    /// ended session whose workout could not be saved may be discarded too).
    public func discard(_ id: UUID) throws(StrapError) {
        let r = try record(id)
        if !(r.session.state == .ended && r.workout == nil) {
            _ = try r.session.entry(for: .discard, at: now())
        }
        try journal.remove(session: id)
        release(r)
        open[id] = nil
        notify(r, .discarded, at: now())
    }

    /// A client's message to the session's other followers (HealthKit's
    /// `sendToRemoteWorkoutSession`): relayed through `onChange`, never persisted.
    public func send(_ id: UUID, message: String) throws(StrapError) {
        let r = try record(id)
        guard r.session.state != .ended else {
            throw .invalidTransition("workout session \(id) is ended: send is allowed until it ends")
        }
        guard message.utf8.count <= Self.maximumMessageBytes else {
            throw .invalidOption("a message takes at most \(Self.maximumMessageBytes) bytes, got \(message.utf8.count)")
        }
        notify(r, .message(message), at: now())
    }

    // MARK: internals

    /// An open session, or `invalidTransition` for a kept ended one, or `notFound`.
    func record(_ id: UUID) throws(StrapError) -> Record {
        if let r = open[id] {
            guard !r.saving else { throw .busy("workout session \(id) is being saved; wait for its workout.end") }
            return r
        }
        if ended.contains(where: { $0.session.id == id }) {
            throw .invalidTransition("workout session \(id) is ended: no command is allowed")
        }
        throw .notFound("no workout session \(id)")
    }

    /// Now, or the newest instant a counted sample reached when that is (a little) later: a
    /// pause timed before a sample already counted would make recovery, which sees the pause
    /// first, leave that sample out.
    func commandTime(_ r: Record) -> Millis {
        let t = now()
        let newest = r.builder.newestCountedTime
        guard newest > t else { return t }
        return min(newest, t + Self.sampleLeadTolerance)
    }

    /// Journal first, then the session, then the builder.
    @discardableResult
    func run(_ r: Record, _ command: WorkoutCommand, durably: Bool = true) throws(StrapError) -> WorkoutSession {
        // What waits is counted under the state it came in, before the command's time is chosen.
        settle(r)
        let before = r.session.state
        guard let entry = try r.session.entry(for: command, at: commandTime(r)) else { return r.session }
        try journal.append(entry, session: r.session.id, durably: durably)
        do throws(StrapError) { try r.session.apply(entry) } catch {
            // entry(for:) checked the same rule; reaching this is a bug, and the journal
            // already has the entry, so say so loudly.
            throw .internal("workout session \(r.session.id): journaled \(entry.kind) could not be applied: \(error)")
        }
        r.builder.apply(entry)
        switch entry {
        case .lap, .marker:
            if let e = r.session.events.last { notify(r, .event(e), at: entry.time) }
        default:
            notify(r, .state(from: before, to: r.session.state), at: entry.time)
        }
        return r.session
    }

    func notify(_ r: Record, _ kind: SessionChange.Kind, at time: Millis) {
        onChange?(SessionChange(session: r.session.id, time: time, kind: kind))
    }
}
