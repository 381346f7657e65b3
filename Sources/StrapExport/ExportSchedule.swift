import StrapModel

/// A workout's time structure as the exports see it: the seconds they cover, its laps made
/// tidy, its pauses as intervals, and the moments the encoders mark, in order. Small (a few
/// entries per lap or event), built once per export from the `Workout` alone.
struct ExportSchedule: Sendable {
    /// Something that happens at a moment between seconds.
    enum Boundary: Sendable, Equatable {
        case timerStart, pause, resume, timerStop
        /// A `marker` event: its ordinal among the workout's markers and its metadata.
        case marker(Int, [String: String])
        case lapStart(Int)
        case lapEnd(Int)

        /// At the same moment: timer and marker events first, then a lap's end, then the next
        /// lap's start (so a final timer stop precedes the last lap, as on Garmin devices).
        var order: Int {
            switch self {
            case .timerStart, .pause, .resume, .timerStop, .marker: 0
            case .lapEnd: 1
            case .lapStart: 2
            }
        }
    }

    let start: Millis
    let end: Millis
    /// UTC seconds since 1970 of the first second covered and one past the last.
    let firstSecond: Int64
    let endSecond: Int64
    /// Laps sorted, clipped to the workout and made non-overlapping; never empty.
    let laps: [Range<Millis>]
    /// Intervals with the timer stopped (pause → resume, or pause → end).
    let pauses: [Range<Millis>]
    let boundaries: [(time: Millis, boundary: Boundary)]
    /// Whether the workout ends paused (then no separate timer stop is marked at the end).
    let endsPaused: Bool
    /// The workout engine's own figures (the saved summary and each lap's), when the workout
    /// came from a session: the exports write its heart rate and time in zones rather than
    /// compute them a second way. Nil for a workout the engine did not make (then the
    /// per-second values give them), and the laps' nil when tidying changed the laps.
    let engineSession: [String: Double]?
    let engineLaps: [[String: Double]]?
    /// The zones of the FTP the workout was recorded with (its summary's
    /// `functionalThresholdPower`, from the profile at the session's start); nil without one.
    let powerZones: PowerZones?

    /// Forty days: well inside FIT's 32-bit millisecond durations (49.7 days).
    static let longestWorkout: Millis = 40 * 86_400_000
    /// 1989-12-31T00:00:00Z, FIT's epoch, in Unix milliseconds.
    static let fitEpochMillis: Millis = 631_065_600_000

    init(_ workout: Workout) throws(ExportError) {
        start = workout.start
        end = workout.end
        guard end > start else {
            throw .invalidWorkout("end \(RFC3339.string(end)) is not after start \(RFC3339.string(start))")
        }
        guard end - start <= Self.longestWorkout else {
            throw .invalidWorkout("longer than 40 days (\((end - start) / 1000) s)")
        }
        guard start >= Self.fitEpochMillis, end < Self.fitEpochMillis + Millis(UInt32.max - 1) * 1000 else {
            throw .invalidWorkout("times outside FIT's range (1989-12-31 to 2126)")
        }
        firstSecond = start.floorDiv(1000)
        endSecond = (end + 999).floorDiv(1000)

        var tidy: [Range<Millis>] = []
        for lap in workout.laps.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            let lower = max(lap.start, start, tidy.last?.upperBound ?? start)
            let upper = min(lap.end, end)
            if lower < upper { tidy.append(lower..<upper) }
        }
        laps = tidy.isEmpty ? [start..<end] : tidy
        engineSession = workout.sessionID == nil ? nil : workout.summary
        powerZones = workout.summary["functionalThresholdPower"].flatMap { try? PowerZones(functionalThresholdPower: $0) }
        // Compared bound by bound: a stored lap may be reversed (end before start), which a
        // Range cannot hold.
        let lapsAreTheEngines = workout.laps.count == laps.count
            && zip(workout.laps, laps).allSatisfy { $0.start == $1.lowerBound && $0.end == $1.upperBound }
        engineLaps = workout.sessionID != nil && lapsAreTheEngines ? workout.laps.map(\.summary) : nil

        let timer = Self.timer(workout)
        pauses = timer.pauses
        endsPaused = timer.endsPaused
        var marks = timer.marks
        marks.insert((start, .timerStart), at: 0)
        if !endsPaused { marks.append((end, .timerStop)) }
        for (i, lap) in laps.enumerated() {
            marks.append((lap.lowerBound, .lapStart(i)))
            marks.append((lap.upperBound, .lapEnd(i)))
        }
        // Stable by (time, order): the insertion order breaks remaining ties.
        boundaries = marks.enumerated().sorted {
            ($0.element.time, $0.element.boundary.order, $0.offset) < ($1.element.time, $1.element.boundary.order, $1.offset)
        }.map(\.element)
    }

    /// The workout's pauses (pause → resume, or pause → end) and its timer and marker
    /// events inside [start, end]. A second pause while paused or a resume while running
    /// changes nothing; laps come from `laps`, not from `lap` events.
    static func timer(_ workout: Workout) -> (pauses: [Range<Millis>], endsPaused: Bool,
                                               marks: [(time: Millis, boundary: Boundary)]) {
        var marks: [(time: Millis, boundary: Boundary)] = []
        var paused: [Range<Millis>] = []
        var pausedSince: Millis?
        var markerCount = 0
        let events = workout.events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
        for (_, event) in events where event.time >= workout.start && event.time <= workout.end {
            switch event.kind {
            case "pause" where pausedSince == nil && event.time < workout.end:
                pausedSince = event.time
                marks.append((event.time, .pause))
            case "resume" where pausedSince != nil:
                if let since = pausedSince, since < event.time { paused.append(since..<event.time) }
                pausedSince = nil
                marks.append((event.time, .resume))
            case "marker":
                marks.append((event.time, .marker(markerCount, event.metadata)))
                markerCount += 1
            default:
                break
            }
        }
        if let since = pausedSince { paused.append(since..<workout.end) }
        return (paused, pausedSince != nil, marks)
    }

    /// The moment that decides a second's pause and lap: its start, or the workout's start
    /// for the first second when the workout starts inside it.
    func instant(of second: Int64) -> Millis { max(second * 1000, start) }

    func isPaused(at t: Millis) -> Bool { Self.index(in: pauses, containing: t) != nil }

    func lap(at t: Millis) -> Int? { Self.index(in: laps, containing: t) }

    /// Milliseconds of `range` with the timer running.
    func timerMillis(in range: Range<Millis>) -> Millis {
        var paused: Millis = 0
        for p in pauses {
            let lower = max(p.lowerBound, range.lowerBound), upper = min(p.upperBound, range.upperBound)
            if lower < upper { paused += upper - lower }
        }
        return range.upperBound - range.lowerBound - paused
    }

    /// Binary search over sorted, non-overlapping ranges.
    static func index(in ranges: [Range<Millis>], containing t: Millis) -> Int? {
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound <= t { low = mid + 1 } else { high = mid }
        }
        return low < ranges.count && ranges[low].contains(t) ? low : nil
    }
}
