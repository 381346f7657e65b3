import Dispatch
import FoundationEssentials
import StrapIngest
import StrapModel
import StrapStore
import StrapWorkout
import Synchronization

/// The daemon's side of workout sessions (docs/workouts.md): the engine behind a lock, its
/// journal in the store, samples fed from the live hub as they are decoded (never polled),
/// recovery at start-up, and mirroring to `workout.live` followers.
///
/// Threading: commands come from the router's worker queue (they fsync the journal);
/// samples from the pipeline's ingest queue, through the live hub. Both take `lock`, which
/// guards the engine; the per-sample work under it is a dictionary lookup and a few adds.
/// Followers are told on the caller's queue and hop to their connection themselves.
public final class WorkoutService: @unchecked Sendable {
    public struct Follower: Sendable {
        public let deliver: @Sendable (WorkoutFeedEvent) -> Void
        /// The connection the follower reads on; `send` skips its sender's own followers.
        public let connection: UInt64?
    }

    private let lock = Mutex<Void>(())
    /// The engine's open sessions, readable without the lock: with none (most of the time on
    /// most boxes) a burst of samples costs one atomic load here.
    private let openSessions = Atomic<Int>(0)
    /// Guarded by `lock`.
    private let engine: WorkoutEngine
    private let journal: WorkoutJournalFile
    /// What `end` saves through, outside `lock`.
    private let saver: HRVAddingJournal
    /// Guarded by `lock`.
    private var beats = EndBeatWait()
    /// How long `end` waits for the beats of the strap's next packet (`EndBeatWait`).
    let endBeatWait: Millis
    /// Makes what the pipeline decoded so far readable in the store (set by `attach`).
    private let flushBox = Mutex<(@Sendable () throws -> Void)?>(nil)
    /// Test seam: called by `end` outside `lock`, just before the workout is saved.
    var beforeSave: (@Sendable () -> Void)?
    /// Guarded by `lock`.
    private var followers: [UUID: [Int: Follower]] = [:]
    private var nextFollower = 1
    /// `workout.watch` streams (tokens from `nextFollower`). Guarded by `lock`.
    private var watchers = SessionWatchers()
    /// Statistics go to followers at most once a second per session (docs/protocol.md):
    /// a session whose figures changed is marked and flushed by a one-shot timer.
    private var dirty: Set<UUID> = []
    private var lastStatistics: [UUID: Millis] = [:]
    private var flushScheduled = false
    private let timerQueue = DispatchQueue(label: "strapd.workouts.statistics")

    public let profiles: ProfileBook
    /// Saved structured workouts (`plan.*`).
    public let plans: PlanBook
    /// Laps and target markers of sessions riding a plan.
    let planRunner: PlanRunner
    public let catalog: WorkoutCatalog
    let store: Store
    /// The engine's clock (tests move it; the daemon's is the wall clock).
    let now: @Sendable () -> Millis
    /// Writes the Heart Rate Control Point reset when a session's strap saturates its energy counter.
    private let resetEnergyBox = Mutex<(@Sendable (SensorAddress) -> Void)?>(nil)
    private let log: @Sendable (String) -> Void
    private var hubSubscription: Int?

    public static let statisticsInterval: Millis = 1000

    /// The journal lives in the store's directory (`sessions/`).
    public init(store: Store, profiles: ProfileBook, plans: PlanBook = PlanBook(),
                now: @escaping @Sendable () -> Millis = { ReceiveTime.now().wall },
                endBeatWait: Millis = 2_500, maximumOpenSessions: Int = WorkoutEngine.defaultMaximumOpenSessions,
                log: @escaping @Sendable (String) -> Void = { _ in }) throws(StrapError) {
        self.store = store
        let journal = try WorkoutJournalFile(store: store)
        self.journal = journal
        saver = HRVAddingJournal(file: journal, store: store)
        self.profiles = profiles
        self.plans = plans
        planRunner = PlanRunner(log: log)
        self.now = now
        self.endBeatWait = endBeatWait
        self.log = log
        catalog = WorkoutCatalog(store: store)
        engine = WorkoutEngine(journal: saver, profiles: { profiles.profile($0) }, now: now,
                               maximumOpenSessions: maximumOpenSessions)
        engine.onChange = { [weak self] change in self?.changed(change) }
        // The engine writes the journal only in calls made holding `lock`.
        saver.onFailure = { [weak self] session, operation, error in self?.journalFailed(session, operation, error) }
    }

    // MARK: lifecycle

    /// Where a saturated energy counter's reset goes (the device service, once it exists).
    public func onEnergySaturated(_ reset: @escaping @Sendable (SensorAddress) -> Void) {
        resetEnergyBox.withLock { $0 = reset }
    }

