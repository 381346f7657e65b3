import FoundationEssentials
import StrapModel
import StrapWire
import StrapWorkout

/// `workout.*` (docs/protocol.md "Workouts"): commands run on the worker queue because the
/// journal syncs before a command returns.
extension RequestRouter {
    static let sessionCommands: Set<String> = ["pause", "resume", "stop", "lap", "marker"]

    var workouts: WorkoutService {
        get throws(WireError) {
            guard let w = context.workouts else { throw WireError(.unavailable, "workout sessions are not available in this strapd") }
            return w
        }
    }

    /// `workout.prepare` / `workout.start`: with `session`, that session moves on; without, a
    /// new session is created from the configuration parameters (and started, for start).
    func workoutCreate(_ request: Request, _ session: ClientSession, start: Bool) throws(WireError) {
        let params = try Params(request, allowed: ["session", "activityType", "locationType", "athlete", "devices", "metadata", "plan"])
        let service = try workouts
        // Which sensors are connected is asked on the worker, with the rest: the answer comes
        // from the Bluetooth queue, which the server queue must never wait on (the pipeline
        // writes live events through the server queue while holding that one).
        if let id = try params.uuid("session") {
            guard params.object.count == 1 else { throw .bad("with \"session\", \(request.op) takes no configuration") }
            let name = start ? "start" : "prepare"
            answer(request, session) { [self] () throws(StrapError) in
                let info = try service.command(name, id, connected: connectedDevices())
                return try withUnknownDevices(Self.encode(info), info.session.deviceIDs)
            }
            return
        }
        let given = try Self.configuration(params)
        let planID = try params.uuid("plan")
        let plans = service.plans
        answer(request, session) { [self] () throws(StrapError) in
            var configuration = given
            if let planID {
                guard let plan = plans.plan(planID) else { throw .notFound("no plan \(planID.uuidString.lowercased())") }
                configuration.plan = plan
            }
            let connected = connectedDevices()
            let info = start ? try service.start(configuration, connected: connected) : try service.prepare(configuration, connected: connected)
            return try withUnknownDevices(Self.encode(info), info.session.deviceIDs)
        }
    }

    /// `workout.pause|resume|stop|lap|marker {"session", "metadata"}`.
    func workoutCommand(_ request: Request, _ session: ClientSession, _ name: String) throws(WireError) {
        let takesMetadata = name == "lap" || name == "marker"
        let params = try Params(request, allowed: takesMetadata ? ["session", "metadata"] : ["session"])
        let id = try params.requiredUUID("session")
        let metadata = try params.stringMap("metadata") ?? [:]
        let service = try workouts
        answer(request, session) { () throws(StrapError) in try Self.encode(service.command(name, id, metadata: metadata)) }
    }

    /// `workout.end {"session"}` → `{"workout": saved}`.
    func workoutEnd(_ request: Request, _ session: ClientSession) throws(WireError) {
        let id = try Params(request, allowed: ["session"]).requiredUUID("session")
        let service = try workouts
        answer(request, session) { () throws(StrapError) in
            let w = try service.end(id)
            return "{\"workout\":" + (try Self.json(w)) + "}"
        }
    }

    func workoutDiscard(_ request: Request, _ session: ClientSession) throws(WireError) {
        let id = try Params(request, allowed: ["session"]).requiredUUID("session")
        let service = try workouts
        answer(request, session) { () throws(StrapError) in
            try service.discard(id)
            return "{\"discarded\":\"\(id.uuidString)\"}"
        }
    }

