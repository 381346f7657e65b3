import FoundationEssentials
import StrapExport
import StrapModel
import StrapStore

/// Reading a workout's samples from the store in bounded memory (exports and HRV of long
/// workouts), in the ascending start order the exporters and HRV need, and the HRV figures the
/// saved workout carries.
public enum WorkoutSamples {
    /// How far behind the newest start already read a sample may come in commit order and still
    /// be put in its place: samples are committed about in time order (a heartbeat series
    /// starts a few seconds before the heart rate of its packet; the store stage batches for a
    /// fraction of a second). Samples further out of order than this would end an export with
    /// `samplesOutOfOrder`; a replayed capture or an import is the only way to make them.
    public static let reorderHorizon: Millis = 2 * 60_000

    /// Samples of `devices` (all when empty) starting in `range` (extended back by `lookBehind`:
    /// a heartbeat series starts a few seconds before its beats), ascending start then anchor.
    /// One pass over the store per iteration, holding only the samples of the reorder horizon.
    public static func inTimeOrder(_ store: Store, devices: [String], types: Set<QuantityType>? = nil,
                                   range: Range<Millis>, lookBehind: Millis = 60_000) throws(StrapError) -> TimeOrderedSamples {
        var parts: [SamplePredicate] = [.time(from: range.lowerBound - lookBehind, to: range.upperBound, options: .strictStartDate)]
        if !devices.isEmpty { parts.append(.or(devices.map { .device(.id, $0) })) }
        if let types { parts.append(.types(types)) }
        return TimeOrderedSamples(scan: try store.scan(matching: .and(parts)), horizon: reorderHorizon)
    }

    /// The store range a workout's samples start in, its end included. A session's end may lie
    /// before its start when the wall clock stepped back between them (a board without a
    /// real-time clock, after an NTP step): the span then clamps to its start, as `HRVAnalysis`
    /// does, instead of an inverted range trapping.
    public static func span(of workout: Workout) -> Range<Millis> {
        workout.start..<(max(workout.start, workout.end) + 1)
    }

    /// What `workout.export` encodes: every sample of the workout's devices over its span, in
    /// time order, readable twice (the exporter's sizing and emitting passes).
    public static func export(_ store: Store, _ workout: Workout) throws(StrapError) -> TimeOrderedSamples {
        try inTimeOrder(store, devices: workout.deviceIDs, range: span(of: workout))
    }

    /// The saved workout's HRV (docs/workouts.md "The saved workout"): its beats, pauses left out.
    static func addHRV(to workout: inout Workout, store: Store) {
        let samples: TimeOrderedSamples
        do throws(StrapError) {
            samples = try inTimeOrder(store, devices: workout.deviceIDs, types: [.heartbeatSeries], range: span(of: workout))
        } catch {
            workout.info["hrvReason"] = "the beat series could not be read: \(error)"
            return
        }
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

    /// The saved workout's power figures (docs/workouts.md "Power figures"), the workout's and
    /// each lap's, when its devices measured power; what the exports compute the same way.
    static func addPower(to workout: inout Workout, store: Store) {
        let samples: TimeOrderedSamples
        do throws(StrapError) {
            samples = try inTimeOrder(store, devices: workout.deviceIDs, types: [.cyclingPower], range: span(of: workout),
                                      lookBehind: 0)
        } catch {
            workout.info["powerReason"] = "the power samples could not be read: \(error)"
            return
        }
        do throws(ExportError) {
            guard let figures = try WorkoutPower.figures(workout, samples: samples) else { return }
            WorkoutPower.add(figures, to: &workout)
        } catch {
            // A workout without a second (end not after start) has no power to speak of.
            if case .invalidWorkout = error { return }
            workout.info["powerReason"] = "the power figures could not be computed: \(error)"
        }
    }
}

/// A store scan (commit order) put in ascending (start, anchor) order through a min-heap that
/// holds the samples of the last `horizon` of start times: a sample leaves once a sample
/// starting `horizon` later has been read, so nothing that comes less late than that is
/// emitted out of order. Repeatable: each iteration scans the store again.
public struct TimeOrderedSamples: Sequence, Sendable {
    let scan: SampleScan
    let horizon: Millis

