import FoundationEssentials
import StrapModel

extension WorkoutEngine {
    // MARK: devices

    /// The session holding `deviceID` (prepared, running or paused), if any.
    public func session(holding deviceID: String) -> UUID? {
        holder(of: deviceID)?.session.id
    }

    func holder(of deviceID: String) -> Record? {
        guard let r = routes[deviceID]?.current, r.session.holdsDevices else { return nil }
        return r
    }

    /// The configuration's devices, each free; or, when it names none, every connected device
    /// no other session holds. `busy` names the session holding a device asked for.
    func resolveDevices(for r: Record, connected: [String]) throws(StrapError) -> [String] {
        let named = r.session.configuration.deviceIDs
        if !named.isEmpty {
            for id in named {
                if let h = holder(of: id), h !== r {
                    throw .busy("device \(id) is used by workout session \(h.session.id) (athlete \(h.session.configuration.athlete))")
                }
            }
            return named
        }
        var free: [String] = [], held: [String] = [], seen = Set<String>()
        for id in connected where seen.insert(id).inserted {
            if let h = holder(of: id), h !== r { held.append("\(id) by workout session \(h.session.id)") } else { free.append(id) }
        }
        if free.isEmpty && !held.isEmpty {
            throw .busy("no device named and every connected device is in use: " + held.joined(separator: ", "))
        }
        return free.count > WorkoutConfiguration.maximumDevices ? Array(free.prefix(WorkoutConfiguration.maximumDevices)) : free
    }

    func claim(_ r: Record) {
        for id in r.session.deviceIDs {
            guard let old = routes[id] else { routes[id] = Route(current: r, previous: nil); continue }
            if old.current === r { continue }
            let takesOver = r.session.holdsDevices
                || (!old.current.session.holdsDevices && (r.session.startDate ?? .min) >= (old.current.session.startDate ?? .min))
            routes[id] = takesOver ? Route(current: r, previous: old.current) : Route(current: old.current, previous: r)
        }
        cachedDevice = nil
        cachedRoute = nil
        routesByObject.removeAll(keepingCapacity: true)
    }

    /// An ended or discarded session gets no more samples.
    func release(_ r: Record) {
        for id in r.session.deviceIDs {
            guard let route = routes[id] else { continue }
            if route.current === r {
                routes[id] = route.previous.map { Route(current: $0, previous: nil) }
            } else if route.previous === r {
                routes[id] = Route(current: route.current, previous: nil)
            }
        }
        cachedDevice = nil
        cachedRoute = nil
        routesByObject.removeAll(keepingCapacity: true)
    }

    // MARK: samples

    /// Routes a sample to the session using its device and counts it there at once; returns
    /// that session when the sample changed its statistics. O(1): one dictionary lookup, none
    /// when the device is the same as the previous sample's.
    @discardableResult
    public func add(_ sample: Sample) -> UUID? {
        guard let route = route(of: sample) else { return nil }
        return count(sample, route)
    }

    /// The daemon's entry: routes a sample like `add`, but a session nobody watches (`watch`)
    /// keeps it until `pendingLimit` samples are waiting, or until anything reads or changes
    /// the session, and counts them then, in the order they came. (A sample that follows one
    /// for the same session while nothing waits is counted at once: that memory is warm.) Returns what `add` returns
    /// for a watched session, nil for one that kept the sample.
    ///
    /// Why: at the live cadence each session's sample comes about a second after its previous
    /// one, and counting it one by one touches the session's builder cold every time; counted
    /// in a batch, it is touched once per batch. The statistics any reader gets are the same,
    /// because every read and every command counts what waits first (`settle`), and the
    /// builder sees the same samples and journal entries in the same order as with `add`.
    @discardableResult
    public func queue(_ sample: Sample) -> UUID? {
        guard LiveWorkoutBuilder.counts(sample.type), let route = route(of: sample) else { return nil }
        let r = route.current, id = ObjectIdentifier(r)
        defer { lastQueued = id }
        guard route.previous == nil, !r.watched else { return count(sample, route) }
        if id == lastQueued && r.pending.isEmpty {
            // The previous sample went to this session and nothing waits: its memory is warm
            // (a session fed alone, or the rest of a packet after its batch was counted).
            r.builder.add(sample)
            return nil
        }
        r.pending.append(sample)
        if r.pending.count >= Self.pendingLimit { settle(r) }
        return nil
    }

