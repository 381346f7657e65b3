import Foundation
import StrapKit
import StrapModel
import StrapStore
import StrapWorkout

/// Start-up to READY=1 of the shipped strapd over 10 M stored samples (10 devices at 1 Hz)
/// with 10 open workout sessions, one per device, each started about an hour before its
/// device's newest sample (one of them paused), so recovery re-feeds an hour of real history
/// into each. Same method as the pipeline section's start-up figure: spawn → READY=1, best of
/// 3, page cache warm. The same store without the sessions is timed too, for the difference.
enum WorkoutStartup {
    static let devices = 10

    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  startup: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        let samples = quick ? 1_000_000 : 10_000_000
        let root = makeTemporaryDirectory("strap-bench-wstartup")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let run = try DaemonFootprint.freshRunDirectory("ws")
        defer { try? FileManager.default.removeItem(atPath: run) }

        let sessionIDs = try prepare(root + "/state/store", samples: samples)
        let sessionsDir = root + "/state/store/sessions"
        try FileManager.default.moveItem(atPath: sessionsDir, toPath: sessionsDir + ".aside")
        let (bare, _) = try timeStartups(strapd, root: root, run: run, expectSessions: 0)
        try FileManager.default.removeItem(atPath: sessionsDir)
        try FileManager.default.moveItem(atPath: sessionsDir + ".aside", toPath: sessionsDir)
        let (withSessions, recovered) = try timeStartups(strapd, root: root, run: run, expectSessions: sessionIDs.count)
        let count = "\(samples / 1_000_000) M"
        print(String(format: "  startup: the sessions add %.1f ms (best %.1f ms without them, %.1f ms with)",
                     withSessions - bare, bare, withSessions))
        return [
            BenchFigure(section: section, name: "start-up to READY, 10 open sessions over \(count) stored samples", unit: "ms",
                        ours: withSessions, higherIsBetter: false),
            BenchFigure(section: section, name: "start-up to READY, same store without sessions", unit: "ms",
                        ours: bare, higherIsBetter: false),
            BenchFigure(section: section, name: "open sessions back after start-up (workout.list)", unit: "sessions",
                        ours: Double(recovered), higherIsBetter: true),
        ]
    }

    static func device(_ k: Int) -> Device {
        let a = String(format: "5E:1B:00:00:00:%02X", k)
        return Device(id: a, address: a, name: "Bench strap \(k)", manufacturer: "Polar", model: "H10")
    }

    /// Writes `samples` heart-rate samples, 10 devices at 1 Hz (each device a few ms after the
    /// previous), then opens the sessions through the real journal and an engine whose clock is
    /// inside the stored data's range. Returns the sessions' ids.
    static func prepare(_ directory: String, samples: Int) throws -> [UUID] {
        let t = DecodeBench.now()
        let store = try Store.open(StoreConfig(directory: directory, sync: .none))
        let devs = (0..<devices).map(device)
        let seconds = samples / devices
        var second = 0
        while second < seconds {
            let n = min(10_000, seconds - second)
            var batch: [Sample] = []
            batch.reserveCapacity(n * devices)
            for i in second..<(second + n) {
                for (k, d) in devs.enumerated() {
                    let v = 70 + 25 * sin(Double(i + 600 * k) / 3000) + Double(((i + k) &* 2_654_435_761) % 7)
                    batch.append(Sample(type: .heartRate, value: v.rounded(), start: StoreBench.t0 + Millis(i) * 1000 + Millis(k) * 7,
                                        device: d))
                }
            }
            try store.appendBatch(batch)
            second += n
        }
        try store.sync()
        print(String(format: "  startup: wrote %d samples (%d devices × %d s at 1 Hz) in %.1f s (%.0f MB on disk)", seconds * devices,
                     devices, seconds, DecodeBench.now() - t, Double(DaemonFootprint.directoryBytes(directory)) / 1e6))

        let newest = StoreBench.t0 + Millis(seconds - 1) * 1000
        let clock = WorkoutBuilderBench.Clock()
        var ids: [UUID] = []
        do {
            let journal = try WorkoutJournalFile(store: store)
            let engine = WorkoutEngine(journal: journal, profiles: { _ in SimulatedSamples.profile }, now: { clock.now })
            for k in 0..<devices {
                let start = newest - 3_600_000 + Millis(k) * 10_000
                clock.now = start
                let id = try engine.start(WorkoutConfiguration(activityType: .running, deviceIDs: [devs[k].id]), connectedDevices: []).id
                clock.now = start + 20 * 60_000
                try engine.lap(id)
                if k == devices - 1 {
                    clock.now = newest - 1_800_000
                    try engine.pause(id)
                }
                ids.append(id)
            }
            let states = engine.list().map(\.session.state.rawValue)
            print("  startup: \(ids.count) open sessions journaled (\(Set(states).sorted().map { s in "\(states.filter { $0 == s }.count) \(s)" }.joined(separator: ", ")))")
        }
        store.close()
        return ids
    }

    /// Best of 3 spawn → READY=1; after each READY, `workout.list` must show the open sessions.
    static func timeStartups(_ strapd: String, root: String, run: String, expectSessions: Int) throws -> (Double, Int) {
        var best = Double.infinity
        var all: [String] = []
        var recovered = 0
        for attempt in 1...3 {
            let notify = try NotifyListener(path: run + "/notify-\(attempt).sock")
            let log = run + "/ws\(attempt).log", socket = run + "/ws.sock"
            let start = monotonicNanos()
            let daemon = try DaemonFootprint.spawn(strapd, ["--simulate=4", "--state-dir", root + "/state", "--socket", socket],
                                                   notify: notify.path, log: log)
            let ready = notify.waitReady(seconds: 60)
            defer { DaemonFootprint.terminate(daemon); notify.close() }
            guard let ready else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
            let ms = Double(ready - start) / 1e6
            best = min(best, ms)
            all.append(String(format: "%.1f", ms))
            let sessions = try StrapStore.connected(socket).requestNow("workout.list").objects("sessions") ?? []
            let open = sessions.filter { ["running", "paused"].contains($0.object("session")?.string("state") ?? "") }
            let counted = open.map { $0.object("statistics")?.int("heartRateSamples") ?? 0 }
            let logged = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").components(separatedBy: "recovered (").count - 1
            if expectSessions > 0 {
                print("  startup: attempt \(attempt): \(open.count) open sessions listed after READY (\(logged) 'recovered' log lines), "
                      + "heart-rate samples re-fed per session: \(counted.map(String.init).joined(separator: " "))")
            }
            guard open.count == expectSessions else {
                throw BenchFailure("expected \(expectSessions) open sessions after start-up, strapd lists \(open.count)")
            }
            recovered = open.count
        }
        let what = expectSessions > 0 ? "with \(expectSessions) open sessions" : "without sessions"
        print("  startup: to READY \(what): \(all.joined(separator: ", ")) ms (best of 3 is the figure)")
        return (best, recovered)
    }
}
