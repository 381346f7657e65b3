import StrapWire

/// What `strapctl live` shows of workout sessions: for each session holding devices, one
/// `workout.live` follower on its own connection, so the device lines can carry the session's
/// zone, elapsed time, average heart rate and energy. Sessions are found with `workout.list`
/// at the start and every few seconds; a follower ends with its session (`finished`).
/// This needs nothing new from the daemon: `workout.live` already carries these figures, at
/// most once a second.
final class LiveWorkoutWatch {
    static let recheckSeconds = 5.0
    /// States in which a session holds its devices (docs/workouts.md "Devices").
    static let holdingStates: Set<String> = ["prepared", "running", "paused"]

    private let ctx: CommandContext
    /// `live --device`: only sessions on these devices (upper case); empty: every session.
    private let devices: Set<String>
    private var followers: [String: DaemonConnection] = [:]
    private var lastCheck = -Double.infinity
    /// Set when the daemon cannot list workouts (none configured, no grant): live goes on without.
    private var disabled = false

    init(_ ctx: CommandContext, devices: [String] = []) {
        self.ctx = ctx
        self.devices = Set(devices.map { $0.uppercased() })
    }

    var descriptors: [Int32] { followers.values.map(\.descriptor) }
    var hasBufferedLine: Bool { followers.values.contains { $0.hasBufferedLine } }

    /// Every `recheckSeconds`: follows the sessions not yet followed; returns their `ok`
    /// results (the session as `workout.get` shows it).
    func refresh(now: Double) -> [JSONObject] {
        guard !disabled, now - lastCheck >= Self.recheckSeconds else { return [] }
        lastCheck = now
        let listing: JSONObject
        do { listing = try ctx.call("workout.list", ["limit": .int(1)], echo: false) } catch {
            disabled = true
            return []
        }
        var started: [JSONObject] = []
        for info in listing.objects("sessions") {
            guard let session = info.object("session"), let id = session.string("session"), followers[id] == nil,
                  Self.holdingStates.contains(session.string("state") ?? "") else { continue }
            let used = WorkoutDetails.strings(session["deviceIDs"]).map { $0.uppercased() }
            guard devices.isEmpty || used.contains(where: devices.contains) else { continue }
            do {
                let client = try ctx.connect(timeout: 1)
                let reply = try client.call(["id": .int(1), "op": .string("workout.live"), "session": .string(id)], stream: true)
                started.append(try CommandContext.result(of: reply))
                followers[id] = client
            } catch {
                // Ended between the list and the follow: nothing to show.
                continue
            }
        }
        return started
    }

    /// The events waiting on the followers `ready` names (or already buffered). A follower
    /// whose stream ended or failed is closed.
    func read(_ ready: Set<Int32>) -> [(session: String, kind: String, data: JSONObject)] {
        var events: [(String, String, JSONObject)] = []
        for (id, client) in followers where client.hasBufferedLine || ready.contains(client.descriptor) {
            do {
                guard let m = try client.readMessage() else { throw ClientError.closed }
                guard let kind = m.string("event") else { continue }
                events.append((id, kind, m.object("data") ?? JSONObject()))
                if kind == "finished" || kind == "error" || kind == "shutdown" { followers[id] = nil }
            } catch ClientError.timedOut {
                continue
            } catch {
                followers[id] = nil
                events.append((id, "finished", JSONObject()))
            }
        }
        return events
    }
}

extension LiveView {
    /// Starts showing a session (`workout.live`'s `ok` result); the line for piped output.
    mutating func followWorkout(_ info: JSONObject) -> String? {
        let view = WorkoutFollowView(info)
        guard let id = view.details.sessionID else { return nil }
        workouts[id] = view
        return "workout \(TextFormat.shortID(id)) \(view.details.activityType) \(view.details.state ?? "?") on "
            + view.details.deviceIDs.joined(separator: ", ")
    }

    /// One event of a followed session; the line for piped output.
    mutating func applyWorkout(_ session: String, _ kind: String, _ data: JSONObject) -> String? {
        guard var view = workouts[session] else { return nil }
        if kind == "finished" {
            workouts[session] = nil
            return "workout \(TextFormat.shortID(session)) finished"
        }
        let lines = view.apply(kind, data)
        workouts[session] = view
        guard kind != "saved", let line = kind == "statistics" ? view.statisticsLine : lines.first else { return nil }
        return "workout \(TextFormat.shortID(session)) \(line)"
    }

    /// `  workout BD9F85AA cycling running 0:25  zone 3  avg HR 120 bpm  energy 12.1 kcal`
    /// for each session using the device.
    func workoutLines(for address: String) -> [String] {
        workouts.values.filter { $0.details.deviceIDs.contains(address) }.sorted { ($0.details.sessionID ?? "") < ($1.details.sessionID ?? "") }
            .map { view in
                let d = view.details
                var parts = ["workout \(TextFormat.shortID(d.sessionID ?? "?")) \(d.activityType) \(d.state ?? "?")",
                             TextFormat.duration(d.figures["elapsedTime"] ?? 0)]
                if let zone = view.zoneNow { parts.append(zone) }
                if let avg = d.figures["heartRateAverage"] { parts.append("avg HR \(TextFormat.bpm(avg))") }
                if let kcal = d.figures["activeEnergy"] { parts.append("energy \(TextFormat.kcal(kcal))") }
                return "  " + parts.joined(separator: "  ")
            }
    }
}
