import StrapModel

/// The artifact filter's settings (docs/export.md "HRV").
public struct HRVOptions: Sendable, Equatable, Codable {
    /// Physiological range, inclusive, in ms (300 ms = 200 bpm, 2000 ms = 30 bpm).
    public var minimumRR: Double
    public var maximumRR: Double
    /// Malik's rule: an interval differing from the last accepted one by more than this
    /// fraction of it is ectopic.
    public var ectopicFraction: Double
    /// After this many ectopic intervals in a row the reference is re-seeded with the latest
    /// one, so that a wrong reference (an artifact at the start of a run) cannot reject
    /// everything after it.
    public var reseedAfter: Int

    public init(minimumRR: Double = 300, maximumRR: Double = 2000, ectopicFraction: Double = 0.2, reseedAfter: Int = 5) {
        self.minimumRR = minimumRR
        self.maximumRR = maximumRR
        self.ectopicFraction = ectopicFraction
        self.reseedAfter = reseedAfter
    }
}

/// What became of one RR interval.
public enum HRVClassification: String, Sendable, Codable {
    /// Accepted: an NN interval.
    case normal
    /// Outside [minimumRR, maximumRR].
    case outOfRange
    /// Failed Malik's rule against the last accepted interval.
    case ectopic
    /// Inside a pause of the workout: not analysed at all.
    case paused
}

/// Time-domain HRV figures and how the beats were filtered.
///
/// Definitions (chosen to equal `hrvanalysis.get_time_domain_features` of hrv-analysis 1.0.6
/// on the analysed series, where every rejected interval and every run break is a NaN):
/// mean NN and SDNN over the accepted intervals, SDNN with ddof = 1 (n − 1); RMSSD and NN50
/// over successive differences of accepted intervals that were adjacent in the recording
/// (never across a rejected interval, a gap, a pause); pNN50 = 100 × NN50 / (slots − 1),
/// where slots = analysed intervals (accepted or rejected) + one per run break.
public struct HRVReport: Sendable, Equatable, Codable {
    /// The device whose beats were analysed.
    public var deviceID: String?
    public var method: String
    /// RR intervals whose ending beat lies in the analysed range (paused ones included).
    public var intervals: Int
    /// Accepted (NN) intervals.
    public var normal: Int
    public var excludedOutOfRange: Int
    public var excludedEctopic: Int
    public var excludedPaused: Int
    /// Runs of intervals not separated by a gap, a reconnect or a pause.
    public var runs: Int
    public var successiveDifferences: Int
    public var nn50: Int
    /// The series length hrv-analysis divides by (plus one): see above.
    public var slots: Int
    public var meanNN: Double?
    public var sdnn: Double?
    public var rmssd: Double?
    public var pnn50: Double?
    /// Mean of 60000 / NN (bpm), as hrv-analysis's `mean_hr`.
    public var meanHeartRate: Double?
}

/// Streaming HRV analysis: feed RR intervals in time order, read `report`. Constant memory,
/// so a 24 h recording costs what a 5 minute one does.
public struct HRVAnalysis: Sendable {
    public let options: HRVOptions
    public private(set) var deviceID: String?

    private var intervals = 0, normal = 0, outOfRange = 0, ectopic = 0, paused = 0
    private var runs = 0, slots = 0, differences = 0, nn50 = 0
    private var reference: Double?
    private var rejectedInARow = 0
    private var previousNormal: Double?
    private var breakPending = true
    // Welford's running mean and sum of squares for SDNN; sums for RMSSD and mean HR.
    private var mean = 0.0, m2 = 0.0, squaredDifferences = 0.0, heartRateSum = 0.0

    public init(options: HRVOptions = HRVOptions()) { self.options = options }

