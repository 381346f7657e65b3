import StrapModel

/// Level measurements: one value at a moment.
enum Channel: Int, CaseIterable {
    case heartRate, cyclingSpeed, cyclingCadence, runningSpeed, runningCadence, strideLength
    /// Watts.
    case cyclingPower
    /// The left pedal's share of the power in %, and a share whose pedal the meter does not
    /// know: FIT writes the first as the right's share, flagged, and the second unflagged.
    case powerBalanceLeft, powerBalanceUnknown
}

/// Amounts measured over an interval.
enum Amount: Int, CaseIterable {
    case cyclingDistance, runningDistance, activeEnergy
}

/// One second of the export timeline: what every format writes for that second.
struct ExportSecond: Sendable {
    /// UTC seconds since 1970.
    var second: Int64 = 0
    /// The moment that decided `paused` and `lap` (`ExportSchedule.instant(of:)`).
    var instant: Millis = 0
    var paused = false
    var lap: Int?
    /// Per `Channel`: the mean of the samples starting in this second, else the last value for
    /// up to `holdSeconds`, else NaN ("no value").
    var values = [Double](repeating: .nan, count: Channel.allCases.count)
    /// Per `Amount`: how much of the increments fell into this second (spread evenly over
    /// each increment's interval).
    var amounts = [Double](repeating: 0, count: Amount.allCases.count)
    /// Per `Amount`: whether any increment overlapped this second.
    var touched = [Bool](repeating: false, count: Amount.allCases.count)
    /// Per `Amount`: the running total over the seconds with the timer running, this one included.
    var totals = [Double](repeating: 0, count: Amount.allCases.count)
    /// Per `Amount`: whether an increment has been seen in this or an earlier second.
    var started = [Bool](repeating: false, count: Amount.allCases.count)
    /// The RR intervals whose ending beat falls into this second.
    var beats: [RRInterval] = []
    /// Joules: the running sum of the per-second power over the seconds with the timer
    /// running, this one included, a second without power counting 0 (FIT accumulated_power).
    var accumulatedPower = 0.0

    func value(_ c: Channel) -> Double? {
        let v = values[c.rawValue]
        return v.isNaN ? nil : v
    }

    func speed(_ family: ActivityMapping.Family) -> Double? {
        switch family {
        case .cycling: value(.cyclingSpeed)
        case .foot: value(.runningSpeed)
        case .any: value(.cyclingSpeed) ?? value(.runningSpeed)
        }
    }

    /// rpm for cycling, strides per minute on foot.
    func cadence(_ family: ActivityMapping.Family) -> Double? {
        switch family {
        case .cycling: value(.cyclingCadence)
        case .foot: value(.runningCadence)
        case .any: value(.cyclingCadence) ?? value(.runningCadence)
        }
    }

    func distanceAmount(_ family: ActivityMapping.Family) -> Double {
        switch family {
        case .cycling: amounts[Amount.cyclingDistance.rawValue]
        case .foot: amounts[Amount.runningDistance.rawValue]
        case .any: amounts[Amount.cyclingDistance.rawValue] + amounts[Amount.runningDistance.rawValue]
        }
    }

    /// The cumulative distance once any distance increment has been seen, else nil.
    func distanceTotal(_ family: ActivityMapping.Family) -> Double? {
        let c = Amount.cyclingDistance.rawValue, r = Amount.runningDistance.rawValue
        switch family {
        case .cycling: return started[c] ? totals[c] : nil
        case .foot: return started[r] ? totals[r] : nil
        case .any: return started[c] || started[r] ? totals[c] + totals[r] : nil
        }
    }

    func distanceTouched(_ family: ActivityMapping.Family) -> Bool {
        let c = Amount.cyclingDistance.rawValue, r = Amount.runningDistance.rawValue
        switch family {
        case .cycling: return touched[c]
        case .foot: return touched[r]
        case .any: return touched[c] || touched[r]
        }
    }

    /// Whether FIT writes a record and TCX a trackpoint for this second: the timer runs and
    /// there is a heart rate, speed, cadence or power value, or distance moved.
    func hasContent(_ family: ActivityMapping.Family) -> Bool {
        !paused && (value(.heartRate) != nil || speed(family) != nil || cadence(family) != nil || distanceTouched(family)
                    || value(.cyclingPower) != nil)
    }
}

