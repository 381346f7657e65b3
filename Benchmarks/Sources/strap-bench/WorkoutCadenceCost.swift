import Glibc
import StrapModel
import StrapSimulator
import StrapWorkout

/// `WorkoutEngine.queue` (the daemon's entry) at the live cadence: 100 simulated sensors' packets decoded by
/// `DeviceIngest` at the times they arrive (a few ms apart, the thread sleeping in between as
/// the daemon's ingest thread does), each resulting sample then handed to the engine and that
/// call timed on its own. As in the daemon, the sample was just made by the ingest code (its
/// device and metadata are warm); the session's state and the builder's code were last used a
/// second ago, with other work or idleness since. The cost a live daemon pays per sample,
/// measured without the rest of the daemon's noise.
enum WorkoutCadenceCost {
    struct Phase {
        var nanos: [UInt64] = []
        /// Calls over 50 µs (the thread was preempted inside the call) are left out and counted.
        var preempted = 0
        /// The read at the end of the phase that counts what the sessions still kept.
        var settleNanos: UInt64 = 0
        var mean: Double { nanos.isEmpty ? .nan : Double(nanos.reduce(0, +) + settleNanos) / Double(nanos.count) }
        func percentile(_ p: Double) -> Double {
            let s = nanos.sorted()
            return s.isEmpty ? .nan : Double(s[min(s.count - 1, Int(Double(s.count) * p))])
        }
    }

    /// Phases without sessions, with one per sensor, without again (A B A); each first runs the
    /// minute before `from` unpaced (sessions that have been running a while), then `seconds`
    /// of real time. Returns the added nanoseconds per sample and the phases.
    static func measure(sensors: Int, from: Double, seconds: Double) throws -> (added: Double, phases: [Phase]) {
        var phases: [Phase] = []
        for withSessions in [false, true, false] {
            var feed = SimulatedSamples.Feed(kinds: (0..<sensors).map { Simulation.Kind.allCases[$0 % 3] })
            let origin = feed.origin
            let engine = WorkoutEngine(journal: InMemoryWorkoutJournal(), profiles: { _ in SimulatedSamples.profile },
                                       now: { origin - 1_000 })
            if withSessions {
                for (i, a) in feed.addresses.enumerated() {
                    let activity: ActivityType = i % 3 == 1 ? .cycling : .running
                    try engine.start(WorkoutConfiguration(activityType: activity, deviceIDs: [a]), connectedDevices: [])
                }
            }
            for s in feed.advance(to: from) { _ = engine.queue(s) }
            // Counts what the warm-up left waiting, so the phase counts its own samples only.
            let before = engine.list().reduce(0) { $0 + $1.statistics.totals.heartRateSamples }
            let packets = feed.packets(to: from + seconds)
            usleep(500_000)
            var phase = Phase()
            let base = monotonicNanos()
            for packet in packets {
                sleepUntil(base + UInt64(max(0, packet.time - from) * 1e9))
                for s in feed.ingest(packet) {
                    let t0 = monotonicNanos()
                    _ = engine.queue(s)
                    let t1 = monotonicNanos()
                    if t1 - t0 > 50_000 { phase.preempted += 1 } else { phase.nanos.append(t1 - t0) }
                }
            }
            // What the sessions kept is counted by the next read: timed here and spread over
            // the phase's samples, so the mean is what the phase's samples cost in all.
            let t0 = monotonicNanos()
            engine.settleAll()
            phase.settleNanos = monotonicNanos() - t0
            let after = engine.list().reduce(0) { $0 + $1.statistics.totals.heartRateSamples }
            if withSessions && after <= before { throw BenchFailure("the sessions counted nothing at the live cadence") }
            phases.append(phase)
        }
        return (phases[1].mean - (phases[0].mean + phases[2].mean) / 2, phases)
    }

    static func sleepUntil(_ deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
