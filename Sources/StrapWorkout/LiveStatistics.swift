import FoundationEssentials
import StrapModel

/// The figures of a session or one lap (docs/workouts.md, "Statistics"). Units: seconds,
/// bpm, kcal, metres, m/s, and the cadence unit of the sensor (rpm cycling, 1/min running).
/// A figure with no counted sample is nil (absent in JSON), never 0.
public struct WorkoutFigures: Sendable, Hashable {
    /// Active seconds: pauses, and anything before the start or after the stop, left out.
    public var elapsedTime: Double = 0
    public var heartRateSamples = 0
    public var heartRateMostRecent: Double?
    /// Mean of the counted heart-rate samples.
    public var heartRateAverage: Double?
    public var heartRateMinimum: Double?
    public var heartRateMaximum: Double?
    /// kcal; nil with a reason in `LiveStatistics.activeEnergyReason`.
    public var activeEnergy: Double?
    public var distance: Double?
    public var speedMostRecent: Double?
    public var speedAverage: Double?
    public var speedMaximum: Double?
    public var cadenceMostRecent: Double?
    public var cadenceAverage: Double?
    public var cadenceMaximum: Double?
    /// W: the power readings of the session's power source (a power meter or a trainer), their
    /// plain mean; the saved workout's power figures come from the 1 Hz series instead
    /// (`WorkoutPower`).
    public var powerMostRecent: Double?
    public var powerAverage: Double?
    public var powerMaximum: Double?
    /// Seconds below zone 1, then in zones 1…5; nil when the zones are unknown.
    public var timeInZones: [Double]?

    public init() {}

    /// The flat numeric summary a saved workout (and each of its laps) carries.
    public var summary: [String: Double] {
        var s: [String: Double] = ["elapsedTime": elapsedTime]
        s["heartRateAverage"] = heartRateAverage
        s["heartRateMinimum"] = heartRateMinimum
        s["heartRateMaximum"] = heartRateMaximum
        s["activeEnergy"] = activeEnergy
        s["distance"] = distance
        s["speedAverage"] = speedAverage
        s["speedMaximum"] = speedMaximum
        s["cadenceAverage"] = cadenceAverage
        s["cadenceMaximum"] = cadenceMaximum
        if let z = timeInZones, z.count == 6 {
            s["timeBelowZone1"] = z[0]
            for k in 1...5 { s["timeInZone\(k)"] = z[k] }
        }
        return s
    }
}

/// One lap's figures. Lap 1 begins at the start; each `lap` event ends one lap and begins the
/// next; the last lap runs to the stop (or to now while the session runs).
public struct LapStatistics: Sendable, Hashable {
    /// 1-based.
    public var index: Int
    public var start: Millis
    /// Nil for the lap in progress.
    public var end: Millis?
    public var figures: WorkoutFigures
}

/// What a live builder knows at one instant: the session's figures, how energy was obtained,
/// the zones used, and every lap's figures. Codable with the keys of docs/workouts.md.
public struct LiveStatistics: Sendable, Hashable {
    public var session: UUID
    public var state: WorkoutSessionState
    /// The instant the figures are for.
    public var time: Millis
    public var start: Millis?
    public var totals: WorkoutFigures
    /// `sensor`, `keytel` or `keytelVO2max`; nil when energy is absent.
    public var activeEnergySource: String?
    /// Why `activeEnergy` is absent.
    public var activeEnergyReason: String?
    public var heartRateZones: HeartRateZones?
    /// Why `timeInZones` is absent.
    public var heartRateZonesReason: String?
    public var laps: [LapStatistics]
}

enum StatisticsKey: String, CodingKey {
    case session, state, time, start, end, index, laps
    case activeEnergySource, activeEnergyReason, heartRateZones, heartRateZonesReason
    case elapsedTime, heartRateSamples, heartRateMostRecent, heartRateAverage, heartRateMinimum, heartRateMaximum
    case activeEnergy, distance, speedMostRecent, speedAverage, speedMaximum
    case cadenceMostRecent, cadenceAverage, cadenceMaximum, timeInZones
    case powerMostRecent, powerAverage, powerMaximum
}

