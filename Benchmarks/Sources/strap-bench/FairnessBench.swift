import Foundation
import StrapKit
import StrapModel
import StrapStore

/// `strap-bench fairness`: how long another client waits for `status` while one connection
/// keeps StrapKit's window full of expensive `statistics.collection` requests (1-minute
/// intervals over 19 days), thousands in all, against the shipped strapd. The same daemon
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
        let prober = try StrapStore.connected(socket)
        let idle = try probe(prober, count: probes)

        // The heavy client, through StrapKit as every client is: one connection kept full with
        // StrapKit's window of requests in flight (31; strapd works on up to 32 of a connection
        // at once) until all are answered. StrapKit reads every reply as it comes, so unlike a
        // client that never reads, the daemon never stops on its full socket buffer.
        let heavy = try StrapStore.connected(socket)
        let params: JSONObject = ["type": .string("heartRate"), "options": .array([.string("average"), .string("maximum")]),
                                  "interval": .object(["minutes": .int(1)]), "from": .string(RFC3339(from)),
                                  "to": .string(RFC3339(to)), "timeZone": .string("UTC")]
        let one = try heavy.requestNow("statistics.collection", params)
        let intervals = if case .array(let items)? = one["statistics"] { items.count } else { 0 }
        print("  fairness: one statistics.collection: \(intervals) intervals in its first page, truncated \(one["truncated"].map(JSONWriter.string) ?? "?")")
        let pipeline = Task.detached { [heavy] in
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<heavyRequests { group.addTask { _ = try? await heavy.request("statistics.collection", params) } }
            }
        }
        // Closing the store fails the requests still waiting for a slot.
        defer { heavy.close(); pipeline.cancel() }
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

    /// `count` status round trips through StrapKit (`daemonVersion`, which is `status`), 20 ms
    /// apart: p50, p99 and max in milliseconds. Timed inside the task, so the figure is what a
    /// StrapKit caller waits (StrapKit's own work included), not the bench's bridge to it.
    static func probe(_ client: StrapStore, count: Int) throws -> (p50: Double, p99: Double, max: Double) {
        var ms = try ClientBench.blocking { [client] in
            var times: [Double] = []
            for _ in 0..<count {
                let t = DecodeBench.now()
                _ = try await client.daemonVersion()
                times.append((DecodeBench.now() - t) * 1000)
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            return times
        }
        ms.sort()
        return (ms[ms.count / 2], ms[min(ms.count - 1, Int(Double(ms.count) * 0.99))], ms.last!)
    }
}
