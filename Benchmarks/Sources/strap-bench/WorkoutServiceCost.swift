import Foundation
import StrapDaemon
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapWorkout

/// What 100 sessions at 1 Hz add to an idle daemon's CPU, measured in-process: the cost per
/// sample of the workout path with 100 sessions (one device each) minus without any, times
/// the samples 100 simulated sensors deliver per second. Three estimates, the largest is the
/// figure (docs/benchmarks.md):
/// - the daemon's objects (store, `StoreStage`, `Pipeline`, `LiveHub`, `WorkoutService`
///   attached to the hub as the front end attaches it) fed the same simulator packets with
///   and without the sessions, in batches: everything the sessions change, but a small
///   difference of two large CPU totals, and with warm caches;
/// - `WorkoutEngine.queue` alone (the per-sample work the service does under its lock) in a
///   tight loop, with 100 sessions and with none: precise, warm caches;
/// - `WorkoutEngine.queue` at the live cadence, packet by packet at their arrival times, each
///   call timed (WorkoutCadenceCost): what a call costs when the CPU did other things since.
enum WorkoutServiceCost {
    static let sessions = 100

    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        let seconds: Double = quick ? 600 : 3000
        let events = PipelineBench.makeEvents(devices: sessions, seconds: seconds)
        let addresses = Simulation(count: sessions, seed: 42, dropouts: .none).devices.map(\.identity.address)
        let origin: Millis = 1_700_000_000_000     // PipelineBench.makeEvents' wall clock at t = 0

        // The real path: A without sessions, B with 100, alternating so that load elsewhere
        // lands on both; one unmeasured round of each first.
        let rounds = quick ? 3 : 7
        var without: [Double] = [], with: [Double] = []
        var samples = 0
        for r in 0...rounds {
            let a = try pipelineRound(events, addresses: addresses, origin: origin, withSessions: false)
            let b = try pipelineRound(events, addresses: addresses, origin: origin, withSessions: true)
            samples = a.samples
            guard a.samples == b.samples else { throw BenchFailure("the two configurations stored different samples") }
            print(String(format: "  service: round %d: CPU %.3f s without sessions, %.3f s with %d (%@ samples counted)",
                         r, a.cpu, b.cpu, sessions, "\(b.counted)") + (r == 0 ? " (warm-up, not counted)" : ""))
            if r > 0 { without.append(a.cpu); with.append(b.cpu) }
        }
        let pipelinePerSample = (median(with) - median(without)) / Double(samples)
        let samplesPerSecond = Double(samples) / seconds

        // The engine alone, on the same sensors' samples.
        var feed = SimulatedSamples.Feed(kinds: (0..<sessions).map { Simulation.Kind.allCases[$0 % 3] })
        let engineSamples = feed.advance(to: quick ? 600 : 3600)
        let emptyEngine = try engineNanos(engineSamples, addresses: feed.addresses, sessions: false, origin: feed.origin)
        let fullEngine = try engineNanos(engineSamples, addresses: feed.addresses, sessions: true, origin: feed.origin)
        let enginePerSample = (fullEngine - emptyEngine) / 1e9

        // The engine at the live cadence: 20 s per phase (5 s with --quick), A B A B A B A
        // (A B A with --quick).
        let cadenceSeconds: Double = quick ? 5 : 20
        let cadence = try WorkoutCadenceCost.measure(sensors: sessions, from: 60, seconds: cadenceSeconds, phases: quick ? 3 : 7)
        let cadencePerSample = cadence.added / 1e9
        print("  service: WorkoutEngine.queue at the live cadence, \(Int(cadenceSeconds)) s per phase: " + cadence.phases.enumerated().map { i, p in
            String(format: "%@ %.0f ns mean (p50 %.0f, p90 %.0f, p99 %.0f) over %d calls (%d preempted, left out), the final read counting what was kept %.1f µs",
                   i % 2 == 1 ? "with sessions" : "without", p.mean, p.percentile(0.5), p.percentile(0.9), p.percentile(0.99),
                   p.nanos.count, p.preempted, Double(p.settleNanos) / 1e3)
        }.joined(separator: "; ") + String(format: " → %.1f ns added", cadence.added))

