import AllocationCounter
import Foundation
import StrapKit
import StrapModel
import StrapStore
import Synchronization

/// `strap-bench client`: StrapKit, the one client of strapd's socket, against the shipped strapd:
/// anchored catch-up rate over a store of heart rates through the typed query beside StrapKit's
/// own generic layer (`request`, a parsed `JSONValue` tree per page) and the Python client,
/// heap allocations per sample in the typed catch-up (its reader thread and decode included),
/// and how much later than a consumer on StrapKit's reader thread a sample reaches the default
/// consumer on the cooperative pool (both follow the same daemon at once; the figure is the
/// difference per sample). There is no hand-written raw client to compare with (one client:
/// docs/benchmarks.md, `strap-bench client`).
enum ClientBench: BenchSection {
    static let name = "client"
    static let summary = "StrapKit: anchored catch-up (typed vs its generic request), follow latency of its consumers, allocations per sample"

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
        let store = try StrapStore.connected(socket)
        defer { store.close() }
        let generic = try blocking { try await genericCatchUp(store) }
        let kit = try blocking { try await kitCatchUp(store) }
        allocation_counter_enable(1)
        let before = allocation_counter_count()
        let counted = try blocking { try await kitCatchUp(store) }
        let allocations = Double(allocation_counter_count() - before) / Double(counted.samples)
        allocation_counter_enable(0)
        print(String(format: "  client: %d heart rates stored; catch-up StrapKit AnchoredQuery %.0f samples/s (%d), StrapKit request() "
                     + "(JSONValue tree) %.0f samples/s (%d), %.2f× it; AnchoredQuery %.4f heap allocations/sample", stored, kit.rate,
                     kit.samples, generic.rate, generic.samples, kit.rate / generic.rate, allocations))

        let python = try pythonCatchUp(socket: socket, samples: min(stored - 1_000, quick ? 200_000 : 1_000_000))
        if let python {
            let rounds = python.rounds.map { String(format: "%.0f", $0) }.joined(separator: ", ")
            print(String(format: "  client: Python (strapd package, anchored(follow=True), stdlib json) %.0f samples/s", python.median)
                  + " (rounds \(rounds)), " + String(format: "%.1f%% of StrapKit", 100 * python.median / kit.rate))
        }

        // Follow: two phases against the same reference (a second store whose consumer runs on
        // its reader thread, the earliest a StrapKit caller can have a sample), then the bare
        // thread hops.
        let phase = quick ? 5.0 : 15.0
        let reference = try StrapStore.connected(socket)
        defer { reference.close() }
        let pair = try followLatency(reference: reference, other: store, onReader: true, seconds: phase)
        print(String(format: "  client: follow, a second StrapKit consumer on its reader thread after the first (the method's own spread), "
                     + "over %d samples: p50 %.1f µs, p99 %.1f µs", pair.count, pair.p50 * 1e6, pair.p99 * 1e6))
        let pooled = try followLatency(reference: reference, other: store, onReader: false, seconds: phase)
        print(String(format: "  client: follow, StrapKit's default consumer (cooperative pool) after a consumer on its reader thread, "
                     + "over %d samples: p50 %.1f µs, p99 %.1f µs", pooled.count, pooled.p50 * 1e6, pooled.p99 * 1e6))
        let floor = try HopFloor.measure(seconds: quick ? 3 : 10)
        print(String(format: "  client: bare floor over %d pings: socketpair write to reader thread p50 %.1f / p99 %.1f µs; "
                     + "reader thread to a task (AsyncStream) p50 %.1f / p99 %.1f µs", floor.count,
                     floor.wake.p50 * 1e6, floor.wake.p99 * 1e6, floor.hop.p50 * 1e6, floor.hop.p99 * 1e6))
        var figures = [
            BenchFigure(section: name, name: "anchored catch-up, StrapKit AnchoredQuery (\(kit.samples) samples, pages of 100000)", unit: "samples/s",
                        ours: kit.rate, peer: "StrapKit request(), JSONValue tree", peerValue: generic.rate, higherIsBetter: true),
            BenchFigure(section: name, name: "StrapKit catch-up heap allocations per sample", unit: "allocations", ours: allocations,
                        higherIsBetter: false),
            BenchFigure(section: name, name: "follow latency, a second StrapKit consumer on its reader thread after the first, p99 (the measurement's spread)",
                        unit: "µs", ours: pair.p99 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "follow latency the cooperative pool adds over StrapKit's reader thread (store.executor), p50",
                        unit: "µs", ours: pooled.p50 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "follow latency the cooperative pool adds over StrapKit's reader thread (store.executor), p99",
                        unit: "µs", ours: pooled.p99 * 1e6, peer: "second reader-thread consumer", peerValue: pair.p99 * 1e6,
                        higherIsBetter: false),
            BenchFigure(section: name, name: "bare floor: reader thread to a task (AsyncStream), p99", unit: "µs",
                        ours: floor.hop.p99 * 1e6, higherIsBetter: false),
            BenchFigure(section: name, name: "bare floor: socketpair write to a reader thread, p99", unit: "µs",
                        ours: floor.wake.p99 * 1e6, higherIsBetter: false),
        ]
        if let python {
            figures.append(BenchFigure(section: name, name: "anchored catch-up, Python client (follow, stdlib json)", unit: "samples/s",
                                       ours: python.median, peer: "StrapKit", peerValue: kit.rate, higherIsBetter: true))
        }
        return figures
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