    /// Rebuilds every open session from the journal and the stored samples. Call before the
    /// live hub delivers samples (`attach`). Problems are logged: a damaged journal must not keep
    /// the daemon (and every other athlete's recording) down.
    public func recover() {
        do throws(StrapError) { try recover(journal) } catch { log("workout sessions could not be recovered: \(error)") }
        // A recovered session riding a plan goes on from the step its laps say.
        planRunner.sessionsChanged(self)
    }

    /// Starts taking live samples (and energy-saturation changes) from `hub`. `flush` makes
    /// what the pipeline has decoded so far readable in the store (the saved workout's HRV
    /// reads its beats back from there).
    public func attach(hub: LiveHub, flush: (@Sendable () throws -> Void)? = nil) {
        flushBox.withLock { $0 = flush }
        hubSubscription = hub.subscribe { [weak self] events in self?.observe(events) }
    }

    public func detach(hub: LiveHub) {
        if let id = hubSubscription { hub.unsubscribe(id) }
        hubSubscription = nil
        // Followers' streams get their final `shutdown` from the router.
    }

    /// docs/workouts.md "Start-up": rebuild, re-feed the stored samples in time order, finish
    /// the ends a crash interrupted.
    private func recover(_ file: WorkoutJournalFile) throws(StrapError) {
        let scan = try file.openSessions()
        for d in scan.damaged { log("workout journal \(d.file) is damaged (\(d.problem)); left in place, session not recovered") }
        for id in scan.alreadySaved { log("workout session \(id) was already saved before the restart; its journal is removed") }
        var recovered: [WorkoutSession] = []
        for s in scan.sessions {
            do throws(StrapError) {
                let session = try locked { e throws(StrapError) in try e.recover(s.entries) }
                lock.withLock { _ in watchers.knownStates[session.id] = session.state }
                recovered.append(session)
                log("workout session \(session.id) recovered (\(session.state.rawValue), athlete \(session.configuration.athlete))")
            } catch {
                log("workout session \(s.session) could not be recovered: \(error)")
            }
        }
        try refeed(recovered)
        let awaiting = lock.withLock { _ in engine.sessionsAwaitingSave }
        for id in awaiting {
            do throws(StrapError) { _ = try end(id) } catch { log("workout session \(id): saving its workout after the restart failed: \(error)") }
        }
    }

    /// One pass over the store for every recovered session (start-up reads the union of their
    /// devices over the union of their spans once, not once per session), each sample handed
    /// to the sessions whose own replay predicate it matches, in time order.
    private func refeed(_ sessions: [WorkoutSession]) throws(StrapError) {
        let wanted = sessions.compactMap { s in s.replayPredicate.map { (s.id, $0) } }
        guard !wanted.isEmpty else { return }
        let predicate: SamplePredicate = wanted.count == 1 ? wanted[0].1 : .or(wanted.map(\.1))
        let samples = try store.samples(matching: predicate, sort: SampleSort(.start))
        try lock.withLock { _ throws(StrapError) in
            for sample in samples {
                for (id, p) in wanted where p.matches(sample) { try engine.add(sample, to: id) }
            }
        }
    }

    // MARK: samples

    private func observe(_ events: [LiveEvent]) {
        guard openSessions.load(ordering: .relaxed) > 0 else { return }
        var changed: [UUID] = []
        var saturated: [SensorAddress] = []
        lock.withLock { _ in
            for event in events {
                switch event {
                case .samples(let samples):
                    for s in samples {
                        if s.type == .heartbeatSeries { beats.observe(device: s.device.id, beatsUntil: s.end) }
                        if let id = engine.queue(s), followers[id] != nil, changed.last != id { changed.append(id) }
                    }
                case .change(let address, .energySaturated):
                    if engine.session(holding: address) != nil { saturated.append(address) }
                default: break
                }
            }
        }
        for address in saturated {
            log("energy expended of \(address) is saturated during a workout; resetting it")
            resetEnergyBox.withLock { $0 }?(address)
        }
        if !changed.isEmpty { markDirty(changed) }
    }

    private func markDirty(_ ids: [UUID]) {
        lock.withLock { _ in markDirtyLocked(ids) }
    }

    /// Under `lock`: the one-shot flush goes at the soonest instant any of them may be sent
    /// again (one never sent: at once).
    private func markDirtyLocked(_ ids: [UUID]) {
        dirty.formUnion(ids)
        guard !flushScheduled else { return }
        flushScheduled = true
        let t = now()
        let delay = ids.map { id in lastStatistics[id].map { max(0, $0 + Self.statisticsInterval - t) } ?? 0 }.min() ?? 0
        timerQueue.asyncAfter(deadline: .now() + .milliseconds(Int(delay))) { [weak self] in self?.flushStatistics() }
    }

