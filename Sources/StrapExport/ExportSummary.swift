import StrapModel

/// Totals of a lap or the whole session, as the export writes them (FIT lap/session, TCX
/// Lap). Computed from the per-second timeline over the seconds with the timer running:
/// averages are means of the per-second values, maxima their maxima, distance and energy the
/// sums of the per-second amounts; times come from the workout's own millisecond times.
public struct SegmentSummary: Sendable, Equatable, Codable {
    public var start: Millis
    public var end: Millis
    /// `end - start`, and that minus the paused time, in milliseconds.
    public var elapsedMillis: Millis
    public var timerMillis: Millis
    /// Metres; nil when no distance was measured (by the end of the segment).
    public var distance: Double?
    /// Active energy in kcal; nil when none was measured.
    public var calories: Double?
    public var averageHeartRate: Double?
    public var maximumHeartRate: Double?
    public var minimumHeartRate: Double?
    public var averageSpeed: Double?
    public var maximumSpeed: Double?
    /// rpm (cycling) or strides per minute (on foot).
    public var averageCadence: Double?
    public var maximumCadence: Double?
    /// Seconds written as FIT records / TCX trackpoints.
    public var points: Int
    /// Seconds below heart-rate zone 1 and in zones 1…5: the engine's (docs/workouts.md), nil
    /// when the workout has none (no zones known, or not made by the engine).
    public var timeInZones: [Double]?
    /// The power figures of the seconds with the timer running (`PowerAnalysis`), nil when no
    /// power was read in this lap (or, for the session, in the workout).
    public var power: PowerSummary?

    public init(start: Millis, end: Millis, elapsedMillis: Millis, timerMillis: Millis, distance: Double? = nil,
                calories: Double? = nil, averageHeartRate: Double? = nil, maximumHeartRate: Double? = nil,
                minimumHeartRate: Double? = nil, averageSpeed: Double? = nil, maximumSpeed: Double? = nil,
                averageCadence: Double? = nil, maximumCadence: Double? = nil, points: Int = 0) {
        self.start = start; self.end = end; self.elapsedMillis = elapsedMillis; self.timerMillis = timerMillis
        self.distance = distance; self.calories = calories
        self.averageHeartRate = averageHeartRate; self.maximumHeartRate = maximumHeartRate
        self.minimumHeartRate = minimumHeartRate; self.averageSpeed = averageSpeed; self.maximumSpeed = maximumSpeed
        self.averageCadence = averageCadence; self.maximumCadence = maximumCadence; self.points = points
    }
}

/// A segment's power figures (docs/workouts.md "Power figures"): W, kJ, seconds. The FTP's
/// figures are nil when the workout carries no FTP (none in the profile when it started).
public struct PowerSummary: Sendable, Equatable, Codable {
    public var average: Double
    public var maximum: Double
    public var normalized: Double
    /// Kilojoules.
    public var work: Double
    /// Best average power by duration in seconds, for the durations the segment is long enough for.
    public var meanMaximal: [Int: Double]
    public var functionalThresholdPower: Double?
    public var intensityFactor: Double?
    public var trainingStressScore: Double?
    /// Seconds in Coggan's zones 1…7.
    public var timeInZones: [Double]?

    /// Nil for a segment without a second of active time.
    public init?(_ analysis: PowerAnalysis, zones: PowerZones?) {
        guard let average = analysis.averagePower, let maximum = analysis.maximumPower,
              let normalized = analysis.normalizedPower else { return nil }
        self.average = average
        self.maximum = maximum
        self.normalized = normalized
        work = analysis.work
        meanMaximal = analysis.meanMaximalPower()
        if let zones {
            functionalThresholdPower = zones.functionalThresholdPower
            intensityFactor = analysis.intensityFactor(zones)
            trainingStressScore = analysis.trainingStressScore(zones)
            timeInZones = analysis.timeInZones(zones)
        }
    }

    /// The saved workout's summary keys (docs/workouts.md "The saved workout"), the one
    /// spelling the daemon, strapctl and the exports' tests share.
    public var summaryFigures: [String: Double] {
        var f: [String: Double] = ["powerAverage": average, "powerMaximum": maximum, "powerNormalized": normalized,
                                   "powerWork": work]
        for (d, w) in meanMaximal { f["powerBest\(d)s"] = w }
        f["powerIntensityFactor"] = intensityFactor
        f["powerTrainingStressScore"] = trainingStressScore
        for (i, t) in (timeInZones ?? []).enumerated() { f["timeInPowerZone\(i + 1)"] = t }
        return f
    }
}

