import FoundationEssentials
import StrapModel

/// A session's live statistics (HealthKit's `HKLiveWorkoutBuilder`), updated by each sample
/// in O(1) without allocating. It follows the session's journal entries (`apply`) and counts
/// a sample by its timestamps alone: a sample in a pause, before the start or after the stop
/// counts for nothing, whenever it arrives. Rules and units: docs/workouts.md.
public struct LiveWorkoutBuilder: Sendable {
    /// The longest stretch one heart-rate sample stands for (energy, time in zone): a sensor
    /// dropout leaves a gap, it is not filled with the last heart rate.
    public static let heartRateGapCap: Millis = 5_000
    /// The share of the metabolic energy a rider turns into work at the pedals: about 20–25 %
    /// in the laboratory literature; 24 % makes kcal ≈ kJ of work, the cyclists' rule of thumb.
    public static let grossEfficiency = 0.24
    static let joulesPerKilocalorie = 4_184.0

    private(set) var timeline = ActiveTimeline()
    private(set) var totals = Accumulator()
    private(set) var laps = LapAccumulators()
    private(set) var keytel: KeytelEnergy?
    private(set) var keytelReason: String?
    public private(set) var zones: HeartRateZones?
    private(set) var zonesReason: String?
    /// The FTP's zones from the profile at the start; the saved workout carries the FTP so its
    /// power figures (made when it is saved, and by every later export) use the one in force then.
    public private(set) var powerZones: PowerZones?
    /// Zone bounds 0…4 in bpm, unused lanes +∞ so that nothing lands beyond zone 5.
    private var zoneBounds = SIMD8<Double>(repeating: .infinity)
    /// Each figure comes from one device: the first to deliver a counted sample of it.
    private var heartRateDevice: Device?
    private var speedDevice: Device?
    private var cadenceDevice: Device?
    private var distanceDevice: Device?
    private var powerDevice: Device?
    /// Active time of the newest counted power sample: where the next one's span begins.
    private var lastPowerActive: Millis = 0
    /// Active time of the newest counted heart-rate sample, 0 at the start: where the next
    /// sample's span begins.
    private var lastHeartRateActive: Millis = 0
    /// The newest instant a counted sample reached; commands are not timed before it.
    public private(set) var newestCountedTime: Millis = .min

    public init() {}

    public var hasStarted: Bool { timeline.hasStarted }

    /// Follows the session: start (profile → energy formula, zones), pauses, laps, stop, end.
    public mutating func apply(_ entry: SessionJournalEntry) {
        switch entry {
        case .created, .prepared, .marker: break
        case let .started(t, _, profile):
            guard !timeline.hasStarted else { return }
            let day = CalendarDate(utcMillis: t)
            do throws(StrapError) { keytel = try KeytelEnergy(profile: profile, on: day) } catch {
                keytelReason = error.description
            }
            do throws(StrapError) {
                let z = try HeartRateZones(profile: profile, on: day)
                zones = z
                for k in 0..<5 { zoneBounds[k] = z.bpm[k] }
            } catch {
                zonesReason = error.description
            }
            powerZones = try? profile?.powerZones()
            timeline.open(at: t)
            laps.start()
            lastHeartRateActive = 0
            lastPowerActive = 0
        case .resumed(let t): timeline.open(at: t)
        case .paused(let t), .stopped(let t), .ended(let t): timeline.close(at: t)
        case .lap(let t, _):
            guard timeline.hasStarted else { return }
            timeline.beginLap(at: t)
            laps.beginLap()
        }
    }

    /// Whether `add` ever counts a sample of this type (the others are not worth keeping).
    public static func counts(_ type: QuantityType) -> Bool {
        switch type {
        case .heartRate, .activeEnergy, .cyclingSpeed, .runningSpeed, .cyclingCadence, .runningCadence,
             .cyclingDistance, .runningDistance, .cyclingPower: return true
        default: return false
        }
    }

    /// Counts `sample` if it falls in the session's activity; returns whether it did.
    @discardableResult
    public mutating func add(_ sample: Sample) -> Bool {
        switch sample.type {
        case .heartRate: return addHeartRate(sample)
        case .activeEnergy: return addSensorEnergy(sample)
        case .cyclingSpeed, .runningSpeed: return addDiscrete(sample, speed: true)
        case .cyclingCadence, .runningCadence: return addDiscrete(sample, speed: false)
        case .cyclingDistance, .runningDistance: return addDistance(sample)
        case .cyclingPower: return addPower(sample)
        default: return false
        }
    }

    /// Whether `device` is (or now becomes) the source of a figure.
    @inline(__always)
    private static func pin(_ source: inout Device?, _ device: Device) -> Bool {
        guard let s = source else { source = device; return true }
        if s === device { return true }
        // A new instance of the same sensor (its Device Information was read since).
        if s.id == device.id { source = device; return true }
        return false
    }

