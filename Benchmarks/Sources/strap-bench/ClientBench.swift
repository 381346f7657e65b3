import AllocationCounter
import Foundation
import StrapKit
import StrapModel
import StrapStore
import Synchronization

/// `strap-bench client`: StrapKit beside the raw socket client (`BenchSocketClient`, NDJSON
/// and JSONSerialization, as a script would be) in the same run, against the shipped strapd:
/// anchored catch-up rate over a store of heart rates, the follow latency StrapKit adds (both
/// follow the same daemon at once; the figure is the difference per sample), and heap
/// allocations per sample in StrapKit's catch-up (its reader thread and decode included).
enum ClientBench: BenchSection {
    static let name = "client"
    static let summary = "StrapKit vs the raw socket client: anchored catch-up, follow latency added, allocations per sample"

    static func run(quick: Bool) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  client: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        let days = quick ? 3 : 24  // one heart rate a second
        let run = try DaemonFootprint.freshRunDirectory("kit")
        defer { try? FileManager.default.removeItem(atPath: run) }
        let state = run + "/state"
        let stored = try fill(state + "/store", days: days)
        let notify = try NotifyListener(path: run + "/notify.sock")
        let socket = run + "/kit.sock", log = run + "/kit.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--simulate=12", "--state-dir", state, "--socket", socket],
                                               notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 120) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }

        // Catch-up: pages of the protocol's largest limit from anchor 0, one page held at a time.
        let raw = try rawCatchUp(socket: socket)
        let ceiling = try bytesCatchUp(socket: socket)
        print(String(format: "  client: the daemon's pages read as bytes alone (no JSON decoding): %.0f samples/s", ceiling))
        let store = StrapStore(socket: socket)
        defer { store.close() }
        let kit = try blocking { try await kitCatchUp(store) }
        allocation_counter_enable(1)
        let before = allocation_counter_count()
        let counted = try blocking { try await kitCatchUp(store) }
        let allocations = Double(allocation_counter_count() - before) / Double(counted.samples)
        allocation_counter_enable(0)
        print(String(format: "  client: %d heart rates stored; catch-up raw %.0f samples/s (%d), StrapKit %.0f samples/s (%d), %.1f%% of raw; "
                     + "StrapKit %.4f heap allocations/sample", stored, raw.rate, raw.samples, kit.rate, kit.samples,
                     100 * kit.rate / raw.rate, allocations))

        let python = try pythonCatchUp(socket: socket, samples: min(stored - 1_000, quick ? 200_000 : 1_000_000))
        if let python {
            let rounds = python.rounds.map { String(format: "%.0f", $0) }.joined(separator: ", ")
            print(String(format: "  client: Python (strapd package, anchored(follow=True), stdlib json) %.0f samples/s", python.median)
                  + " (rounds \(rounds)), " + String(format: "%.1f%% of StrapKit, %.1f%% of the bytes ceiling", 100 * python.median / kit.rate,
                                                     100 * python.median / ceiling))
        }

        // Follow: three phases against the same raw reader, then the bare thread hops.
        let phase = quick ? 5.0 : 15.0
        let pair = try followLatency(socket: socket, seconds: phase, other: .raw)
        print(String(format: "  client: follow, a second raw client after the first (the method's own spread), over %d samples: p50 %.1f µs, p99 %.1f µs",
                     pair.count, pair.p50 * 1e6, pair.p99 * 1e6))
        let added = try followLatency(socket: socket, seconds: phase, other: .kit(store, onReader: false))
        print(String(format: "  client: follow, StrapKit's consumer (cooperative pool) after the raw client read the line, over %d samples: p50 %.1f µs, p99 %.1f µs",
                     added.count, added.p50 * 1e6, added.p99 * 1e6))
        let onReader = try followLatency(socket: socket, seconds: phase, other: .kit(store, onReader: true))
        print(String(format: "  client: follow, StrapKit's consumer on store.executor after the raw client read the line, over %d samples: p50 %.1f µs, p99 %.1f µs",
                     onReader.count, onReader.p50 * 1e6, onReader.p99 * 1e6))
        let floor = try HopFloor.measure(seconds: quick ? 3 : 10)
        print(String(format: "  client: bare floor over %d pings: socketpair write to reader thread p50 %.1f / p99 %.1f µs; "
                     + "reader thread to a task (AsyncStream) p50 %.1f / p99 %.1f µs", floor.count,
                     floor.wake.p50 * 1e6, floor.wake.p99 * 1e6, floor.hop.p50 * 1e6, floor.hop.p99 * 1e6))
        var figures = [
            BenchFigure(section: name, name: "follow latency, a second raw client after the first, p99 (the measurement's spread)", unit: "µs",
                        ours: pair.p99 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "follow latency StrapKit (on store.executor) adds over the raw client, p50", unit: "µs",
                        ours: onReader.p50 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "follow latency StrapKit (on store.executor) adds over the raw client, p99", unit: "µs",
                        ours: onReader.p99 * 1e6, peer: "second raw client", peerValue: pair.p99 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "bare floor: reader thread to a task (AsyncStream), p99", unit: "µs",
                        ours: floor.hop.p99 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "bare floor: socketpair write to a reader thread, p99", unit: "µs",
                        ours: floor.wake.p99 * 1e6, higherIsBetter: false),
        ]
        if let python {
            figures.append(BenchFigure(section: name, name: "anchored catch-up, Python client (follow, stdlib json)", unit: "samples/s",
                                       ours: python.median, peer: "StrapKit", peerValue: kit.rate, higherIsBetter: true))
            figures.append(BenchFigure(section: name, name: "anchored catch-up, Python client against the bytes ceiling", unit: "samples/s",
                                       ours: python.median, peer: "bytes, no decoding", peerValue: ceiling, higherIsBetter: true))
        }
        return [
            BenchFigure(section: name, name: "anchored catch-up, StrapKit (\(kit.samples) samples, pages of 100000)", unit: "samples/s",
                        ours: kit.rate, peer: "raw NDJSON client", peerValue: raw.rate, higherIsBetter: true),
            BenchFigure(section: name, name: "anchored catch-up, StrapKit against the same pages read as bytes alone (the daemon's ceiling)",
                        unit: "samples/s", ours: kit.rate, peer: "bytes, no decoding", peerValue: ceiling, higherIsBetter: true),
            BenchFigure(section: name, name: "follow latency StrapKit adds over the raw client, p50", unit: "µs", ours: added.p50 * 1e6,
                        higherIsBetter: false),
            BenchFigure(section: name, name: "follow latency StrapKit adds over the raw client, p99", unit: "µs", ours: added.p99 * 1e6,
                        peer: "second raw client", peerValue: pair.p99 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "StrapKit catch-up heap allocations per sample", unit: "allocations", ours: allocations,
                        higherIsBetter: false),
        ] + figures
    }

    /// One heart rate a second for `days` before now.
    static func fill(_ directory: String, days: Int) throws -> Int {
        let store = try Store.open(StoreConfig(directory: directory, sync: .none))
        defer { store.close() }
        let end = Millis(Date().timeIntervalSince1970 * 1000) / 60_000 * 60_000 - 3_600_000
        let device = Device(id: "5E:1A:00:00:CB:00", address: "5E:1A:00:00:CB:00", name: "catch-up strap", manufacturer: "bench")
        var batch: [Sample] = []
        var t = end - Millis(days) * 86_400_000
        var count = 0
        while t < end {
            batch.append(Sample(type: .heartRate, value: Double(60 + (t / 1000) % 90), start: t, end: t, device: device))
            if batch.count == 10_000 { _ = try store.appendBatch(batch); count += batch.count; batch.removeAll(keepingCapacity: true) }
            t += 1000
        }
        _ = try store.appendBatch(batch)
        try store.sync()
        return count + batch.count
    }

    static func rawCatchUp(socket: String) throws -> (rate: Double, samples: Int) {
        let client = try BenchSocketClient(socket: socket, timeoutSeconds: 120)
        var anchor = 0, samples = 0
        let t0 = DecodeBench.now()
        while true {
            let page = try client.request("samples.anchored", ["types": ["heartRate"], "anchor": anchor, "limit": 100_000])
            let added = page["added"] as? [[String: Any]] ?? []
            if added.isEmpty { break }
            samples += added.filter { $0["value"] is NSNumber }.count
            anchor = page["anchor"] as? Int ?? anchor
        }
        return (Double(samples) / (DecodeBench.now() - t0), samples)
    }

    /// The same pages read as lines and not decoded (the anchor to continue from is the
    /// reply's last member): what strapd and the socket deliver, the ceiling of any client.
    static func bytesCatchUp(socket: String) throws -> Double {
        let client = try BenchSocketClient(socket: socket, timeoutSeconds: 120)
        var anchor = 0, samples = 0
        let t0 = DecodeBench.now()
        while true {
            try client.send("samples.anchored", ["types": ["heartRate"], "anchor": anchor, "limit": 100_000])
            let line = try client.readLine()
            // `...],"deleted":[],"anchor":N}}`
            guard let colon = line.lastIndex(of: UInt8(ascii: ":")), let next = Int(String(decoding: line[(colon + 1)...].dropLast(2), as: UTF8.self)) else {
                throw BenchFailure("a page without a final anchor")
            }
            var items = 0
            var i = line.startIndex
            let needle = Array(#""anchor":"#.utf8)
            while let found = line[i...].firstIndex(of: needle[0]) {
                if line[found...].starts(with: needle) { items += 1 }
                i = found + 1
            }
            if items <= 1 { break }
            samples += items - 1
            anchor = next
        }
        return Double(samples) / (DecodeBench.now() - t0)
    }

    static func kitCatchUp(_ store: StrapStore) async throws -> (rate: Double, samples: Int) {
        var anchor: UInt64 = 0, samples = 0
        let t0 = DecodeBench.now()
        while true {
            let page = try await AnchoredQuery(types: [.quantity(.heartRate)], anchor: anchor, limit: 100_000).result(for: store)
            if page.added.isEmpty { break }
            samples += page.added.count
            anchor = page.newAnchor
        }
        return (Double(samples) / (DecodeBench.now() - t0), samples)
    }

    /// Per anchor, when a follower had it.
    final class TimeTable: Sendable { let times = Mutex<[Int: Double]>([:]) }

    /// Who follows beside the raw client: a second raw client, or StrapKit's consumer (on the
    /// cooperative pool, or on the store's reader thread through `store.executor`).
    enum Follower { case raw, kit(StrapStore, onReader: Bool) }

    /// Both follow every sample from the store's end for `seconds`; per anchor, when the other
    /// follower had it minus when the raw client's reader had read its line.
    static func followLatency(socket: String, seconds: Double, other: Follower) throws -> (p50: Double, p99: Double, count: Int) {
        let status = try BenchSocketClient(socket: socket).request("status")
        guard let from = (status["store"] as? [String: Any])?["latestAnchor"] as? Int else { throw BenchFailure("status without latestAnchor") }
        let rawTimes = TimeTable(), otherTimes = TimeTable()
        let deadline = DecodeBench.now() + seconds
        let first = try rawFollower(socket: socket, from: from, deadline: deadline, into: rawTimes)
        first.start()
        switch other {
        case .raw:
            let second = try rawFollower(socket: socket, from: from, deadline: deadline, into: otherTimes)
            second.start()
            while !second.isFinished { usleep(10_000) }
        case .kit(let store, let onReader):
            try blocking {
                let follow: @Sendable () async throws -> Void = {
                    var first = true
                    for try await update in AnchoredQuery(anchor: UInt64(from)).results(for: store) {
                        let t = DecodeBench.now()
                        // The first page is a reply, not follow events: left out on both sides.
                        if first { first = false; continue }
                        otherTimes.times.withLock { times in for item in update.added { times[Int(item.anchor)] = t } }
                        if t >= deadline { break }
                    }
                }
                if onReader { try await withTaskExecutorPreference(store.executor) { try await follow() } } else { try await follow() }
            }
        }
        while !first.isFinished { usleep(10_000) }
        let rawSeen = rawTimes.times.withLock { $0 }
        var deltas = otherTimes.times.withLock { $0 }.compactMap { anchor, t in rawSeen[anchor].map { t - $0 } }
        guard !deltas.isEmpty else { throw BenchFailure("no sample followed by both clients") }
        if deltas.count < 20 { print("  client: only \(deltas.count) samples followed by both") }
        deltas.sort()
        return (deltas[deltas.count / 2], deltas[min(deltas.count - 1, Int(Double(deltas.count) * 0.99))], deltas.count)
    }

    /// A thread following from `from` with a raw client until `deadline`: per anchor, the time
    /// its line was read off the socket, before any decoding.
    static func rawFollower(socket: String, from: Int, deadline: Double, into table: TimeTable) throws -> Thread {
        // Only the thread touches the client.
        nonisolated(unsafe) let client = try BenchSocketClient(socket: socket)
        return Thread {
            guard (try? client.send("samples.anchored", ["anchor": from, "follow": true])) != nil else { return }
            while DecodeBench.now() < deadline, let line = try? client.readLine() {
                let t = DecodeBench.now()
                guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], o["event"] as? String == "added",
                      let data = o["data"] as? [String: Any], let anchor = data["anchor"] as? Int else { continue }
                table.times.withLock { $0[anchor] = t }
            }
        }
    }

    /// `clients/python/bench/catchup.py --socket`: the Python client's follow catch-up against
    /// this daemon, `samples` per round, three rounds; nil (with a line why) without Python.
    static func pythonCatchUp(socket: String, samples: Int) throws -> (median: Double, rounds: [Double])? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let venv = root.appendingPathComponent(".build/venv/bin/python").path
        let python = FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            print("  client: Python catch-up skipped: no \(python)")
            return nil
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [root.appendingPathComponent("clients/python/bench/catchup.py").path, "--socket", socket,
                       "--samples", String(samples), "--rounds", "3", "--json"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let rounds = o["follow"] as? [Double], !rounds.isEmpty else {
            throw BenchFailure("catchup.py failed (status \(p.terminationStatus)): \(String(decoding: data.suffix(300), as: UTF8.self))")
        }
        return (rounds.sorted()[rounds.count / 2], rounds)
    }

    /// Runs async work from the benchmark's synchronous sections.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        Task {
            let r: Result<T, any Error>
            do { r = .success(try await body()) } catch { r = .failure(error) }
            result.withLock { $0 = r }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}

extension ClientBench {
    /// `blocking` for work that cannot throw.
    static func blockingResult<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        // A body that cannot throw: the force is never reached with an error.
        try! blocking { await body() }
    }
}