    /// Whether a session's statistics are read as they change (it has followers): its samples
    /// are then counted as they come, so `queue` can say which sample changed them.
    public func watch(_ id: UUID, _ watched: Bool) {
        guard let r = open[id], r.watched != watched else { return }
        settle(r)
        r.watched = watched
    }

    /// Counts every sample `queue` kept, in every open session (what a read does for its own).
    public func settleAll() {
        for r in open.values { settle(r) }
    }

    /// Counts what `queue` kept for the session.
    func settle(_ r: Record) {
        guard !r.pending.isEmpty else { return }
        for s in r.pending { r.builder.add(s) }
        r.pending.removeAll(keepingCapacity: true)
    }

    private func count(_ sample: Sample, _ route: Route) -> UUID? {
        settle(route.current)
        if route.current.builder.add(sample) { return route.current.id }
        if let p = route.previous {
            settle(p)
            if p.builder.add(sample) { return p.id }
        }
        return nil
    }

    private func route(of sample: Sample) -> Route? {
        let key = ObjectIdentifier(sample.device)
        if cachedDevice == key { return cachedRoute }
        if let known = routesByObject[key] {
            cachedRoute = known.route
        } else {
            cachedRoute = routes[sample.device.id]
            routesByObject[key] = (sample.device, cachedRoute)
        }
        cachedDevice = key
        return cachedRoute
    }

    /// Feeds one session directly (recovery's re-feed of stored samples, in time order),
    /// whoever holds the device now.
    @discardableResult
    public func add(_ sample: Sample, to id: UUID) throws(StrapError) -> Bool {
        guard let r = open[id] else { throw .notFound("no open workout session \(id)") }
        settle(r)
        return r.builder.add(sample)
    }

    // MARK: recovery

    /// Rebuilds an open session from its journal (start-up). Then re-feed the stored samples
    /// matching `session.replayPredicate` in time order with `add(_:to:)`; a session whose
    /// journal ended before its workout was saved is listed in `sessionsAwaitingSave`, and
    /// `end` saves it.
    @discardableResult
    public func recover(_ entries: [SessionJournalEntry]) throws(StrapError) -> WorkoutSession {
        let s = try WorkoutSession(rebuildingFrom: entries)
        guard open[s.id] == nil else { throw .internal("workout session \(s.id) is already open") }
        let r = Record(s)
        for e in entries { r.builder.apply(e) }
        open[s.id] = r
        if s.state != .ended { claim(r) }
        return s
    }

    /// Sessions not ended yet (and ended ones awaiting their save): while there are none, no
    /// sample can count anywhere.
    public var openSessionCount: Int { open.count }

    /// Ended sessions whose workout is not stored yet (`end` saves it).
    public var sessionsAwaitingSave: [UUID] {
        open.values.filter { $0.session.state == .ended }.map(\.session.id).sorted { $0.uuidString < $1.uuidString }
    }

    // MARK: reading

    func anyRecord(_ id: UUID) throws(StrapError) -> Record {
        if let r = open[id] ?? ended.last(where: { $0.session.id == id }) { return r }
        throw .notFound("no workout session \(id)")
    }

    /// The session's statistics now (for an ended session: at its end).
    public func statistics(_ id: UUID) throws(StrapError) -> LiveStatistics {
        let r = try anyRecord(id)
        settle(r)
        return r.builder.statistics(session: id, state: r.session.state, at: r.session.endDate ?? now())
    }

    public func get(_ id: UUID) throws(StrapError) -> WorkoutSessionInfo {
        let r = try anyRecord(id)
        return info(r)
    }

    /// Open sessions, then the kept ended ones, oldest first.
    public func list() -> [WorkoutSessionInfo] {
        let all = open.values.sorted { ($0.session.created, $0.session.id.uuidString) < ($1.session.created, $1.session.id.uuidString) }
        return all.map(info) + ended.map(info)
    }

    func info(_ r: Record) -> WorkoutSessionInfo {
        settle(r)
        return WorkoutSessionInfo(session: r.session,
                           statistics: r.builder.statistics(session: r.session.id, state: r.session.state,
                                                            at: r.session.endDate ?? now()),
                           workout: r.workout)
    }
}