/// A sensor whose samples the export used, in the order first seen.
struct ExportDevice: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case heartRate, speedCadence, footPod, powerMeter, other }
    var device: Device
    var kind: Kind
}

/// The per-second resampling shared by FIT, TCX and CSV (docs/export.md "Resampling").
///
/// Pull-based: `advance()` reads samples (ascending `start`) only up to the end of the
/// second it produces, so it holds a second's worth of state, the increments still being
/// spread and the beats not yet reached; never the workout.
struct ExportTimeline {
    let schedule: ExportSchedule
    let holdSeconds: Int64
    let deviceFilter: Set<String>?

    private var samples: AnyIterator<Sample>
    private var peeked: Sample?
    private var lastStart: Millis = .min
    private var nextSecond: Int64
    private(set) var current = ExportSecond()
    private(set) var devices: [ExportDevice] = []

    private var sums = [Double](repeating: 0, count: Channel.allCases.count)
    private var counts = [Int](repeating: 0, count: Channel.allCases.count)
    private var lastValue = [Double](repeating: .nan, count: Channel.allCases.count)
    private var lastSeen = [Int64](repeating: .min, count: Channel.allCases.count)
    private var spreads: [(start: Millis, end: Millis, amount: Double, kind: Int)] = []
    private var rrReader = RRReader()
    private var futureBeats: [RRInterval] = []
    private var lastDevice: Device?
    private var filteredDevice: (device: Device, allowed: Bool)?

    init(schedule: ExportSchedule, workout: Workout, samples: AnyIterator<Sample>, holdSeconds: Int) {
        self.schedule = schedule
        self.holdSeconds = Int64(holdSeconds)
        deviceFilter = workout.deviceIDs.isEmpty ? nil : Set(workout.deviceIDs)
        self.samples = samples
        nextSecond = schedule.firstSecond
    }

    /// Increments being spread and beats not yet reached: what the timeline holds beyond a second.
    var pendingCount: Int { spreads.count + futureBeats.count + (peeked == nil ? 0 : 1) }

    /// Moves `current` to the next second; false once the workout's seconds are done.
    mutating func advance() throws(ExportError) -> Bool {
        guard nextSecond < schedule.endSecond else { return false }
        let second = nextSecond
        nextSecond += 1
        let secondStart = second * 1000, secondEnd = secondStart + 1000

        for c in 0..<sums.count { sums[c] = 0; counts[c] = 0 }
        for a in 0..<current.amounts.count { current.amounts[a] = 0; current.touched[a] = false }
        current.beats.removeAll(keepingCapacity: true)
        current.second = second
        current.instant = schedule.instant(of: second)
        current.paused = schedule.isPaused(at: current.instant)
        current.lap = schedule.lap(at: current.instant)

        while true {
            if peeked == nil { peeked = samples.next() }
            guard let sample = peeked, sample.start < secondEnd else { break }
            peeked = nil
            guard sample.start >= lastStart else {
                throw .samplesOutOfOrder(previousStart: lastStart, start: sample.start)
            }
            lastStart = sample.start
            consume(sample, secondStart: secondStart)
        }

        for i in spreads.indices.reversed() {
            let s = spreads[i]
            // Only the part inside the workout's [start, end) counts.
            let overlap = min(s.end, secondEnd, schedule.end) - max(s.start, secondStart, schedule.start)
            if overlap > 0 {
                current.amounts[s.kind] += s.amount * Double(overlap) / Double(s.end - s.start)
                current.touched[s.kind] = true
            }
            if s.end <= secondEnd { spreads.remove(at: i) }
        }

        var taken = 0
        for beat in futureBeats {
            guard beat.time < secondEnd else { break }
            // A beat belongs to the workout when it falls in [start, end), as every sample.
            if beat.time >= secondStart && beat.time >= schedule.start && beat.time < schedule.end { current.beats.append(beat) }
            taken += 1
        }
        if taken > 0 { futureBeats.removeFirst(taken) }

        for c in 0..<sums.count {
            if counts[c] > 0 {
                let v = sums[c] / Double(counts[c])
                current.values[c] = v
                lastValue[c] = v
                lastSeen[c] = second
            } else if lastSeen[c] != .min && second - lastSeen[c] <= holdSeconds {
                current.values[c] = lastValue[c]
            } else {
                current.values[c] = .nan
            }
        }
        if !current.paused { current.accumulatedPower += current.value(.cyclingPower) ?? 0 }
        for a in 0..<current.amounts.count {
            if current.touched[a] { current.started[a] = true }
            if !current.paused { current.totals[a] += current.amounts[a] }
        }
        return true
    }