    private func flushStatistics() {
        let t = now()
        var out: [(LiveStatistics, [Follower])] = []
        var later: [UUID] = []
        lock.withLock { _ in
            flushScheduled = false
            for id in dirty {
                guard let f = followers[id], !f.isEmpty else { continue }
                if let last = lastStatistics[id], t - last < Self.statisticsInterval { later.append(id); continue }
                guard let stats = try? engine.statistics(id) else { continue }
                lastStatistics[id] = t
                out.append((stats, Array(f.values)))
            }
            dirty = []
        }
        for (stats, fs) in out { for f in fs { f.deliver(.statistics(stats)) } }
        if !later.isEmpty { markDirty(later) }
    }

    // MARK: mirroring

    private func changed(_ change: SessionChange) {
        // Called by the engine under `lock` (every engine call is made holding it).
        watchers.announce(change)
        planRunner.sessionsChanged(self)
        guard let fs = followers[change.session], !fs.isEmpty else { return }
        let event = WorkoutFeedEvent(change)
        let targets = fs.values.filter { f in
            if case .message = change.kind, let sender = currentSender { return f.connection != sender }
            return true
        }
        for f in targets { f.deliver(event) }
        switch change.kind {
        case .state, .event:
            // New figures follow within the second (a pause freezes elapsed time), still at
            // most one statistics event a second.
            markDirtyLocked([change.session])
        case .saved, .discarded:
            for f in fs.values { f.deliver(.finished) }
            followers[change.session] = nil
            lastStatistics[change.session] = nil
        default: break
        }
    }

    /// Under `lock`: a journal write or a save failed. Every follower of the session and every
    /// watcher hears it (HealthKit's `didFailWithError`); the client whose command it was gets
    /// the error as its reply too. A session whose very first entry failed never existed.
    private func journalFailed(_ id: UUID, _ operation: String, _ error: StrapError) {
        guard let state = watchers.knownStates[id] ?? (try? engine.get(id))?.session.state else { return }
        log("workout session \(id): \(operation) failed: \(error)")
        let failure = SessionFailure(session: id, state: state, operation: operation, error: error, time: now())
        for f in (followers[id] ?? [:]).values { f.deliver(.failed(failure)) }
        watchers.announce(.failed(failure))
    }

    /// A `workout.watch` stream: the sessions now (open and recently ended), then every
    /// announcement after them; both under `lock`, so none falls between.
    public func watch(_ deliver: @escaping @Sendable (WorkoutAnnouncement) -> Void) -> (token: Int, sessions: [WorkoutSessionInfo]) {
        lock.withLock { _ in
            let token = nextFollower
            nextFollower += 1
            watchers.add(token, deliver)
            return (token, engine.list())
        }
    }

    public func unwatch(_ token: Int) {
        lock.withLock { _ in watchers.remove(token) }
    }

    /// Set under `lock` while `send` runs, so its sender's own followers are skipped.
    private var currentSender: UInt64?

    /// A follower of one session: gets the session now, then every change; nil token when the
    /// session is unknown.
    public func follow(_ id: UUID, follower: Follower) throws(StrapError) -> (token: Int, info: WorkoutSessionInfo) {
        try lock.withLock { _ throws(StrapError) in
            let info = try engine.get(id)
            if info.session.state == .ended { throw .invalidTransition("workout session \(id) has ended; read it with workout.get") }
            let token = nextFollower
            nextFollower += 1
            followers[id, default: [:]][token] = follower
            engine.watch(id, true)
            return (token, info)
        }
    }

    public func unfollow(_ id: UUID, token: Int) {
        lock.withLock { _ in
            followers[id]?[token] = nil
            if followers[id]?.isEmpty == true {
                followers[id] = nil
                engine.watch(id, false)
            }
        }
    }

    // MARK: commands (on a worker queue: the journal syncs)

    public func create(_ c: WorkoutConfiguration) throws(StrapError) -> WorkoutSessionInfo {
        try locked { e throws(StrapError) in try e.get(e.create(c).id) }
    }

    /// Creates and prepares; a failed prepare leaves no session behind.
    public func prepare(_ c: WorkoutConfiguration, connected: [String]) throws(StrapError) -> WorkoutSessionInfo {
        try announcingIfKept { e throws(StrapError) in try e.get(e.prepare(c, connectedDevices: connected).id) }
    }

    public func start(_ c: WorkoutConfiguration, connected: [String]) throws(StrapError) -> WorkoutSessionInfo {
        try announcingIfKept { e throws(StrapError) in try e.get(e.start(c, connectedDevices: connected).id) }
    }

