import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// `WorkoutEngine.queue`, the daemon's entry: a session nobody watches keeps its samples and
/// counts them in a batch, and nothing anyone reads may differ from counting each at once.
@Suite struct QueuedCountingTests {
    /// One scripted afternoon: two sessions, a strap and a speed/cadence sensor each, samples
    /// interleaved with laps, a pause, a stop and a sample stamped ahead of the clock.
    enum Step {
        case sample(Sample)
        case clock(Millis)
        case lap(Int), pause(Int), resume(Int), stop(Int)
        case read
    }

    static func script() -> [Step] {
        var steps: [Step] = []
        for i in 1...200 {
            let t = W.t0 + Millis(i) * 700
            steps.append(.clock(t))
            steps.append(.sample(W.hr(110 + Double(i % 60), t, W.strap)))
            steps.append(.sample(W.hr(150 + Double(i % 30), t + 50, W.strap2)))
            steps.append(.sample(Sample(type: .cyclingSpeed, value: 7 + Double(i % 5), start: t, device: W.csc)))
            steps.append(.sample(Sample(type: .cyclingCadence, value: 85, start: t, device: W.csc)))
            steps.append(.sample(Sample(type: .cyclingDistance, value: 6, start: t - 700, end: t, device: W.csc)))
            steps.append(.sample(Sample(type: .heartbeatSeries, value: 1, start: t, device: W.strap, metadata: [:])))
            if i % 37 == 0 { steps.append(.lap(i % 2)) }
            if i == 90 { steps.append(.pause(0)) }
            if i == 95 { steps.append(.sample(W.hr(200, t + 2_000, W.strap2))) }  // ahead of the clock
            if i == 96 { steps.append(.pause(1)) }
            if i == 120 { steps.append(.resume(0)); steps.append(.resume(1)) }
            if i % 45 == 0 { steps.append(.read) }
            if i == 190 { steps.append(.stop(1)) }
        }
        return steps
    }

    /// Runs the script through `add` or `queue`; returns every read's statistics, the pause
    /// times the commands were given, and the saved workouts.
    static func run(queued: Bool) throws -> (reads: [LiveStatistics], events: [[Workout.Event]], workouts: [Workout]) {
        let f = EngineFixture()
        let e = f.engine
        let ids = [
            try e.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [W.strap.id, W.csc.id]), connectedDevices: []).id,
            try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap2.id]), connectedDevices: []).id,
        ]
        var reads: [LiveStatistics] = []
        for step in script() {
            switch step {
            case .sample(let s): if queued { e.queue(s) } else { e.add(s) }
            case .clock(let t): f.clock.now = t
            case .lap(let k): try e.lap(ids[k])
            case .pause(let k): try e.pause(ids[k])
            case .resume(let k): try e.resume(ids[k])
            case .stop(let k): try e.stop(ids[k])
            case .read: reads += try ids.map { id throws(StrapError) in try e.statistics(id) }
            }
        }
        let events = try ids.map { id throws(StrapError) in try e.get(id).session.events }
        let workouts = try ids.map { id throws(StrapError) in try e.end(id) }
        return (reads, events, workouts)
    }

    @Test func readsCommandsAndSavedWorkoutsAreTheSameAsCountingEachSampleAtOnce() throws {
        let direct = try Self.run(queued: false), queued = try Self.run(queued: true)
        #expect(queued.reads.count == direct.reads.count && !direct.reads.isEmpty)
        for (q, d) in zip(queued.reads, direct.reads) { #expect(q == d) }
        #expect(queued.events == direct.events, "a command is timed after the samples counted before it")
        #expect(queued.workouts.map(\.summary) == direct.workouts.map(\.summary))
        #expect(queued.workouts.map(\.laps) == direct.workouts.map(\.laps))
        #expect(direct.workouts[0].summary["heartRateAverage"] != nil, "the script counts something")
    }

    @Test func anUnwatchedSessionKeepsSamplesUpToTheLimitAndOnlyCountableOnes() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        let record = try #require(e.open[id])
        for i in 1..<WorkoutEngine.pendingLimit {
            #expect(e.queue(W.hr(130, W.t0 + Millis(i) * 1000)) == nil, "kept, not reported")
            e.queue(Sample(type: .heartbeatSeries, value: 1, start: W.t0 + Millis(i) * 1000, device: W.strap, metadata: [:]))
        }
        #expect(record.pending.count == WorkoutEngine.pendingLimit - 1, "the beat series is never counted, so never kept")
        #expect(record.builder.statistics(session: id, state: .running, at: f.clock.now).totals.heartRateSamples == 0)
        e.queue(W.hr(130, W.t0 + Millis(WorkoutEngine.pendingLimit) * 1000))
        #expect(record.pending.isEmpty, "the limit counts the batch")
        #expect(try e.statistics(id).totals.heartRateSamples == WorkoutEngine.pendingLimit)
        e.queue(W.hr(130, W.t0 + 100_000))
        #expect(record.pending.isEmpty, "the same session again with nothing waiting: counted at once")
        #expect(try e.statistics(id).totals.heartRateSamples == WorkoutEngine.pendingLimit + 1)
        // Another session's sample in between: the session's memory is cold again, so it keeps.
        let other = try e.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [W.csc.id]), connectedDevices: []).id
        e.queue(Sample(type: .cyclingSpeed, value: 8, start: W.t0 + 100_500, device: W.csc))
        e.queue(W.hr(131, W.t0 + 101_000))
        #expect(record.pending.count == 1)
        #expect(try e.statistics(id).totals.heartRateSamples == WorkoutEngine.pendingLimit + 2, "a read counts what waits")
        #expect(try e.statistics(other).totals.speedMostRecent == 8)
    }

    @Test func aWatchedSessionCountsAtOnceAndSaysWhichSampleChangedIt() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        e.queue(W.hr(120, W.t0 + 1000))
        e.watch(id, true)
        #expect(try #require(e.open[id]).pending.isEmpty, "what waited is counted when the session becomes watched")
        #expect(e.queue(W.hr(125, W.t0 + 2000)) == id)
        f.clock.now = W.t0 + 3000
        try e.pause(id)
        #expect(e.queue(W.hr(125, W.t0 + 4000)) == nil, "inside the pause: nothing changed")
        e.watch(id, false)
        #expect(e.queue(W.hr(125, W.t0 + 5000)) == nil)
        #expect(try e.statistics(id).totals.heartRateSamples == 2)
    }
}