    private mutating func consume(_ sample: Sample, secondStart: Millis) {
        if let deviceFilter {
            // One shared Device instance per sensor: decide once per instance, not per sample.
            if sample.device !== filteredDevice?.device {
                filteredDevice = (sample.device, deviceFilter.contains(sample.device.id))
            }
            guard filteredDevice?.allowed == true else { return }
        }
        // [start, end): a level counts when it starts inside the workout (and not before the
        // second being produced); nothing from before the start is carried in.
        let inSecond = sample.start >= secondStart && sample.start >= schedule.start && sample.start < schedule.end
        switch sample.type {
        case .heartRate:
            guard sample.isHeartRateReading else { return }
            level(.heartRate, sample.value, inSecond, sample.device, .heartRate)
        case .cyclingSpeed: level(.cyclingSpeed, sample.value, inSecond, sample.device, .speedCadence)
        case .cyclingCadence: level(.cyclingCadence, sample.value, inSecond, sample.device, .speedCadence)
        case .runningSpeed: level(.runningSpeed, sample.value, inSecond, sample.device, .footPod)
        case .runningCadence:
            let steps = sample.hasExtras && sample.metadata["cadenceUnit"] == "steps"
            level(.runningCadence, steps ? sample.value / 2 : sample.value, inSecond, sample.device, .footPod)
        case .strideLength: level(.strideLength, sample.value, inSecond, sample.device, .footPod)
        case .cyclingDistance: increment(.cyclingDistance, sample, secondStart, .speedCadence)
        case .runningDistance: increment(.runningDistance, sample, secondStart, .footPod)
        case .activeEnergy: increment(.activeEnergy, sample, secondStart, .other)
        case .heartbeatSeries:
            let before = futureBeats.count
            rrReader.read(sample, into: &futureBeats)
            guard futureBeats.count > before else { return }
            saw(sample.device, .heartRate)
            // Two devices' series could interleave only if the reader took both; it takes one,
            // whose series follow each other, so the new beats are after the old ones. A
            // series that overlaps its predecessor still has to be merged in time order.
            if before > 0 && futureBeats[before].time < futureBeats[before - 1].time {
                futureBeats.sort { $0.time < $1.time }
            }
        case .energyExpended, .batteryLevel, .sensorContact:
            break   // energy comes as activeEnergy (kcal); battery and contact are device state
        case .cyclingPower: level(.cyclingPower, sample.value, inSecond, sample.device, .powerMeter)
        case .cyclingPowerBalance:
            // The reference pedal is the left one unless the meter said it does not know (docs/product.md).
            let unknown = sample.hasExtras && sample.metadata["reference"] == "unknown"
            guard sample.value <= 100 else { return }
            level(unknown ? .powerBalanceUnknown : .powerBalanceLeft, sample.value, inSecond, sample.device, .powerMeter)
        }
    }

    private mutating func level(_ c: Channel, _ v: Double, _ inSecond: Bool, _ device: Device, _ kind: ExportDevice.Kind) {
        guard v.isFinite, v >= 0 else { return }
        saw(device, kind)
        guard inSecond else { return }      // outside the workout's [start, end)
        sums[c.rawValue] += v
        counts[c.rawValue] += 1
    }

    private mutating func increment(_ a: Amount, _ sample: Sample, _ secondStart: Millis, _ kind: ExportDevice.Kind) {
        guard sample.value.isFinite, sample.value > 0 else { return }
        saw(sample.device, kind)
        if sample.end > sample.start {
            spreads.append((sample.start, sample.end, sample.value, a.rawValue))
        } else if sample.start >= secondStart && sample.start >= schedule.start && sample.start < schedule.end {
            current.amounts[a.rawValue] += sample.value
            current.touched[a.rawValue] = true
        }
    }

    private mutating func saw(_ device: Device, _ kind: ExportDevice.Kind) {
        if device === lastDevice && kind != .other { return }   // the common case, without a search
        lastDevice = device
        if let i = devices.firstIndex(where: { $0.device.id == device.id }) {
            if devices[i].kind == .other && kind != .other { devices[i].kind = kind }
            return
        }
        devices.append(ExportDevice(device: device, kind: kind))
    }
}