    /// Classifies `rr` (its `breakBefore` starts a new run) and updates the figures.
    @discardableResult
    public mutating func add(_ rr: RRInterval, paused isPaused: Bool = false) -> HRVClassification {
        intervals += 1
        if isPaused {
            paused += 1
            breakPending = true
            return .paused
        }
        if rr.breakBefore || breakPending {
            if slots > 0 { slots += 1 }     // the NaN between two runs
            runs += 1
            reference = nil
            previousNormal = nil
            rejectedInARow = 0
            breakPending = false
        }
        slots += 1
        let ms = rr.milliseconds
        guard ms >= options.minimumRR, ms <= options.maximumRR, ms.isFinite else {
            outOfRange += 1
            previousNormal = nil
            return .outOfRange
        }
        if let ref = reference, abs(ms - ref) > options.ectopicFraction * ref {
            ectopic += 1
            previousNormal = nil
            rejectedInARow += 1
            if rejectedInARow >= options.reseedAfter {
                reference = ms
                rejectedInARow = 0
            }
            return .ectopic
        }
        reference = ms
        rejectedInARow = 0
        normal += 1
        let delta = ms - mean
        mean += delta / Double(normal)
        m2 += delta * (ms - mean)
        heartRateSum += 60_000 / ms
        if let previous = previousNormal {
            let d = ms - previous
            squaredDifferences += d * d
            differences += 1
            if abs(d) > 50 { nn50 += 1 }
        }
        previousNormal = ms
        return .normal
    }

    public var report: HRVReport {
        HRVReport(deviceID: deviceID, method: Self.method(options), intervals: intervals, normal: normal,
                  excludedOutOfRange: outOfRange, excludedEctopic: ectopic, excludedPaused: paused, runs: runs,
                  successiveDifferences: differences, nn50: nn50, slots: slots,
                  meanNN: normal > 0 ? mean : nil,
                  sdnn: normal > 1 ? (m2 / Double(normal - 1)).squareRoot() : nil,
                  rmssd: differences > 0 ? (squaredDifferences / Double(differences)).squareRoot() : nil,
                  pnn50: slots > 1 ? 100 * Double(nn50) / Double(slots - 1) : nil,
                  meanHeartRate: normal > 0 ? heartRateSum / Double(normal) : nil)
    }

    static func method(_ o: HRVOptions) -> String {
        "range \(Int(o.minimumRR))-\(Int(o.maximumRR)) ms, then Malik \(Int((o.ectopicFraction * 100).rounded()))% "
            + "against the last accepted interval (re-seeded after \(o.reseedAfter) rejections); "
            + "no pairs across rejected intervals, gaps or pauses; SDNN ddof=1"
    }

    // MARK: from samples

    /// HRV of the beats of `heartbeatSeries` samples (ascending start) whose ending beat lies in
    /// `range`, those inside `pauses` excluded. One device: `deviceID`, else the first that
    /// delivers a series.
    public static func analyze<S: Sequence>(samples: S, range: Range<Millis>, pauses: [Range<Millis>] = [],
                                            deviceID: String? = nil,
                                            options: HRVOptions = HRVOptions()) -> HRVReport where S.Element == Sample {
        var analysis = HRVAnalysis(options: options)
        var reader = RRReader(deviceID: deviceID)
        var buffer: [RRInterval] = []
        for sample in samples where sample.type == .heartbeatSeries && sample.end >= range.lowerBound - 60_000 {
            guard sample.start < range.upperBound else { break }
            buffer.removeAll(keepingCapacity: true)
            reader.read(sample, into: &buffer)
            for rr in buffer where range.contains(rr.time) {
                analysis.add(rr, paused: ExportSchedule.index(in: pauses, containing: rr.time) != nil)
            }
        }
        analysis.deviceID = reader.deviceID
        return analysis.report
    }

    /// HRV over a workout: its time range, its pauses excluded.
    public static func analyze<S: Sequence>(workout: Workout, samples: S, deviceID: String? = nil,
                                            options: HRVOptions = HRVOptions()) -> HRVReport where S.Element == Sample {
        let pauses = workout.end > workout.start ? ExportSchedule.timer(workout).pauses : []
        let range = workout.start..<max(workout.start, workout.end)
        let filter = workout.deviceIDs.isEmpty ? nil : Set(workout.deviceIDs)
        return analyze(samples: samples.lazy.filter { filter?.contains($0.device.id) ?? true }, range: range,
                       pauses: pauses, deviceID: deviceID, options: options)
    }

    /// The RR intervals of heartbeat series samples (ascending start), breaks marked.
    public static func intervals<S: Sequence>(of samples: S, deviceID: String? = nil) -> [RRInterval] where S.Element == Sample {
        var reader = RRReader(deviceID: deviceID)
        var out: [RRInterval] = []
        for sample in samples { reader.read(sample, into: &out) }
        return out
    }
}