    /// The same pages through StrapKit's generic layer, `request` (what a caller of an operation
    /// without a type gets): each page parsed into a `JSONValue` tree, a sample counted when its
    /// item has a numeric value.
    static func genericCatchUp(_ store: StrapStore) async throws -> (rate: Double, samples: Int) {
        var anchor: Int64 = 0, samples = 0
        let t0 = DecodeBench.now()
        while true {
            let page = try await store.request("samples.anchored", ["types": .array([.string("heartRate")]), "anchor": .int(anchor),
                                                                    "limit": .int(100_000)])
            let added = page.objects("added") ?? []
            if added.isEmpty { break }
            samples += added.filter { $0.double("value") != nil }.count
            guard let next = page.int("anchor") else { throw BenchFailure("a page without its anchor") }
            anchor = Int64(next)
        }
        return (Double(samples) / (DecodeBench.now() - t0), samples)
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

    /// Per anchor, when a consumer had it.
    final class TimeTable: Sendable { let times = Mutex<[Int: Double]>([:]) }

    /// `other` and `reference` (its consumer on its reader thread) follow every sample from the
    /// store's end for `seconds`, each on its own connection; per anchor, when `other`'s consumer
    /// (on its reader thread or the cooperative pool) had it minus when `reference`'s had it.
    static func followLatency(reference: StrapStore, other: StrapStore, onReader: Bool, seconds: Double) throws
        -> (p50: Double, p99: Double, count: Int) {
        guard let from = try reference.requestNow("status").object("store")?.int("latestAnchor") else {
            throw BenchFailure("status without latestAnchor")
        }
        let referenceTimes = TimeTable(), otherTimes = TimeTable()
        let deadline = DecodeBench.now() + seconds
        try blocking {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await follow(reference, from: UInt64(from), onReader: true, until: deadline, into: referenceTimes) }
                group.addTask { try await follow(other, from: UInt64(from), onReader: onReader, until: deadline, into: otherTimes) }
                try await group.waitForAll()
            }
        }
        let seen = referenceTimes.times.withLock { $0 }
        var deltas = otherTimes.times.withLock { $0 }.compactMap { anchor, t in seen[anchor].map { t - $0 } }
        guard !deltas.isEmpty else { throw BenchFailure("no sample followed by both consumers") }
        if deltas.count < 20 { print("  client: only \(deltas.count) samples followed by both") }
        deltas.sort()
        return (deltas[deltas.count / 2], deltas[min(deltas.count - 1, Int(Double(deltas.count) * 0.99))], deltas.count)
    }

    /// Follows from `from` until `deadline`: per anchor, when the consumer had it.
    static func follow(_ store: StrapStore, from: UInt64, onReader: Bool, until deadline: Double, into table: TimeTable) async throws {
        let body: @Sendable () async throws -> Void = {
            var first = true
            for try await update in AnchoredQuery(anchor: from).results(for: store) {
                let t = DecodeBench.now()
                // The first page is a reply, not follow events: left out on both sides.
                if first { first = false; continue }
                table.times.withLock { times in for item in update.added { times[Int(item.anchor)] = t } }
                if t >= deadline { break }
            }
        }
        if onReader { try await withTaskExecutorPreference(store.executor) { try await body() } } else { try await body() }
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
