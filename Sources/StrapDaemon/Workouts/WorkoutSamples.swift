import FoundationEssentials
import StrapExport
import StrapModel
import StrapStore

/// Reading a workout's samples from the store a time window at a time (exports and HRV of long
/// workouts stay in bounded memory), and the HRV figures the saved workout carries.
enum WorkoutSamples {
    /// Samples of `devices` starting in `range` (extended back by `lookBehind`: a heartbeat
    /// series starts a few seconds before its beats), ascending start, one window in memory.
    static func windows(_ store: Store, devices: [String], types: Set<QuantityType>? = nil, range: Range<Millis>,
                        window: Millis = 300_000, lookBehind: Millis = 60_000) -> UnfoldSequence<Sample, (Millis, [Sample], Int)> {
        let deviceFilter: SamplePredicate = devices.isEmpty ? .all : .or(devices.map { .device(.id, $0) })
        let typeFilter: SamplePredicate = types.map { .types($0) } ?? .all
        return sequence(state: (range.lowerBound - lookBehind, [Sample](), 0)) { state -> Sample? in
            while state.2 == state.1.count {
                guard state.0 < range.upperBound else { return nil }
                let upper = min(range.upperBound, state.0 + window)
                let p: SamplePredicate = .and([deviceFilter, typeFilter, .time(from: state.0, to: upper, options: .strictStartDate)])
                state.1 = (try? store.samples(matching: p)) ?? []
                state.2 = 0
                state.0 = upper
            }
            defer { state.2 += 1 }
            return state.1[state.2]
        }
    }

    /// The saved workout's HRV (docs/workouts.md "The saved workout"): its beats, pauses left out.
    static func addHRV(to workout: inout Workout, store: Store) {
        let samples = windows(store, devices: workout.deviceIDs, types: [.heartbeatSeries], range: workout.start..<(workout.end + 1))
        let report = HRVAnalysis.analyze(workout: workout, samples: samples)
        guard report.intervals > 0 else {
            workout.info["hrvReason"] = "no RR intervals from the session's devices"
            return
        }
        workout.summary["hrvIntervals"] = Double(report.intervals)
        workout.summary["hrvNormalIntervals"] = Double(report.normal)
        workout.summary["hrvExcludedOutOfRange"] = Double(report.excludedOutOfRange)
        workout.summary["hrvExcludedEctopic"] = Double(report.excludedEctopic)
        workout.summary["hrvExcludedPaused"] = Double(report.excludedPaused)
        if let v = report.meanNN { workout.summary["hrvMeanNN"] = v }
        if let v = report.sdnn { workout.summary["hrvSDNN"] = v }
        if let v = report.rmssd { workout.summary["hrvRMSSD"] = v }
        if let v = report.pnn50 { workout.summary["hrvPNN50"] = v }
        workout.info["hrvMethod"] = report.method
        if let d = report.deviceID { workout.info["hrvDevice"] = d }
    }
}

/// The journal the engine writes through: the store's session journal, with the workout's HRV
/// added when it is saved (the engine computes what samples give it live; the beat series is
/// read back from the store once, at the end).
final class HRVAddingJournal: WorkoutJournal {
    let file: WorkoutJournalFile
    let store: Store

    init(file: WorkoutJournalFile, store: Store) {
        self.file = file
        self.store = store
    }

    func append(_ entry: SessionJournalEntry, session: UUID) throws(StrapError) { try file.append(entry, session: session) }

    func save(_ workout: Workout, session: UUID) throws(StrapError) -> Workout {
        var w = workout
        // Beats decoded just before the end reach the store within its sync interval.
        try? store.sync()
        WorkoutSamples.addHRV(to: &w, store: store)
        return try file.save(w, session: session)
    }

    func remove(session: UUID) throws(StrapError) { try file.remove(session: session) }
}