        let perSample = max(pipelinePerSample, enginePerSample, cadencePerSample)
        let share = perSample * samplesPerSecond * 100
        print(String(format: "  service: %d samples from %d sensors over %.0f s = %.1f samples/s (%@)", samples, sessions, seconds,
                     samplesPerSecond, SimulatedSamples.mix(engineSamples)))
        print(String(format: "  service: real path: median CPU %.3f s without, %.3f s with → %.1f ns per sample added "
                     + "(rounds without: %@; with: %@)", median(without), median(with), pipelinePerSample * 1e9,
                     without.map { String(format: "%.3f", $0) }.joined(separator: " "),
                     with.map { String(format: "%.3f", $0) }.joined(separator: " ")))
        print(String(format: "  service: WorkoutEngine.queue: %.1f ns per sample with %d sessions, %.1f ns with none → %.1f ns added",
                     fullEngine, sessions, emptyEngine, enginePerSample * 1e9))
        print(String(format: "  service: the largest, %.1f ns × %.1f samples/s = %.2f µs of CPU per second = %.5f %% of a core (%.3f CPU s/h)",
                     perSample * 1e9, samplesPerSecond, perSample * samplesPerSecond * 1e6, share, perSample * samplesPerSecond * 3600))
        return [
            BenchFigure(section: section, name: "100 sessions at 1 Hz: added CPU per sample, daemon path (in-process)", unit: "ns",
                        ours: pipelinePerSample * 1e9, higherIsBetter: false),
            BenchFigure(section: section, name: "100 sessions at 1 Hz: added CPU per sample, WorkoutEngine.queue", unit: "ns",
                        ours: enginePerSample * 1e9, higherIsBetter: false),
            BenchFigure(section: section, name: "100 sessions at 1 Hz: added CPU per sample, WorkoutEngine.queue at the live cadence",
                        unit: "ns", ours: cadence.added, higherIsBetter: false),
            BenchFigure(section: section, name: "100 sessions at 1 Hz: CPU added (in-process estimate)", unit: "% of one core",
                        ours: share, higherIsBetter: false),
        ]
    }

    struct Round { var cpu: Double; var samples: Int; var counted: Int }

    /// The daemon's objects on a fresh store (default durable policy), fed `events` in
    /// batches of about one simulated second, until everything is stored and synced.
    static func pipelineRound(_ events: [SensorEvent], addresses: [String], origin: Millis, withSessions: Bool) throws -> Round {
        let dir = makeTemporaryDirectory("strap-bench-service", under: "/tmp")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .interval(0.1)))
        defer { store.close() }
        let profiles = ProfileBook()
        var patch = AthleteProfilePatch()
        patch.dateOfBirth = .set(SimulatedSamples.profile.dateOfBirth!)
        patch.biologicalSex = .set(.female)
        patch.weight = .set(62)
        _ = try profiles.update(WorkoutConfiguration.defaultAthlete, patch, today: CalendarDate(utcMillis: origin))
        // Sessions start just before the first packet, so every sample is inside them.
        // 100 sessions: above strapd's default bound of 64 open at once (`[daemon] max_workout_sessions`).
        let service = try WorkoutService(store: store, profiles: profiles, now: { origin - 1_000 }, maximumOpenSessions: 100)
        let live = LiveHub()
        let pipeline = Pipeline(capacity: .max, storeStage: StoreStage(store: store), live: live) { address, name in
            (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings())
        }
        service.attach(hub: live)
        defer { service.detach(hub: live) }
        if withSessions {
            for (i, a) in addresses.enumerated() {
                let activity: ActivityType = i % 3 == 1 ? .cycling : .running
                _ = try service.start(WorkoutConfiguration(activityType: activity, deviceIDs: [a]), connected: [])
            }
        }
        let cpu0 = processCPUSeconds()
        var i = 0
        while i < events.count {
            let end = min(events.count, i + sessions)
            pipeline.submit(contentsOf: Array(events[i..<end]))
            i = end
        }
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        let cpu = processCPUSeconds() - cpu0
        let counted = service.list().reduce(0) { $0 + $1.statistics.totals.heartRateSamples }
        if withSessions && counted == 0 { throw BenchFailure("the sessions counted no heart-rate sample") }
        return Round(cpu: cpu, samples: Int(store.latestAnchor), counted: counted)
    }

    /// Nanoseconds per `WorkoutEngine.queue` (the daemon's entry; the final read that counts
    /// what the sessions kept is timed with it), best of 3 passes over `samples`, each on a fresh
    /// engine with one session per device or with none (a second pass over the same samples
    /// would take the builder's "older than the last sample" path).
    static func engineNanos(_ samples: [Sample], addresses: [String], sessions: Bool, origin: Millis) throws -> Double {
        var best = Double.infinity
        var hits = 0
        for _ in 0..<3 {
            let engine = WorkoutEngine(journal: InMemoryWorkoutJournal(), profiles: { _ in SimulatedSamples.profile },
                                       now: { origin - 1_000 }, maximumOpenSessions: 100)
            if sessions {
                for (i, a) in addresses.enumerated() {
                    let activity: ActivityType = i % 3 == 1 ? .cycling : .running
                    try engine.start(WorkoutConfiguration(activityType: activity, deviceIDs: [a]), connectedDevices: [])
                }
            }
            let t0 = DecodeBench.now()
            for s in samples { _ = engine.queue(s) }
            hits &+= engine.list().reduce(0) { $0 + $1.statistics.totals.heartRateSamples }
            best = min(best, DecodeBench.now() - t0)
        }
        if sessions && hits == 0 { throw BenchFailure("the engine's sessions counted nothing") }
        return best / Double(samples.count) * 1e9
    }
}