    private mutating func addHeartRate(_ s: Sample) -> Bool {
        guard s.isHeartRateReading else { return false }
        let bpm = s.value
        let t = s.start
        guard timeline.isActive(t), Self.pin(&heartRateDevice, s.device) else { return false }
        let k = timeline.lapIndex(at: t)
        totals.heartRate.add(bpm, at: t)
        laps.update(k) { $0.heartRate.add(bpm, at: t) }
        if t > newestCountedTime { newestCountedTime = t }
        let a1 = timeline.active(at: t)
        // A sample stands for the span since the previous one or the start (a strap's value
        // describes the beats just before it), capped; one older than the previous adds no time.
        guard a1 > lastHeartRateActive else { return true }
        attribute(bpm, from: max(lastHeartRateActive, a1 - Self.heartRateGapCap), to: a1, lap: k)
        lastHeartRateActive = a1
        return true
    }

    /// Books the active span (a0, a1] at `bpm`: time in its zone and Keytel energy, split
    /// over the laps the span crosses.
    @inline(__always)
    private mutating func attribute(_ bpm: Double, from a0: Millis, to a1: Millis, lap k: Int) {
        let zone = Self.zone(bpm, zoneBounds)
        let kcalPerMs = (keytel?.kilocaloriesPerMinute(heartRate: bpm) ?? 0) / 60_000
        let hasZones = zones != nil
        let span = Double(a1 - a0)
        if hasZones { totals.zoneSeconds[zone] += span / 1000 }
        totals.keytelEnergy += kcalPerMs * span
        var hi = a1, j = k
        while hi > a0 && j >= 0 {
            let lo = max(a0, timeline.lapStartActive(j))
            if hi > lo {
                let part = Double(hi - lo)
                laps.update(j) { lap in
                    if hasZones { lap.zoneSeconds[zone] += part / 1000 }
                    lap.keytelEnergy += kcalPerMs * part
                }
            }
            hi = lo
            j -= 1
        }
    }

    /// Energy from a power meter: each sample's watts stand for the active span since the
    /// previous one (capped like a heart rate's: a dropout adds nothing), as work at the pedals
    /// over `grossEfficiency`, split over the laps the span crosses.
    private mutating func addPower(_ s: Sample) -> Bool {
        let t = s.start
        guard s.value.isFinite, timeline.isActive(t), Self.pin(&powerDevice, s.device) else { return false }
        let watts = max(0, s.value)
        let k = timeline.lapIndex(at: t)
        totals.powerSamples += 1
        totals.power.add(watts, at: t)
        laps.update(k) { $0.powerSamples += 1; $0.power.add(watts, at: t) }
        if t > newestCountedTime { newestCountedTime = t }
        let a1 = timeline.active(at: t)
        guard a1 > lastPowerActive else { return true }
        let a0 = max(lastPowerActive, a1 - Self.heartRateGapCap)
        lastPowerActive = a1
        let kcalPerMs = watts / 1000 / Self.joulesPerKilocalorie / Self.grossEfficiency
        totals.powerEnergy += kcalPerMs * Double(a1 - a0)
        var hi = a1, j = k
        while hi > a0 && j >= 0 {
            let lo = max(a0, timeline.lapStartActive(j))
            if hi > lo { laps.update(j) { $0.powerEnergy += kcalPerMs * Double(hi - lo) } }
            hi = lo
            j -= 1
        }
        return true
    }

    @inline(__always)
    private static func zone(_ bpm: Double, _ b: SIMD8<Double>) -> Int {
        var z = 0
        if bpm >= b[0] { z = 1 }
        if bpm >= b[1] { z = 2 }
        if bpm >= b[2] { z = 3 }
        if bpm >= b[3] { z = 4 }
        if bpm >= b[4] { z = 5 }
        return z
    }

    private mutating func addDiscrete(_ s: Sample, speed: Bool) -> Bool {
        let t = s.start
        guard timeline.isActive(t) else { return false }
        let k = timeline.lapIndex(at: t)
        if speed {
            guard Self.pin(&speedDevice, s.device) else { return false }
            totals.speed.add(s.value, at: t)
            laps.update(k) { $0.speed.add(s.value, at: t) }
        } else {
            guard Self.pin(&cadenceDevice, s.device) else { return false }
            totals.cadence.add(s.value, at: t)
            laps.update(k) { $0.cadence.add(s.value, at: t) }
        }
        if t > newestCountedTime { newestCountedTime = t }
        return true
    }

    private mutating func addSensorEnergy(_ s: Sample) -> Bool {
        guard s.metadata["source"] == "sensorEnergyExpended" else { return false }
        guard timeline.hasStarted, Self.pin(&heartRateDevice, s.device) else { return false }
        return addCumulative(s, energy: true)
    }

    private mutating func addDistance(_ s: Sample) -> Bool {
        guard timeline.hasStarted, Self.pin(&distanceDevice, s.device) else { return false }
        return addCumulative(s, energy: false)
    }