extension WorkoutFigures: Codable {
    public init(from decoder: Decoder) throws {
        try self.init(from: decoder.container(keyedBy: StatisticsKey.self))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: StatisticsKey.self)
        try encode(into: &c)
    }

    init(from c: KeyedDecodingContainer<StatisticsKey>) throws {
        elapsedTime = try c.decode(Double.self, forKey: .elapsedTime)
        heartRateSamples = try c.decodeIfPresent(Int.self, forKey: .heartRateSamples) ?? 0
        heartRateMostRecent = try c.decodeIfPresent(Double.self, forKey: .heartRateMostRecent)
        heartRateAverage = try c.decodeIfPresent(Double.self, forKey: .heartRateAverage)
        heartRateMinimum = try c.decodeIfPresent(Double.self, forKey: .heartRateMinimum)
        heartRateMaximum = try c.decodeIfPresent(Double.self, forKey: .heartRateMaximum)
        activeEnergy = try c.decodeIfPresent(Double.self, forKey: .activeEnergy)
        distance = try c.decodeIfPresent(Double.self, forKey: .distance)
        speedMostRecent = try c.decodeIfPresent(Double.self, forKey: .speedMostRecent)
        speedAverage = try c.decodeIfPresent(Double.self, forKey: .speedAverage)
        speedMaximum = try c.decodeIfPresent(Double.self, forKey: .speedMaximum)
        cadenceMostRecent = try c.decodeIfPresent(Double.self, forKey: .cadenceMostRecent)
        cadenceAverage = try c.decodeIfPresent(Double.self, forKey: .cadenceAverage)
        cadenceMaximum = try c.decodeIfPresent(Double.self, forKey: .cadenceMaximum)
        timeInZones = try c.decodeIfPresent([Double].self, forKey: .timeInZones)
        powerMostRecent = try c.decodeIfPresent(Double.self, forKey: .powerMostRecent)
        powerAverage = try c.decodeIfPresent(Double.self, forKey: .powerAverage)
        powerMaximum = try c.decodeIfPresent(Double.self, forKey: .powerMaximum)
    }

    func encode(into c: inout KeyedEncodingContainer<StatisticsKey>) throws {
        try c.encode(elapsedTime, forKey: .elapsedTime)
        try c.encode(heartRateSamples, forKey: .heartRateSamples)
        try c.encodeIfPresent(heartRateMostRecent, forKey: .heartRateMostRecent)
        try c.encodeIfPresent(heartRateAverage, forKey: .heartRateAverage)
        try c.encodeIfPresent(heartRateMinimum, forKey: .heartRateMinimum)
        try c.encodeIfPresent(heartRateMaximum, forKey: .heartRateMaximum)
        try c.encodeIfPresent(activeEnergy, forKey: .activeEnergy)
        try c.encodeIfPresent(distance, forKey: .distance)
        try c.encodeIfPresent(speedMostRecent, forKey: .speedMostRecent)
        try c.encodeIfPresent(speedAverage, forKey: .speedAverage)
        try c.encodeIfPresent(speedMaximum, forKey: .speedMaximum)
        try c.encodeIfPresent(cadenceMostRecent, forKey: .cadenceMostRecent)
        try c.encodeIfPresent(cadenceAverage, forKey: .cadenceAverage)
        try c.encodeIfPresent(cadenceMaximum, forKey: .cadenceMaximum)
        try c.encodeIfPresent(timeInZones, forKey: .timeInZones)
        try c.encodeIfPresent(powerMostRecent, forKey: .powerMostRecent)
        try c.encodeIfPresent(powerAverage, forKey: .powerAverage)
        try c.encodeIfPresent(powerMaximum, forKey: .powerMaximum)
    }
}

extension LapStatistics: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: StatisticsKey.self)
        index = try c.decode(Int.self, forKey: .index)
        start = try c.decodeTime(.start)
        end = try c.decodeTimeIfPresent(.end)
        figures = try WorkoutFigures(from: c)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: StatisticsKey.self)
        try c.encode(index, forKey: .index)
        try c.encode(RFC3339.string(start), forKey: .start)
        if let end { try c.encode(RFC3339.string(end), forKey: .end) }
        try figures.encode(into: &c)
    }
}

extension LiveStatistics: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: StatisticsKey.self)
        session = try c.decode(UUID.self, forKey: .session)
        state = try c.decode(WorkoutSessionState.self, forKey: .state)
        time = try c.decodeTime(.time)
        start = try c.decodeTimeIfPresent(.start)
        totals = try WorkoutFigures(from: c)
        activeEnergySource = try c.decodeIfPresent(String.self, forKey: .activeEnergySource)
        activeEnergyReason = try c.decodeIfPresent(String.self, forKey: .activeEnergyReason)
        heartRateZones = try c.decodeIfPresent(HeartRateZones.self, forKey: .heartRateZones)
        heartRateZonesReason = try c.decodeIfPresent(String.self, forKey: .heartRateZonesReason)
        laps = try c.decodeIfPresent([LapStatistics].self, forKey: .laps) ?? []
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: StatisticsKey.self)
        try c.encode(session, forKey: .session)
        try c.encode(state, forKey: .state)
        try c.encode(RFC3339.string(time), forKey: .time)
        if let start { try c.encode(RFC3339.string(start), forKey: .start) }
        try totals.encode(into: &c)
        try c.encodeIfPresent(activeEnergySource, forKey: .activeEnergySource)
        try c.encodeIfPresent(activeEnergyReason, forKey: .activeEnergyReason)
        try c.encodeIfPresent(heartRateZones, forKey: .heartRateZones)
        try c.encodeIfPresent(heartRateZonesReason, forKey: .heartRateZonesReason)
        try c.encode(laps, forKey: .laps)
    }
}

extension KeyedDecodingContainer {
    func decodeTime(_ key: Key) throws -> Millis {
        let s = try decode(String.self, forKey: key)
        guard let ms = RFC3339.parse(s) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an RFC 3339 time: \(s)")
        }
        return ms
    }

    func decodeTimeIfPresent(_ key: Key) throws -> Millis? {
        contains(key) ? try decodeTime(key) : nil
    }
}
