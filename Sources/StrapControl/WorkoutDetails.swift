import StrapWire

/// A workout as strapctl shows it, read from either shape the daemon answers
/// (docs/protocol-workouts.md): a saved workout (`summary`/`info`/`laps` with `summary`), or a
/// session with its live statistics. Figures use the saved summary's key names in both cases
/// (`elapsedTime`, `heartRateAverage`, …, `timeBelowZone1`, `timeInZone1`…), so one renderer
/// serves `end`, `show` and `follow`.
struct WorkoutDetails {
    struct Lap {
        var index: Int
        var start: String?
        /// Nil for the lap in progress.
        var end: String?
        var figures: [String: Double]
    }

    struct Event {
        var kind: String
        var time: String?
        var metadata: JSONObject?
    }

    /// The zones the figures were counted in.
    struct Zones {
        var method: String
        var isDefaultScheme: Bool
        /// Six ascending bounds in bpm (zone k is [bpm[k−1], bpm[k])); empty when unknown.
        var bpm: [Double]
        var maximumHeartRate: Double?
        var maximumEstimated: Bool
    }

    /// The saved workout's store UUID; nil for a session not yet saved.
    var workoutUUID: String?
    var sessionID: String?
    /// The session's state; nil for a workout read from the store only.
    var state: String?
    var activityType = "?"
    var locationType = "unknown"
    var athlete: String?
    var deviceIDs: [String] = []
    /// Devices of the session strapd has never seen (the reply's `unknownDevices`).
    var unknownDevices: [String] = []
    var start: String?
    /// The saved workout's end, or the session's stop.
    var end: String?
    var figures: [String: Double] = [:]
    var energySource: String?
    var energyReason: String?
    var zones: Zones?
    var zonesReason: String?
    /// Why the saved workout has no HRV figures (`hrv*` in `figures` otherwise).
    var hrvReason: String?
    var laps: [Lap] = []
    var events: [Event] = []
    var metadata: JSONObject?

    /// A saved workout object (`workout.end`'s `workout`, `workout.get` of a stored one, the
    /// `saved` event).
    init(saved w: JSONObject) {
        workoutUUID = w.string("uuid")
        sessionID = w.string("sessionID")
        activityType = w.string("activityType") ?? "?"
        locationType = w.string("locationType") ?? "unknown"
        athlete = w.string("athlete")
        deviceIDs = Self.strings(w["deviceIDs"])
        start = w.string("start")
        end = w.string("end")
        figures = Self.numbers(w.object("summary"))
        let info = w.object("info") ?? JSONObject()
        energySource = info.string("activeEnergySource")
        energyReason = info.string("activeEnergyReason")
        zonesReason = info.string("heartRateZonesReason")
        hrvReason = info.string("hrvReason")
        if let method = info.string("heartRateZoneMethod") {
            let bounds = (0...5).compactMap { figures["heartRateZoneBound\($0)"] }
            zones = Zones(method: method, isDefaultScheme: info.string("heartRateZoneScheme") == "default",
                          bpm: bounds.count == 6 ? bounds : [], maximumHeartRate: figures["maximumHeartRate"],
                          maximumEstimated: info.string("maximumHeartRateSource") == "tanaka2001")
        }
        laps = w.objects("laps").enumerated().map { i, lap in
            Lap(index: i + 1, start: lap.string("start"), end: lap.string("end"), figures: Self.numbers(lap.object("summary")))
        }
        events = Self.events(w)
        metadata = w.object("metadata")
    }

    /// `workout.get`/`workout.list`/`workout.live`'s session object `{"session", "statistics",
    /// "workout"}`. Once the session's workout is saved, its figures come from the workout
    /// (what was stored) and the state from the session.
    init(sessionInfo info: JSONObject) {
        let session = info.object("session") ?? JSONObject()
        if let saved = info.object("workout") {
            self.init(saved: saved)
        } else {
            self.init(statistics: info.object("statistics") ?? JSONObject())
            let configuration = session.object("configuration") ?? JSONObject()
            activityType = configuration.string("activityType") ?? "?"
            locationType = configuration.string("locationType") ?? "unknown"
            athlete = configuration.string("athlete")
            deviceIDs = Self.strings(session["deviceIDs"])
            start = session.string("start")
            end = session.string("stop")
            events = Self.events(session)
            metadata = configuration.object("metadata")
        }
        sessionID = session.string("session") ?? sessionID
        state = session.string("state")
    }

    /// Only the figures of a LiveStatistics object (the `statistics` event).
    init(statistics s: JSONObject) {
        figures = Self.figures(s)
        state = s.string("state")
        sessionID = s.string("session")
        start = s.string("start")
        energySource = s.string("activeEnergySource")
        energyReason = s.string("activeEnergyReason")
        zonesReason = s.string("heartRateZonesReason")
        if let z = s.object("heartRateZones") {
            let scheme = z.object("scheme") ?? JSONObject()
            let maximum = z.object("maximumHeartRate")
            zones = Zones(method: scheme.string("method") ?? "?", isDefaultScheme: z.bool("isDefaultScheme") ?? false,
                          bpm: Self.doubles(z["bpm"]), maximumHeartRate: maximum?.number("value"),
                          maximumEstimated: maximum?.bool("estimated") ?? false)
        }
        laps = s.objects("laps").enumerated().map { i, lap in
            Lap(index: lap.int("index").map(Int.init) ?? i + 1, start: lap.string("start"), end: lap.string("end"),
                figures: Self.figures(lap))
        }
    }

    /// The zone (1…5) of a heart rate, 0 below zone 1; nil when the zones are unknown.
    func zone(of heartRate: Double) -> Int? {
        guard let bpm = zones?.bpm, bpm.count == 6 else { return nil }
        var z = 0
        while z < 5 && heartRate >= bpm[z] { z += 1 }
        return z
    }

    /// Seconds below zone 1 and in zones 1…5, when known.
    var timeInZones: [Double]? {
        let keys = ["timeBelowZone1"] + (1...5).map { "timeInZone\($0)" }
        let values = keys.compactMap { figures[$0] }
        return values.count == 6 ? values : nil
    }

    // MARK: reading JSON

    /// Every numeric member, plus LiveStatistics' `timeInZones` array as the summary's keys.
    static func figures(_ o: JSONObject) -> [String: Double] {
        var f = numbers(o)
        let zones = doubles(o["timeInZones"])
        if zones.count == 6 {
            f["timeBelowZone1"] = zones[0]
            for k in 1...5 { f["timeInZone\(k)"] = zones[k] }
        }
        return f
    }

    static func numbers(_ o: JSONObject?) -> [String: Double] {
        var out: [String: Double] = [:]
        for (key, _) in o?.entries ?? [] { if let v = o?.number(key) { out[key] = v } }
        return out
    }

    static func doubles(_ v: WireJSON?) -> [Double] {
        guard case .array(let items)? = v else { return [] }
        return items.compactMap { item -> Double? in
            switch item { case .int(let i): Double(i); case .double(let d): d; default: nil }
        }
    }

    static func strings(_ v: WireJSON?) -> [String] {
        guard case .array(let items)? = v else { return [] }
        return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
    }

    static func events(_ o: JSONObject) -> [Event] {
        o.objects("events").map { Event(kind: $0.string("kind") ?? "?", time: $0.string("time"), metadata: $0.object("metadata")) }
    }
}
