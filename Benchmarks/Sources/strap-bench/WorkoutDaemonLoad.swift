import Foundation
import StrapKit
import StrapDaemon
import StrapIngest
import StrapModel
import StrapSimulator

/// The cross-check on the shipped strapd fed 100 simulated sensors at 1 Hz, measured without
/// sessions, with 100 sessions started over the socket (one sensor each), and without again
/// after discarding them (A, B, A': drift over the run shows as A ≠ A'). No follower is
/// attached, so the statistics flush to followers never runs: the idle daemon's case.
///
/// `--simulate` stops at 64 sensors, so the 100 come from `--replay` of a capture the bench
/// writes: the simulator's packets for 100 sensors (what `--simulate=100` would send), stamped
/// from the moment strapd is spawned, so the replayed samples carry the present time and count
/// in sessions started now. The replay submits each packet at its time, as a live source does.
enum WorkoutDaemonLoad {
    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  daemon: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        let seconds = quick ? 60 : 120
        // A without sessions, B with; STRAP_BENCH_WL_PHASES=A,A,A shows the daemon's own spread.
        let plan = getenv("STRAP_BENCH_WL_PHASES").map { String(cString: $0).split(separator: ",").map(String.init) } 
            ?? (quick ? ["A", "B", "A"] : ["A", "B", "A", "B", "A"])
        guard plan.allSatisfy({ $0 == "A" || $0 == "B" }), plan.first == "A" else { throw BenchFailure("STRAP_BENCH_WL_PHASES: A and B, starting with A") }
        let run = try DaemonFootprint.freshRunDirectory("wl")
        defer { try? FileManager.default.removeItem(atPath: run) }
        print("  daemon: measuring \(strapd) (\(DaemonFootprint.linkage(strapd))), 100 sensors replayed at 1 Hz, phases "
              + plan.joined(separator: " ") + ", \(seconds) s each")
        let capture = run + "/sensors.capture"
        // Stamped from a moment a few seconds ahead, when strapd is spawned (writing takes ~1 s).
        let spawnAt = Date().timeIntervalSince1970 + 5
        let addresses = try writeCapture(capture, sensors: 100, seconds: Double(plan.count * (seconds + 10) + 60),
                                         from: Millis(spawnAt * 1000))
        let early = spawnAt - Date().timeIntervalSince1970
        guard early > 0 else { throw BenchFailure("writing the capture took more than 5 s") }
        usleep(UInt32(early * 1e6))
        let notify = try NotifyListener(path: run + "/notify.sock")
        let socket = run + "/wl.sock", log = run + "/wl.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--replay", capture, "--replay-speed", "1", "--state-dir", run + "/state",
                                                        "--socket", socket,
                                                        // 100 sessions: above the default bound of 64 open at once.
                                                        "--set", "daemon.max_workout_sessions=100"], notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 30) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let client = try StrapStore.connected(socket)
        sleep(1)
        let listed = try ClientBench.blocking { [client] in try await client.deviceAddresses() }.count
        print("  daemon: strapd lists \(listed) devices")
        _ = try client.requestNow("profile.set", ["athlete": .string("default"),
                                                  "profile": .object(["weight": .int(62), "dateOfBirth": .string("1988-06-01"),
                                                                      "biologicalSex": .string("female")])])
        let pid = daemon.processIdentifier

        var ids: [String] = []
        var phases: [Phase] = []
        for kind in plan {
            if kind == "B" && ids.isEmpty {
                for (i, address) in addresses.enumerated() {
                    let result = try client.requestNow("workout.start", ["activityType": .string(i % 3 == 1 ? "cycling" : "running"),
                                                                         "devices": .array([.string(address)])])
                    guard let s = result.object("session")?.string("session") else {
                        throw BenchFailure("workout.start answered no session")
                    }
                    ids.append(s)
                }
            } else if kind == "A" && !ids.isEmpty {
                let sessions = try client.requestNow("workout.list").objects("sessions") ?? []
                let stats = sessions.compactMap { $0.object("statistics") }
                let counting = stats.filter { ($0.int("heartRateSamples") ?? 0) > 0 || $0["speedAverage"] != nil }.count
                let beats = stats.reduce(0) { $0 + ($1.int("heartRateSamples") ?? 0) }
                print("  daemon: \(sessions.count) sessions listed, \(counting) of them with counted samples "
                      + "(\(beats) heart-rate samples in all); discarding them")
                for id in ids { _ = try client.requestNow("workout.discard", ["session": .string(id)]) }
                ids = []
            }
            phases.append(try phase(pid, seconds: seconds, label: kind == "A" ? "A, no session" : "B, \(ids.count) sessions", log: log))
        }

        // Each B against the mean of the A phases beside it (a linear drift cancels out).
        var differences: [Double] = [], tickDifferences: [Double] = []
        for (i, kind) in plan.enumerated() where kind == "B" {
            let around = [i - 1, i + 1].filter { $0 < plan.count && plan[$0] == "A" }
            guard !around.isEmpty else { continue }
            differences.append(phases[i].schedPerHour - around.map { phases[$0].schedPerHour }.reduce(0, +) / Double(around.count))
            tickDifferences.append(phases[i].ticksPerHour - around.map { phases[$0].ticksPerHour }.reduce(0, +) / Double(around.count))
        }
        let mean = { (v: [Double]) in v.isEmpty ? Double.nan : v.reduce(0, +) / Double(v.count) }
        let added = mean(differences), addedTicks = mean(tickDifferences)
        let baseNanos = mean(zip(plan, phases).filter { $0.0 == "A" }.map(\.1.schedPerHour))
        let withNanos = mean(zip(plan, phases).filter { $0.0 == "B" }.map(\.1.schedPerHour))
        let aValues = zip(plan, phases).filter { $0.0 == "A" }.map(\.1.schedPerHour)
        print(String(format: "  daemon: added by 100 sessions: %+.2f CPU s/h by schedstat (%+.4f %% of a core), %+.2f s/h by /proc ticks "
                     + "(±%.1f s/h tick resolution per phase); the A phases alone spread over %.2f s/h", added, added / 36, addedTicks,
                     0.02 / Double(seconds) * 3600, (aValues.max() ?? 0) - (aValues.min() ?? 0)))
        return [
            BenchFigure(section: section, name: "daemon CPU, 100 simulated sensors, no session", unit: "CPU s/hour",
                        ours: baseNanos, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon CPU, 100 simulated sensors, 100 sessions", unit: "CPU s/hour",
                        ours: withNanos, higherIsBetter: false),
            BenchFigure(section: section, name: "100 sessions at 1 Hz: CPU added (shipped strapd)", unit: "% of one core",
                        ours: added / 36, higherIsBetter: false),
        ]
    }

    /// The simulator's events for `sensors` devices over `seconds`, as a capture whose wall
    /// times start at `from`; returns the devices' addresses.
    static func writeCapture(_ path: String, sensors: Int, seconds: Double, from wall: Millis) throws -> [String] {
        var simulation = Simulation(count: sensors, seed: 42, dropouts: .none)
        let addresses = simulation.devices.map(\.identity.address)
        var text = ""
        text.reserveCapacity(Int(seconds) * sensors * 140)
        for (t, identity, event) in simulation.advance(to: seconds) {
            let time = ReceiveTime(wall: wall + Millis((t * 1000).rounded()), monotonic: t)
            let e: SensorEvent = switch event {
            case let .notification(c, v): .notification(identity.address, c, v, time)
            case let .read(c, v): .read(identity.address, c, v, time)
            case .connected: .linkUp(identity.address, name: identity.name, time)
            case let .disconnected(r): .linkDown(identity.address, reason: r, time)
            }
            text += CaptureFormat.line(e)
            text += "\n"
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return addresses
    }

    nonisolated(unsafe) static var perfPhase = 0

    struct Phase {
        var ticksPerHour: Double
        var schedPerHour: Double
    }

    /// A 2 s settle, then `seconds` of CPU: utime+stime from /proc/PID/stat (10 ms ticks, all
    /// threads ever) and the sum of every thread's schedstat run time (ns, sampled each second).
    static func phase(_ pid: Int32, seconds: Int, label: String, log: String) throws -> Phase {
        sleep(2)
        var sched = ThreadRunTime()
        guard let cpu0 = DaemonFootprint.cpuSeconds(pid) else { throw DaemonFootprint.failure("strapd exited", log: log) }
        sched.sample(pid)
        let t0 = DecodeBench.now()
        // STRAP_BENCH_WL_PERF=DIR (a diagnosis aid; it perturbs the figure): `perf record` of the
        // daemon over each phase, into DIR/phase-N.data.
        var perf: Process?
        if let dir = getenv("STRAP_BENCH_WL_PERF").map({ String(cString: $0) }) {
            perfPhase += 1
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
            p.arguments = ["record", "-q", "-F", "4999", "-g", "-p", "\(pid)", "-o", "\(dir)/phase-\(perfPhase).data", "--",
                           "sleep", "\(seconds)"]
            try p.run()
            perf = p
        }
        defer { perf?.waitUntilExit() }
        for _ in 0..<seconds {
            sleep(1)
            sched.sample(pid)
        }
        guard let cpu1 = DaemonFootprint.cpuSeconds(pid) else { throw DaemonFootprint.failure("strapd exited", log: log) }
        let elapsed = DecodeBench.now() - t0
        let p = Phase(ticksPerHour: (cpu1 - cpu0) / elapsed * 3600, schedPerHour: sched.seconds / elapsed * 3600)
        print(String(format: "  daemon: %@: %.2f CPU s/h by schedstat (%.4f %% of a core), %.2f s/h by ticks (%.2f s); load %@",
                     label, p.schedPerHour, p.schedPerHour / 36, p.ticksPerHour, cpu1 - cpu0, loadAverage()))
        return p
    }
}

/// Run time of a process's threads from `/proc/PID/task/*/schedstat` (nanoseconds, unlike the
/// 10 ms ticks of /proc/PID/stat), summed over a window. Sampled every second: a thread that
/// ends during the window loses at most its last second, one born in it counts from zero.
struct ThreadRunTime {
    private var first: [Int: UInt64] = [:]
    private var last: [Int: UInt64] = [:]

    var seconds: Double { Double(last.reduce(0) { $0 + ($1.value - first[$1.key]!) }) / 1e9 }

    mutating func sample(_ pid: Int32) {
        let baseline = last.isEmpty
        let dir = "/proc/\(pid)/task"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            guard let tid = Int(name),
                  let text = try? String(contentsOfFile: "\(dir)/\(name)/schedstat", encoding: .utf8),
                  let ns = text.split(separator: " ").first.flatMap({ UInt64($0) }) else { continue }
            if first[tid] == nil { first[tid] = baseline ? ns : 0 }
            last[tid] = ns
        }
    }
}
