import AllocationCounter
import Foundation
import StrapModel
import StrapWorkout

/// Samples per second through one live session's statistics on one core: a started
/// `WorkoutEngine` session (in-memory journal, the athlete's profile for energy and zones)
/// holding a heart-rate strap and a speed/cadence sensor, fed an hour of their real samples
/// with two laps and a pause, through `WorkoutEngine.queue` (the daemon's per-sample entry:
/// the device's route, then `LiveWorkoutBuilder.add`).
enum WorkoutBuilderBench {
    /// The engine's clock, moved by the benchmark to each command's time.
    final class Clock { var now: Millis = 0 }

    enum Command { case lap, pause, resume }

    struct Workload {
        var samples: [Sample]
        var devices: [String]
        var start: Millis
        /// Before sample `index`, the clock moves to `time` and `command` runs.
        var commands: [(index: Int, time: Millis, command: Command)]
    }

    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        let w = workload()
        let seconds = quick ? 0.1 : 0.5
        print("  builder: one session, 1 h of a heart-rate strap and a speed/cadence sensor: \(w.samples.count) samples "
              + "(\(SimulatedSamples.mix(w.samples))), laps at 15 and 45 min, paused 30-32 min")
        let clock = Clock()
        let engine = WorkoutEngine(journal: InMemoryWorkoutJournal(), profiles: { _ in SimulatedSamples.profile },
                                   now: { clock.now })
        let configuration = WorkoutConfiguration(activityType: .cycling, locationType: .indoor, deviceIDs: w.devices)

        var counted = 0
        _ = try pass(w, engine, clock, configuration, counted: &counted)    // warm-up
        var rounds: [Double] = []
        for _ in 0..<3 {
            var passes = 0
            let t0 = DecodeBench.now()
            var elapsed = 0.0
            repeat {
                _ = try pass(w, engine, clock, configuration, counted: &counted)
                passes += 1
                elapsed = DecodeBench.now() - t0
            } while elapsed < seconds
            rounds.append(Double(passes * w.samples.count) / elapsed)
        }
        let allocations = try pass(w, engine, clock, configuration, counted: &counted, countAllocations: true)
        let perSample = Double(allocations) / Double(w.samples.count)
        let builderAlone = builderOnly(w, seconds: seconds)
        print("  builder: engine path " + rounds.map { String(format: "%.2f M", $0 / 1e6) }.joined(separator: ", ")
              + " samples/s (best of 3 rounds of ≥ \(seconds) s); \(allocations) heap allocations in a pass of "
              + "\(w.samples.count) samples; LiveWorkoutBuilder.add alone " + String(format: "%.2f M samples/s", builderAlone / 1e6)
              + "; \(counted) heart-rate samples counted in all passes")
        return [
            BenchFigure(section: section, name: "live statistics, one session (engine path)", unit: "samples/s",
                        ours: rounds.max()!, higherIsBetter: true),
            BenchFigure(section: section, name: "live statistics, heap allocations per sample", unit: "allocations",
                        ours: perSample, higherIsBetter: false),
            BenchFigure(section: section, name: "live statistics, LiveWorkoutBuilder.add alone", unit: "samples/s",
                        ours: builderAlone, higherIsBetter: true),
        ]
    }

    /// One session from start to discard over the workload; returns the heap allocations made
    /// inside `add` calls when counting (the commands' own are not counted).
    static func pass(_ w: Workload, _ engine: WorkoutEngine, _ clock: Clock, _ configuration: WorkoutConfiguration,
                     counted: inout Int, countAllocations: Bool = false) throws -> UInt64 {
        clock.now = w.start
        let id = try engine.start(configuration, connectedDevices: []).id
        var allocations: UInt64 = 0
        var i = 0
        func feed(to end: Int) {
            if countAllocations { allocation_counter_enable(1) }
            let before = allocation_counter_count()
            while i < end {
                engine.queue(w.samples[i])
                i += 1
            }
            if countAllocations {
                allocation_counter_enable(0)
                allocations += allocation_counter_count() - before
            }
        }
        for c in w.commands {
            feed(to: c.index)
            clock.now = c.time
            switch c.command {
            case .lap: try engine.lap(id)
            case .pause: try engine.pause(id)
            case .resume: try engine.resume(id)
            }
        }
        feed(to: w.samples.count)
        // The read that counts what the session still kept is part of the pass.
        counted &+= try engine.statistics(id).totals.heartRateSamples
        try engine.discard(id)
        return allocations
    }

    /// The builder without the engine's routing: the same samples and journal entries.
    static func builderOnly(_ w: Workload, seconds: Double) -> Double {
        var best = 0.0
        var sink = 0
        for _ in 0..<3 {
            var passes = 0
            let t0 = DecodeBench.now()
            var elapsed = 0.0
            repeat {
                var b = LiveWorkoutBuilder()
                b.apply(.started(time: w.start, deviceIDs: w.devices, profile: SimulatedSamples.profile))
                var i = 0
                for c in w.commands {
                    while i < c.index { if b.add(w.samples[i]) { sink &+= 1 }; i += 1 }
                    switch c.command {
                    case .lap: b.apply(.lap(time: c.time, metadata: [:]))
                    case .pause: b.apply(.paused(time: c.time))
                    case .resume: b.apply(.resumed(time: c.time))
                    }
                }
                while i < w.samples.count { if b.add(w.samples[i]) { sink &+= 1 }; i += 1 }
                passes += 1
                elapsed = DecodeBench.now() - t0
            } while elapsed < seconds
            best = max(best, Double(passes * w.samples.count) / elapsed)
        }
        if sink == 42 { print("") }
        return best
    }

    /// An hour of a strap and a speed/cadence sensor: heart rate, active energy (from the
    /// strap's energy expended), speed, cadence and distance. Beat series and battery are left
    /// out: the builder ignores them, and counting them would flatter the figure.
    static func workload() -> Workload {
        var feed = SimulatedSamples.Feed(kinds: [.hr, .csc])
        let wanted: Set<QuantityType> = [.heartRate, .activeEnergy, .cyclingSpeed, .cyclingCadence, .cyclingDistance]
        let samples = feed.advance(to: 3600).filter { wanted.contains($0.type) }
        let start = feed.origin
        let minute: Millis = 60_000
        let plan: [(Millis, Command)] = [(15 * minute, .lap), (30 * minute, .pause), (32 * minute, .resume), (45 * minute, .lap)]
        let commands = plan.map { offset, command in
            (index: samples.firstIndex { $0.start >= start + offset } ?? samples.count, time: start + offset, command: command)
        }
        return Workload(samples: samples, devices: feed.addresses, start: start, commands: commands)
    }
}
