import StrapModel
import StrapWire

/// The grant an operation needs (docs/protocol.md#access-control).
enum Permission: String, CustomStringConvertible {
    /// Anyone who can connect (the socket is 0660, group strapd): `status`, `cancel`.
    case none
    /// Queries, statistics, subscriptions, following.
    case read
    /// Workout control.
    case record
    /// Devices, deletion, the profile.
    case admin

    var description: String { rawValue }
}

extension Grants {
    func permits(_ permission: Permission) -> Bool {
        switch permission {
        case .none: true
        case .read: read.allowsAny
        case .record: record
        case .admin: admin
        }
    }

    /// The sample types a read-limited peer may see; nil when it may read everything.
    var readableTypes: Set<QuantityType>? {
        switch read {
        case .all: nil
        case .none: []
        case .types(let names): Set(names.compactMap(QuantityType.init(rawValue:)))
        }
    }

    /// Whether workouts are readable: an unlimited read grant, or `workout` among the types.
    var readsWorkouts: Bool {
        switch read {
        case .all: true
        case .none: false
        case .types(let names): names.contains("workout")
        }
    }

    /// The types a read request will see: what it asked (every type when nil), within the
    /// grant. Asking explicitly for a type outside the grant is `notAuthorized`.
    func readable(asked: Set<QuantityType>?) throws(WireError) -> Set<QuantityType>? {
        guard let allowed = readableTypes else { return asked }
        guard let asked else { return allowed }
        let denied = asked.subtracting(allowed)
        if !denied.isEmpty {
            throw WireError(.notAuthorized, "not authorized to read \(denied.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        return asked
    }

    /// Checks the types a predicate names explicitly against the grant.
    func checkPredicate(_ predicate: SamplePredicate?) throws(WireError) {
        guard let predicate, readableTypes != nil, let named = predicate.typeBounds else { return }
        _ = try readable(asked: named)
    }
}

/// One entry of the operation table: the grant it needs, what a type-limited read grant must
/// include for it, and its handler. The router's check before every request and
/// `access.status` read this one table, so what a peer is told it may do is what it can do.
struct Operation: Sendable {
    typealias Handler = @Sendable (RequestRouter, Request, ClientSession) throws(WireError) -> Void
    let permission: Permission
    /// Object types a read grant limited to types must include (`workout` for the workout
    /// reads, `heartbeatSeries` for HRV); types a request names are checked per request.
    let readTypes: [String]
    let run: Handler

    init(permission: Permission, readTypes: [String] = [], run: @escaping Handler) {
        self.permission = permission
        self.readTypes = readTypes
        self.run = run
    }

    /// Why `grants` may not run this operation, or nil when they may.
    func refusal(_ name: String, for grants: Grants) -> WireError? {
        guard grants.permits(permission) else { return WireError(.notAuthorized, "\(name) needs the \(permission) grant") }
        for type in readTypes where !grants.read.allows(type: type) {
            return WireError(.notAuthorized, type == "workout" ? "not authorized to read workouts" : "not authorized to read \(type)")
        }
        return nil
    }

    /// Operation names are part of the contract (docs/protocol.md#operations).
    static let table: [String: Operation] = [
        "status": Operation(permission: .none) { r, q, s throws(WireError) in try r.status(q, s) },
        "access.status": Operation(permission: .none) { r, q, s throws(WireError) in try r.accessStatus(q, s) },
        "cancel": Operation(permission: .none) { r, q, s throws(WireError) in try r.cancel(q, s) },
        "devices.list": Operation(permission: .read) { r, q, s throws(WireError) in try r.devicesList(q, s) },
        "devices.info": Operation(permission: .read) { r, q, s throws(WireError) in try r.devicesInfo(q, s) },
        "devices.scan": Operation(permission: .admin) { r, q, s throws(WireError) in try r.devicesScan(q, s) },
        "devices.pair": Operation(permission: .admin) { r, q, s throws(WireError) in try r.deviceAction(q, s, .pair) },
        "devices.connect": Operation(permission: .admin) { r, q, s throws(WireError) in try r.deviceAction(q, s, .connect) },
        "devices.disconnect": Operation(permission: .admin) { r, q, s throws(WireError) in try r.deviceAction(q, s, .disconnect) },
        "devices.forget": Operation(permission: .admin) { r, q, s throws(WireError) in try r.deviceAction(q, s, .forget) },
        "devices.resetEnergy": Operation(permission: .admin) { r, q, s throws(WireError) in try r.deviceAction(q, s, .resetEnergy) },
        "samples.query": Operation(permission: .read) { r, q, s throws(WireError) in try r.samplesQuery(q, s) },
        "samples.anchored": Operation(permission: .read) { r, q, s throws(WireError) in try r.samplesAnchored(q, s) },
        "samples.delete": Operation(permission: .admin) { r, q, s throws(WireError) in try r.samplesDelete(q, s) },
        "statistics.query": Operation(permission: .read) { r, q, s throws(WireError) in try r.statisticsQuery(q, s) },
        "statistics.collection": Operation(permission: .read) { r, q, s throws(WireError) in try r.statisticsCollection(q, s) },
        "live.subscribe": Operation(permission: .read) { r, q, s throws(WireError) in try r.liveSubscribe(q, s) },
        "workout.prepare": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCreate(q, s, start: false) },
        "workout.start": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCreate(q, s, start: true) },
        "workout.pause": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCommand(q, s, "pause") },
        "workout.resume": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCommand(q, s, "resume") },
        "workout.stop": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCommand(q, s, "stop") },
        "workout.lap": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCommand(q, s, "lap") },
        "workout.marker": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutCommand(q, s, "marker") },
        "workout.end": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutEnd(q, s) },
        "workout.discard": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutDiscard(q, s) },
        "workout.send": Operation(permission: .record) { r, q, s throws(WireError) in try r.workoutSend(q, s) },
        "workout.get": Operation(permission: .read, readTypes: ["workout"]) { r, q, s throws(WireError) in try r.workoutGet(q, s) },
        "workout.list": Operation(permission: .read, readTypes: ["workout"]) { r, q, s throws(WireError) in try r.workoutList(q, s) },
        "workout.live": Operation(permission: .read, readTypes: ["workout"]) { r, q, s throws(WireError) in try r.workoutLive(q, s) },
        "workout.watch": Operation(permission: .read, readTypes: ["workout"]) { r, q, s throws(WireError) in try r.workoutWatch(q, s) },
        "workout.export": Operation(permission: .read, readTypes: ["workout"]) { r, q, s throws(WireError) in try r.workoutExport(q, s) },
        "workout.hrv": Operation(permission: .read, readTypes: ["heartbeatSeries"]) { r, q, s throws(WireError) in try r.workoutHRV(q, s) },
        "profile.get": Operation(permission: .read) { r, q, s throws(WireError) in try r.profileGet(q, s) },
        "profile.set": Operation(permission: .admin) { r, q, s throws(WireError) in try r.profileSet(q, s) },
        "plan.save": Operation(permission: .record) { r, q, s throws(WireError) in try r.planSave(q, s) },
        "plan.list": Operation(permission: .read) { r, q, s throws(WireError) in try r.planList(q, s) },
        "plan.get": Operation(permission: .read) { r, q, s throws(WireError) in try r.planGet(q, s) },
        "plan.delete": Operation(permission: .record) { r, q, s throws(WireError) in try r.planDelete(q, s) },
        "trainer.status": Operation(permission: .read) { r, q, s throws(WireError) in try r.trainerStatus(q, s) },
        "trainer.set": Operation(permission: .record) { r, q, s throws(WireError) in try r.trainerSet(q, s) },
        "trainer.release": Operation(permission: .record) { r, q, s throws(WireError) in try r.trainerRelease(q, s) },
    ]
}