    public struct Iterator: IteratorProtocol {
        /// The heap orders plain keys; the samples wait in slots. Moving `Sample`s around the
        /// heap retained and released their device and extras on every swap, which was most
        /// of an export's time.
        private struct Key {
            var start: Millis
            var anchor: UInt64
            var slot: Int
            @inline(__always) static func < (a: Key, b: Key) -> Bool {
                a.start != b.start ? a.start < b.start : a.anchor < b.anchor
            }
        }

        private var source: SampleScan.Iterator
        private var heap: [Key] = []
        private var slots: [Sample?] = []
        private var freeSlots: [Int] = []
        private var newestStart = Millis.min
        private var drained = false
        let horizon: Millis

        init(_ source: SampleScan.Iterator, horizon: Millis) {
            self.source = source
            self.horizon = horizon
        }

        public mutating func next() -> Sample? {
            while !drained, heap.isEmpty || heap[0].start > newestStart &- horizon {
                guard let s = source.next() else { drained = true; break }
                newestStart = Swift.max(newestStart, s.start)
                push(s)
            }
            return heap.isEmpty ? nil : pop()
        }

        private mutating func push(_ s: Sample) {
            let slot: Int
            if let free = freeSlots.popLast() { slot = free; slots[slot] = s } else { slot = slots.count; slots.append(s) }
            heap.append(Key(start: s.start, anchor: s.anchor, slot: slot))
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard heap[i] < heap[parent] else { break }
                heap.swapAt(i, parent)
                i = parent
            }
        }

        private mutating func pop() -> Sample {
            let top = heap[0]
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, heap[l] < heap[m] { m = l }
                if r < heap.count, heap[r] < heap[m] { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
            let sample = slots[top.slot]!
            slots[top.slot] = nil
            freeSlots.append(top.slot)
            return sample
        }
    }

    public func makeIterator() -> Iterator { Iterator(scan.makeIterator(), horizon: horizon) }
}

/// The journal the engine writes through: the store's session journal, with the workout's HRV
/// added when it is saved (the engine computes what samples give it live; the beat series is
/// read back from the store once, at the end).
final class HRVAddingJournal: WorkoutJournal {
    let file: WorkoutJournalFile
    let store: Store
    /// Told of a failed journal write (session, the command that needed it, the error) before
    /// the engine sees the error; the save's failures are `WorkoutService.end`'s to report.
    var onFailure: ((UUID, String, StrapError) -> Void)?

    init(file: WorkoutJournalFile, store: Store) {
        self.file = file
        self.store = store
    }

    func append(_ entry: SessionJournalEntry, session: UUID, durably: Bool) throws(StrapError) {
        do throws(StrapError) { try file.append(entry, session: session, durably: durably) } catch {
            onFailure?(session, SessionFailure.operation(writing: entry), error)
            throw error
        }
    }

    /// The ending session's journal (its `ended` entry); failures are `WorkoutService.end`'s to report.
    func sync(session: UUID) throws(StrapError) { try file.sync(session: session) }

    func save(_ workout: Workout, session: UUID) throws(StrapError) -> Workout {
        var w = workout
        // What the store stage appended is readable once synced (`WorkoutService.end` has
        // flushed the pipeline into it).
        try? store.sync()
        WorkoutSamples.addHRV(to: &w, store: store)
        WorkoutSamples.addPower(to: &w, store: store)
        return try file.save(w, session: session)
    }

    func remove(session: UUID) throws(StrapError) {
        do throws(StrapError) { try file.remove(session: session) } catch {
            onFailure?(session, "discard", error)
            throw error
        }
    }
}