/// What an export contains, known before its first chunk: the laps and the session.
public struct ExportSummary: Sendable, Equatable, Codable {
    public var laps: [SegmentSummary]
    public var session: SegmentSummary
    /// RR intervals in the export (FIT writes those with the timer running).
    public var beats: Int
    /// Device ids whose samples were used, in the order first seen.
    public var deviceIDs: [String]
}

/// Running sums for one segment.
struct SegmentAccumulator {
    var heartRate = Level()
    var speed = Level()
    var cadence = Level()
    var distance = 0.0
    var energy = 0.0
    var distanceSeen = false
    var energySeen = false
    var points = 0
    /// Watts of every second with the timer running, from the segment's first power reading
    /// on, with the seconds before it as zeros: a workout without power keeps nothing.
    var watts: [Double] = []
    var secondsBeforePower = 0

    struct Level {
        var sum = 0.0, count = 0, maximum = -Double.infinity, minimum = Double.infinity
        mutating func add(_ v: Double?) {
            guard let v else { return }
            sum += v; count += 1
            maximum = Swift.max(maximum, v); minimum = Swift.min(minimum, v)
        }
        var average: Double? { count > 0 ? sum / Double(count) : nil }
        var max: Double? { count > 0 ? maximum : nil }
        var min: Double? { count > 0 ? minimum : nil }
    }

    mutating func add(_ s: ExportSecond, _ family: ActivityMapping.Family) {
        guard !s.paused else { return }
        heartRate.add(s.value(.heartRate))
        speed.add(s.speed(family))
        cadence.add(s.cadence(family))
        distance += s.distanceAmount(family)
        energy += s.amounts[Amount.activeEnergy.rawValue]
        distanceSeen = distanceSeen || s.distanceTotal(family) != nil
        energySeen = energySeen || s.started[Amount.activeEnergy.rawValue]
        if s.hasContent(family) { points += 1 }
        let power = s.value(.cyclingPower)
        if watts.isEmpty && power == nil {
            secondsBeforePower += 1
        } else {
            if watts.isEmpty { watts = [Double](repeating: 0, count: secondsBeforePower) }
            watts.append(power ?? 0)
        }
    }

    /// `engine`: the engine's figures for this segment, whose heart rate and time in zones
    /// replace the per-second ones, so the file says what the summary and `workout show` say.
    func summary(_ range: Range<Millis>, _ schedule: ExportSchedule, engine: [String: Double]?,
                 powerZones: PowerZones?) -> SegmentSummary {
        var s = SegmentSummary(start: range.lowerBound, end: range.upperBound,
                               elapsedMillis: range.upperBound - range.lowerBound,
                               timerMillis: schedule.timerMillis(in: range),
                               distance: distanceSeen ? distance : nil, calories: energySeen ? energy : nil,
                               averageHeartRate: heartRate.average, maximumHeartRate: heartRate.max,
                               minimumHeartRate: heartRate.min, averageSpeed: speed.average, maximumSpeed: speed.max,
                               averageCadence: cadence.average, maximumCadence: cadence.max, points: points)
        if let engine {
            s.averageHeartRate = engine["heartRateAverage"]
            s.maximumHeartRate = engine["heartRateMaximum"]
            s.minimumHeartRate = engine["heartRateMinimum"]
            let zones = (["timeBelowZone1"] + (1...5).map { "timeInZone\($0)" }).compactMap { engine[$0] }
            s.timeInZones = zones.count == HeartRateZones.count ? zones : nil
        }
        if !watts.isEmpty { s.power = PowerSummary(PowerAnalysis(watts: watts), zones: powerZones) }
        return s
    }
}

/// The live totals of a pass: every lap's and the session's, updated second by second.
struct ExportStats {
    var laps: [SegmentAccumulator]
    var session = SegmentAccumulator()
    var beats = 0

    init(lapCount: Int) { laps = Array(repeating: SegmentAccumulator(), count: lapCount) }

    mutating func add(_ s: ExportSecond, _ family: ActivityMapping.Family) {
        session.add(s, family)
        if let lap = s.lap { laps[lap].add(s, family) }
        if !s.paused { beats += s.beats.count }
    }

    func lapSummary(_ i: Int, _ schedule: ExportSchedule) -> SegmentSummary {
        laps[i].summary(schedule.laps[i], schedule, engine: schedule.engineLaps?[i], powerZones: schedule.powerZones)
    }

    func sessionSummary(_ schedule: ExportSchedule) -> SegmentSummary {
        session.summary(schedule.start..<schedule.end, schedule, engine: schedule.engineSession, powerZones: schedule.powerZones)
    }

    func summary(_ schedule: ExportSchedule, devices: [ExportDevice]) -> ExportSummary {
        ExportSummary(laps: schedule.laps.indices.map { lapSummary($0, schedule) },
                      session: sessionSummary(schedule),
                      beats: beats, deviceIDs: devices.map(\.device.id))
    }
}