    /// An amount accrued over [start, end] counts in proportion to the part of that interval
    /// that was active (a zero-length one counts whole if its instant is active), split over
    /// laps the same way.
    private mutating func addCumulative(_ s: Sample, energy: Bool) -> Bool {
        let v = s.value
        guard v.isFinite, v > 0 else { return false }
        if s.end <= s.start {
            guard timeline.isActive(s.start) else { return false }
            book(v, energy: energy, into: timeline.lapIndex(at: s.start), total: true)
        } else {
            let a0 = timeline.active(at: s.start), a1 = timeline.active(at: s.end)
            guard a1 > a0 else { return false }
            let perMs = v / Double(s.end - s.start)
            book(perMs * Double(a1 - a0), energy: energy, into: -1, total: true)
            var hi = a1, j = timeline.lapIndex(at: s.end)
            while hi > a0 && j >= 0 {
                let lo = max(a0, timeline.lapStartActive(j))
                if hi > lo { book(perMs * Double(hi - lo), energy: energy, into: j, total: false) }
                hi = lo
                j -= 1
            }
        }
        if s.end > newestCountedTime { newestCountedTime = s.end }
        return true
    }

    @inline(__always)
    private mutating func book(_ amount: Double, energy: Bool, into lap: Int, total: Bool) {
        if energy {
            if total { totals.sensorEnergy += amount; totals.sensorEnergySamples += 1 }
            if lap >= 0 { laps.update(lap) { $0.sensorEnergy += amount; $0.sensorEnergySamples += 1 } }
        } else {
            if total { totals.distance += amount; totals.distanceSamples += 1 }
            if lap >= 0 { laps.update(lap) { $0.distance += amount; $0.distanceSamples += 1 } }
        }
    }

    // MARK: reading

    /// Active seconds from the start to `now`.
    public func elapsedTime(at now: Millis) -> Double {
        Double(timeline.active(at: now)) / 1000
    }

    /// The energy figure in use: from power once a power meter has sent any (work is measured,
    /// not inferred from the heart), else the strap's once it has sent any, else the Keytel
    /// estimate.
    var energySource: String? {
        if totals.powerSamples > 0 { return "power" }
        if totals.sensorEnergySamples > 0 { return "sensor" }
        return keytel?.variant.rawValue
    }

    var energyReason: String? {
        guard energySource == nil else { return nil }
        guard timeline.hasStarted else { return Self.notStarted }
        return "no energy expended from the heart-rate sensor, and " + (keytelReason ?? "no Keytel estimate")
    }

    static let notStarted = "the session has not started"

    func figures(_ a: Accumulator, activeMillis: Millis) -> WorkoutFigures {
        var f = WorkoutFigures()
        f.elapsedTime = Double(activeMillis) / 1000
        f.heartRateSamples = a.heartRate.count
        f.heartRateMostRecent = a.heartRate.mostRecent
        f.heartRateAverage = a.heartRate.average
        f.heartRateMinimum = a.heartRate.minimum
        f.heartRateMaximum = a.heartRate.maximum
        switch energySource {
        case "power"?: f.activeEnergy = a.powerEnergy
        case "sensor"?: f.activeEnergy = a.sensorEnergy
        case nil: f.activeEnergy = nil
        default: f.activeEnergy = a.keytelEnergy
        }
        f.distance = a.distanceSamples > 0 ? a.distance : nil
        f.speedMostRecent = a.speed.mostRecent
        f.speedAverage = a.speed.average
        f.speedMaximum = a.speed.maximum
        f.cadenceMostRecent = a.cadence.mostRecent
        f.cadenceAverage = a.cadence.average
        f.cadenceMaximum = a.cadence.maximum
        f.powerMostRecent = a.power.mostRecent
        f.powerAverage = a.power.average
        f.powerMaximum = a.power.maximum
        if zones != nil { f.timeInZones = (0..<6).map { a.zoneSeconds[$0] } }
        return f
    }

    /// Everything known at `now` (clamped to the stop once the session stopped).
    public func statistics(session: UUID, state: WorkoutSessionState, at now: Millis) -> LiveStatistics {
        let total = timeline.active(at: now)
        var lapStats: [LapStatistics] = []
        lapStats.reserveCapacity(laps.count)
        for k in 0..<laps.count {
            let acc = laps[k]
            let startActive = timeline.lapStartActive(k)
            let endActive = timeline.lapEndActive(k) ?? max(startActive, total)
            lapStats.append(LapStatistics(index: k + 1, start: timeline.lapStart(k),
                                          end: timeline.lapEnd(k) ?? timeline.closedAt,
                                          figures: figures(acc, activeMillis: endActive - startActive)))
        }
        return LiveStatistics(session: session, state: state, time: now, start: timeline.start,
                              totals: figures(totals, activeMillis: total),
                              activeEnergySource: energySource, activeEnergyReason: energyReason,
                              heartRateZones: zones, heartRateZonesReason: timeline.hasStarted ? zonesReason : Self.notStarted,
                              laps: lapStats)
    }
}
