import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// Elapsed time excludes pauses; laps split it; the journal rebuilds it exactly.
@Suite struct ElapsedTimeTests {
    /// start 0 s, pause 60, resume 90, lap 120, pause 150, resume 200, stop 260, end 300:
    /// active [0, 60] + [90, 150] + [200, 260] = 180 s; lap 1 = 60 + 30, lap 2 = 30 + 60.
    func runScript(_ f: EngineFixture, samples: Bool) throws -> (UUID, fed: [Sample]) {
        var fed: [Sample] = []
        let e = f.engine
        let id = try e.create(WorkoutConfiguration(activityType: .running, deviceIDs: ["dev-h10"])).id
        func at(_ s: Millis) { f.clock.now = W.t0 + s * 1000 }
        func feed(_ from: Millis, _ to: Millis) {
            guard samples else { return }
            for smp in W.steadyHR(150, from: W.t0 + from * 1000, to: W.t0 + to * 1000) {
                e.add(smp)
                fed.append(smp)
            }
        }
        at(0); try e.start(id, connectedDevices: [])
        feed(1, 59); at(60); try e.pause(id)
        feed(61, 89)  // in the pause: not counted
        at(90); try e.resume(id)
        feed(91, 119); at(120); try e.lap(id, metadata: ["split": "1"])
        feed(121, 149); at(150); try e.pause(id)
        at(200); try e.resume(id)
        feed(201, 259); at(260); try e.stop(id)
        feed(261, 280)  // after the stop: not counted
        return (id, fed)
    }

    @Test func elapsedLeavesOutPauses() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.create(WorkoutConfiguration(activityType: .running, deviceIDs: ["dev-h10"])).id
        f.clock.now = W.t0; try e.start(id, connectedDevices: [])
        f.clock.now = W.t0 + 30_000
        #expect(try e.statistics(id).totals.elapsedTime == 30)
        f.clock.now = W.t0 + 60_000; try e.pause(id)
        f.clock.now = W.t0 + 75_000
        #expect(try e.statistics(id).totals.elapsedTime == 60, "paused: the clock runs, elapsed does not")
        f.clock.now = W.t0 + 90_000; try e.resume(id)
        f.clock.now = W.t0 + 100_000
        #expect(try e.statistics(id).totals.elapsedTime == 70)
    }

    @Test func lapsSplitElapsedAndSamples() throws {
        let f = EngineFixture()
        let (id, _) = try runScript(f, samples: true)
        f.clock.now = W.t0 + 400_000
        let st = try f.engine.statistics(id)
        #expect(st.totals.elapsedTime == 180, "stopped: frozen at the stop")
        #expect(st.laps.count == 2)
        #expect(st.laps[0].figures.elapsedTime == 90)
        #expect(st.laps[1].figures.elapsedTime == 90)
        #expect(st.laps[0].start == W.t0 && st.laps[0].end == W.t0 + 120_000)
        #expect(st.laps[1].end == W.t0 + 260_000, "the last lap ends at the stop")
        // Counted: 1…59 (59) + 91…119 (29) + 121…149 (29) + 201…259 (59) = 176 samples.
        #expect(st.totals.heartRateSamples == 176)
        #expect(st.laps[0].figures.heartRateSamples == 88)
        #expect(st.laps[1].figures.heartRateSamples == 88)
    }

    @Test func journalRebuildsTheSessionAndItsStatistics() throws {
        let f = EngineFixture()
        let (id, fed) = try runScript(f, samples: true)
        f.clock.now = W.t0 + 400_000
        let live = try f.engine.get(id)

        let g = EngineFixture()
        g.clock.now = f.clock.now
        let recovered = try g.engine.recover(f.journal.entries[id]!)
        #expect(recovered == live.session, "the session value is rebuilt exactly")
        // Re-feed what the store holds for the session, in time order (pauses included).
        let stored = fed.sorted { $0.start < $1.start }
        #expect(live.session.replayPredicate != nil)
        for s in stored where live.session.replayPredicate!.matches(s) { try g.engine.add(s, to: id) }
        #expect(try g.engine.get(id) == live, "statistics depend only on timestamps and event times")
    }

    @Test func sampleArrivingAfterThePauseCommandStillCounts() throws {
        // A sample timed before the pause but delivered after it counts, as it will on replay.
        let f = EngineFixture()
        let e = f.engine
        let id = try e.create(WorkoutConfiguration(activityType: .cycling, deviceIDs: ["dev-h10"])).id
        try e.start(id, connectedDevices: [])
        f.clock.now = W.t0 + 10_000; try e.pause(id)
        #expect(e.add(W.hr(140, W.t0 + 9_500)) == id)
        #expect(e.add(W.hr(140, W.t0 + 10_500)) == nil, "inside the pause")
        #expect(try e.statistics(id).totals.heartRateSamples == 1)
    }

    @Test func commandIsNotTimedBeforeACountedSample() throws {
        // The clock says 10.0 s, but a sample stamped 10.4 s was already counted: the pause is
        // timed 10.4 s, so a replay (which knows the pause first) counts that sample too.
        let f = EngineFixture()
        let e = f.engine
        let id = try e.create(WorkoutConfiguration(activityType: .cycling, deviceIDs: ["dev-h10"])).id
        try e.start(id, connectedDevices: [])
        e.add(W.hr(140, W.t0 + 10_400))
        f.clock.now = W.t0 + 10_000
        try e.pause(id)
        #expect(try e.get(id).session.events.last?.time == W.t0 + 10_400)
        // …but never more than 5 s ahead of the clock for a wildly future sample.
        try e.resume(id)
        e.add(W.hr(140, W.t0 + 3_600_000))
        try e.pause(id)
        #expect(try e.get(id).session.events.last?.time == W.t0 + 15_000)
    }
}
