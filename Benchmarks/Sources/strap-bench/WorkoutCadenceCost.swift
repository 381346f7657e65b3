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

    /// Two engines, one without sessions (A) and one with a session per sensor (B), both fed
    /// the minute before `from` unpaced (sessions that have been running a while); then
    /// `phases` phases of `seconds` of real time, A B A B … A, each phase's packets handed to
    /// that phase's engine. Alternating live engines, rather than building a fresh one per
    /// phase, lets many short phases cancel the host's drift (the cost of a cold call moves by
    /// hundreds of ns from one minute to the next on this VM). Returns the added nanoseconds
    /// per sample (mean of the B phases − mean of the A phases) and the phases.
    static func measure(sensors: Int, from: Double, seconds: Double, phases count: Int = 7) throws -> (added: Double, phases: [Phase]) {
        var feed = SimulatedSamples.Feed(kinds: (0..<sensors).map { Simulation.Kind.allCases[$0 % 3] })
        let origin = feed.origin
        let engines = (0..<2).map { _ in
            WorkoutEngine(journal: InMemoryWorkoutJournal(), profiles: { _ in SimulatedSamples.profile }, now: { origin - 1_000 },
                          maximumOpenSessions: 100)
        }
        for (i, a) in feed.addresses.enumerated() {
            let activity: ActivityType = i % 3 == 1 ? .cycling : .running
            try engines[1].start(WorkoutConfiguration(activityType: activity, deviceIDs: [a]), connectedDevices: [])
        }
        for s in feed.advance(to: from) { for e in engines { _ = e.queue(s) } }
        // Counts what the warm-up left waiting, so the phases count their own samples only.
        for e in engines { e.settleAll() }
        let counted = { engines[1].list().reduce(0) { $0 + $1.statistics.totals.heartRateSamples } }
        let before = counted()
        usleep(500_000)
        var phases: [Phase] = []
        let base = monotonicNanos()
        for k in 0..<max(3, count | 1) {
            let engine = engines[k % 2]
            let start = from + Double(k) * seconds
            var phase = Phase()
            for packet in feed.packets(to: start + seconds) {
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
            phases.append(phase)
        }
        if counted() <= before { throw BenchFailure("the sessions counted nothing at the live cadence") }
        let mean = { (parity: Int) -> Double in
            let ps = phases.enumerated().filter { $0.offset % 2 == parity }.map(\.element)
            return ps.map(\.mean).reduce(0, +) / Double(ps.count)
        }
        return (mean(1) - mean(0), phases)
    }

    static func sleepUntil(_ deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