    /// Creates a session and runs its first command; watchers hear of it only if it is kept
    /// (`SessionWatchers.hold`).
    private func announcingIfKept(_ body: (WorkoutEngine) throws(StrapError) -> WorkoutSessionInfo) throws(StrapError) -> WorkoutSessionInfo {
        try locked { e throws(StrapError) in
            watchers.hold()
            do throws(StrapError) {
                let info = try body(e)
                watchers.release(announce: true)
                return info
            } catch {
                watchers.release(announce: false)
                throw error
            }
        }
    }

    public func command(_ name: String, _ id: UUID, connected: [String] = [], metadata: [String: String] = [:]) throws(StrapError) -> WorkoutSessionInfo {
        try locked { e throws(StrapError) in
            switch name {
            case "prepare": try e.prepare(id, connectedDevices: connected)
            case "start": try e.start(id, connectedDevices: connected)
            case "pause": try e.pause(id)
            case "resume": try e.resume(id)
            case "stop": try e.stop(id)
            case "lap": try e.lap(id, metadata: metadata)
            case "marker": try e.marker(id, metadata: metadata)
            default: throw .internal("unknown workout command \(name)")
            }
            return try e.get(id)
        }
    }

    /// Ends the session and saves its workout. Only the journal's `end` entry is written under
    /// `lock`, not synced: its sync, the wait for the last beats, the store's flush, the
    /// beat-series scan for HRV and the save's syncs run outside it, so the ingest queue (which
    /// takes `lock` for every sample) never waits on the disk. Meanwhile other commands on the
    /// session are `busy`; the reply comes after every sync.
    public func end(_ id: UUID) throws(StrapError) -> Workout {
        let (draft, waiter) = try locked { e throws(StrapError) in
            let w = try e.beginEnd(id)
            return (w, beats.waiter(for: w))
        }
        do throws(StrapError) { try saver.sync(session: id) } catch {
            if let waiter { lock.withLock { _ in beats.remove(waiter) } }
            locked { e in e.abandonEnd(id) }
            lock.withLock { _ in journalFailed(id, "end", error) }
            throw error
        }
        if let waiter {
            if waiter.arrived.wait(timeout: .now() + .milliseconds(Int(endBeatWait))) == .timedOut {
                log("workout session \(id): no beats reaching its end from \(waiter.missing.sorted().joined(separator: ", ")) within \(endBeatWait) ms; its HRV is saved without them")
            }
            lock.withLock { _ in beats.remove(waiter) }
        }
        let saved: Workout
        do throws(StrapError) {
            do { try flushBox.withLock { $0 }?() } catch { log("workout session \(id): flushing the pipeline before the save: \(error)") }
            beforeSave?()
            saved = try saver.save(draft, session: id)
        } catch {
            locked { e in e.abandonEnd(id) }
            lock.withLock { _ in journalFailed(id, "save", error) }
            throw error
        }
        // Stored: a journal left behind by a failed removal is recognised as saved at the next
        // start-up (WorkoutJournalFile), so the end stands (and is no failure: straight to the file).
        try? journal.remove(session: id)
        let out = locked { e in e.finishEnd(id, saved: saved) }
        catalog.add(out)
        return out
    }

    public func discard(_ id: UUID) throws(StrapError) {
        try locked { e throws(StrapError) in try e.discard(id) }
    }

    public func send(_ id: UUID, message: String, from connection: UInt64?) throws(StrapError) {
        try locked { e throws(StrapError) in
            currentSender = connection
            defer { currentSender = nil }
            try e.send(id, message: message)
        }
    }

    public func get(_ id: UUID) throws(StrapError) -> WorkoutSessionInfo {
        try locked { e throws(StrapError) in try e.get(id) }
    }

    public func list() -> [WorkoutSessionInfo] {
        lock.withLock { _ in engine.list() }
    }

    /// The session holding a device (for `strapctl live`'s zone column).
    public func statistics(holding deviceID: String) -> LiveStatistics? {
        lock.withLock { _ in
            guard let id = engine.session(holding: deviceID) else { return nil }
            return try? engine.statistics(id)
        }
    }

    private func locked<T>(_ body: (WorkoutEngine) throws(StrapError) -> T) throws(StrapError) -> T {
        try lock.withLock { _ throws(StrapError) -> T in
            defer { openSessions.store(engine.openSessionCount, ordering: .relaxed) }
            return try body(engine)
        }
    }

    private func locked<T>(_ body: (WorkoutEngine) -> T) -> T {
        lock.withLock { _ -> T in
            defer { openSessions.store(engine.openSessionCount, ordering: .relaxed) }
            return body(engine)
        }
    }
}
