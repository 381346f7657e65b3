import Foundation
import StrapModel
import StrapStore

/// `strap-bench fairness`: how long another client waits for `status` while one connection
/// pipelines thousands of expensive `statistics.collection` requests (1-minute intervals
/// over 19 days) without reading its replies, against the shipped strapd. The same daemon
/// is measured idle first, in the same run: the figure is the latency under load, the
/// idle latency is its yardstick (docs/benchmarks.md, issue 15 item 7).
enum FairnessBench: BenchSection {
    static let name = "fairness"
    static let summary = "status latency of a second client while another pipelines heavy statistics requests"

    static func run(quick: Bool) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  fairness: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        let days = 19, heavyRequests = quick ? 300 : 3000, probes = quick ? 40 : 100
        let run = try DaemonFootprint.freshRunDirectory("fair")
        defer { try? FileManager.default.removeItem(atPath: run) }
        let state = run + "/state"
        let (from, to) = try fill(state + "/store", days: days)
        let notify = try NotifyListener(path: run + "/notify.sock")
        let socket = run + "/fair.sock", log = run + "/fair.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--simulate=1", "--state-dir", state, "--socket", socket],
                                               notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 60) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let prober = try BenchSocketClient(socket: socket)
        let idle = try probe(prober, count: probes)

        // The heavy client: writes its requests as fast as the socket takes them and never
        // reads; the daemon stops reading it when its replies fill its buffer.
        let heavy = try BenchSocketClient(socket: socket)
        let params: [String: Any] = ["type": "heartRate", "options": ["average", "maximum"], "interval": ["minutes": 1],
                                     "from": RFC3339(from), "to": RFC3339(to), "timeZone": "UTC"]
        let one = try heavy.request("statistics.collection", params)
        print("  fairness: one statistics.collection: \((one["statistics"] as? [Any])?.count ?? 0) intervals in its first page, truncated \(one["truncated"] ?? "?")")
        // The writer blocks once the socket is full; only it touches `heavy` from now on.
        let job = HeavyWriter(client: heavy, params: params, count: heavyRequests)
        let writer = Thread { job.run() }
        writer.start()
        usleep(500_000)
        let loaded = try probe(prober, count: probes)
        let cpu = DaemonFootprint.cpuSeconds(daemon.processIdentifier)
        print(String(format: "  fairness: status p50/p99/max idle %.2f/%.2f/%.2f ms, under a %d-request pipeline %.2f/%.2f/%.2f ms "
                     + "(daemon CPU %.1f s so far; load %@)", idle.p50, idle.p99, idle.max, heavyRequests,
                     loaded.p50, loaded.p99, loaded.max, cpu ?? -1, loadAverage()))
        return [
            BenchFigure(section: name, name: "status p99 from a second client, idle", unit: "ms", ours: idle.p99, higherIsBetter: false),
            BenchFigure(section: name, name: "status p99 from a second client while one pipelines \(heavyRequests) statistics.collection (1 min × \(days) d)",
                        unit: "ms", ours: loaded.p99, higherIsBetter: false),
            BenchFigure(section: name, name: "status max from a second client under that pipeline", unit: "ms", ours: loaded.max,
                        higherIsBetter: false),
        ]
    }

    struct HeavyWriter: @unchecked Sendable {
        let client: BenchSocketClient
        let params: [String: Any]
        let count: Int
        func run() { for _ in 0..<count { guard (try? client.send("statistics.collection", params)) != nil else { return } } }
    }

    static func RFC3339(_ millis: Millis) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    /// One heart rate every 10 s for `days`, ending now.
    static func fill(_ directory: String, days: Int) throws -> (Millis, Millis) {
        let store = try Store.open(StoreConfig(directory: directory, sync: .none))
        defer { store.close() }
        let end = Millis(Date().timeIntervalSince1970 * 1000) / 60_000 * 60_000
        let start = end - Millis(days) * 86_400_000
        let device = Device(id: "5E:1A:00:00:FA:00", address: "5E:1A:00:00:FA:00", name: "fairness strap")
        var batch: [Sample] = []
        var t = start
        while t < end {
            batch.append(Sample(type: .heartRate, value: Double(60 + (t / 10_000) % 90), start: t, end: t, device: device))
            if batch.count == 10_000 { _ = try store.appendBatch(batch); batch.removeAll(keepingCapacity: true) }
            t += 10_000
        }
        _ = try store.appendBatch(batch)
        try store.sync()
        return (start, end)
    }

    /// `count` status round trips, 20 ms apart: p50, p99 and max in milliseconds.
    static func probe(_ client: BenchSocketClient, count: Int) throws -> (p50: Double, p99: Double, max: Double) {
        var ms: [Double] = []
        for _ in 0..<count {
            let t = DecodeBench.now()
            let r = try client.request("status")
            guard r["version"] != nil else { throw BenchFailure("status without a version: \(r)") }
            ms.append((DecodeBench.now() - t) * 1000)
            usleep(20_000)
        }
        ms.sort()
        return (ms[ms.count / 2], ms[min(ms.count - 1, Int(Double(ms.count) * 0.99))], ms.last!)
    }
}