    /// `workout.send {"session", "payload"}`: any JSON value of at most 4096 bytes, relayed to
    /// every follower of the session except the sender's own streams.
    func workoutSend(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["session", "payload"])
        let id = try params.requiredUUID("session")
        guard let payload = params.object["payload"] else { throw .bad("missing \"payload\"") }
        let text = String(decoding: JSONWriter.bytes(payload), as: UTF8.self)
        let service = try workouts
        let sender = session.connection.id
        answer(request, session) { () throws(StrapError) in
            try service.send(id, message: text, from: sender)
            return "{}"
        }
    }

    /// `workout.get {"session"}`: an open or recently ended session (with its statistics), or a
    /// saved workout by its UUID or its session's.
    func workoutGet(_ request: Request, _ session: ClientSession) throws(WireError) {
        let id = try Params(request, allowed: ["session"]).requiredUUID("session")
        let service = try workouts
        answer(request, session) { [self] () throws(StrapError) in
            do throws(StrapError) {
                let info = try service.get(id)
                return try withUnknownDevices(Self.encode(info), info.session.deviceIDs.isEmpty
                    ? info.session.configuration.deviceIDs : info.session.deviceIDs)
            } catch {
                guard case .notFound = error else { throw error }
                guard let w = try service.catalog.workout(id) else { throw .notFound("no workout or workout session \(id)") }
                return withUnknownDevices("{\"workout\":" + (try Self.json(w)) + "}", w.deviceIDs)
            }
        }
    }

    /// `workout.list {"from", "to", "limit"}` → `{"sessions": [open and recently ended],
    /// "workouts": [saved, newest first]}`.
    func workoutList(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["from", "to", "limit"])
        let from = try params.time("from"), to = try params.time("to")
        let limit = Int(try params.int("limit", in: 1...10_000) ?? 100)
        let service = try workouts
        answer(request, session) { () throws(StrapError) in
            let sessions = service.list()
            let saved = try service.catalog.workouts(from: from, to: to, limit: limit)
            return "{\"sessions\":[" + (try sessions.map(Self.json).joined(separator: ",")) + "],\"workouts\":["
                + (try saved.map(Self.json).joined(separator: ",")) + "]}"
        }
    }

    /// A reply object with `unknownDevices` added: the session's addresses strapd has never
    /// seen (not among the devices it knows, connected or not). Such a session runs, but
    /// nothing counts from those until they connect, which a typo in an address never does.
    /// On the worker: the device list is the Bluetooth queue's.
    func withUnknownDevices(_ object: String, _ ids: [String]) -> String {
        guard !ids.isEmpty else { return object }
        let known = Set(context.directory.list(service: context.devices).map { $0.address.uppercased() })
        let unknown = ids.filter { !known.contains($0.uppercased()) }
        guard !unknown.isEmpty, object.hasSuffix("}") else { return object }
        let list = unknown.map { "\"\($0)\"" }.joined(separator: ",")
        return object.dropLast() + ",\"unknownDevices\":[\(list)]}"
    }

    func connectedDevices() -> [String] {
        context.directory.list(service: context.devices).filter(\.connected).map(\.address)
    }

    /// Runs `work` on the worker queue; its string is the reply's `result` object.
    func answer(_ request: Request, _ session: ClientSession, _ work: @escaping @Sendable () throws(StrapError) -> String) {
        let id = request.id
        respond(request, session) { () throws(WireError) -> [UInt8] in
            do throws(StrapError) { return Reply.success(id: id, resultJSON: Array(try work().utf8)) } catch { throw WireError(error) }
        }
    }

    static func configuration(_ params: Params) throws(WireError) -> WorkoutConfiguration {
        let activity = try params.requiredString("activityType")
        let location = try params.string("locationType")
        let athlete = try params.string("athlete") ?? WorkoutConfiguration.defaultAthlete
        let devices = try params.addresses("devices") ?? []
        let metadata = try params.stringMap("metadata") ?? [:]
        do throws(StrapError) {
            var c = WorkoutConfiguration(activityType: try ActivityType(parsing: activity), athlete: athlete,
                                         deviceIDs: devices, metadata: metadata)
            if let location {
                guard let l = Workout.LocationType(rawValue: location) else {
                    throw .invalidOption("unknown locationType '\(location)'; known: indoor, outdoor, unknown")
                }
                c.locationType = l
            }
            try c.validate()
            return c
        } catch { throw WireError(error) }
    }

    static func encode(_ info: WorkoutSessionInfo) throws(StrapError) -> String { try json(info) }

    static func json<T: Encodable>(_ value: T) throws(StrapError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch {
            throw .internal("encoding \(T.self): \(error)")
        }
    }
}

extension Params {
    func uuid(_ key: String) throws(WireError) -> UUID? {
        guard let s = try string(key) else { return nil }
        guard let u = UUID(uuidString: s) else { throw .bad("\"\(key)\" must be a UUID, got \"\(s)\"") }
        return u
    }

    func requiredUUID(_ key: String) throws(WireError) -> UUID {
        guard let u = try uuid(key) else { throw .bad("missing \"\(key)\"") }
        return u
    }

    /// An object whose members are all strings (metadata).
    func stringMap(_ key: String) throws(WireError) -> [String: String]? {
        switch object[key] {
        case nil, .null?: return nil
        case .object(let o)?:
            var out: [String: String] = [:]
            for (k, v) in o.entries {
                guard case .string(let s) = v else { throw .bad("\"\(key)\" must map names to strings; \"\(k)\" is \(v.typeName)") }
                out[k] = s
            }
            return out
        case let other?: throw .bad("\"\(key)\" must be an object, not \(other.typeName)")
        }
    }
}
