import Foundation
import Testing
@testable import StrapStore
import StrapModel
import StrapSimulator

@Suite struct AnchoredTests {
    /// Only the most recently used sealed segments keep their detail in memory; the others
    /// read it again from their index files and answer exactly the same (issue 16, soak).
    @Test func sealedDetailsAreCachedBoundedAndReloadedTheSame() throws {
        let dir = TempDir()
        var config = StoreConfig(directory: dir.path, sync: .none)
        config.segmentMaxItems = 100
        config.sealedDetailCacheBytes = 2 << 10
        let store = try Store.open(config)
        defer { store.close() }
        for i in 0..<40 { _ = try store.append(Fixtures.heartRate(count: 100, start: Fixtures.t0 + Millis(i) * 100_000, offset: i)) }
        try store.seal()
        let options: StatisticsOptions = [.average, .maximum]
        let first = try readAll(store)
        let firstStats = try store.statistics(type: .heartRate, options: options, from: 0, to: Fixtures.t0 + 10_000_000)
        // Within the budget, and more than one detail but not every one is cached.
        #expect(store.shared.cachedSealedDetailBytes <= config.sealedDetailCacheBytes)
        #expect(store.shared.cachedSealedDetailCount > 1)
        #expect(store.status.segments > store.shared.cachedSealedDetailCount + 10)
        // Everything again, with most details evicted and read back from the index files.
        let again = try readAll(store)
        let againStats = try store.statistics(type: .heartRate, options: options, from: 0, to: Fixtures.t0 + 10_000_000)
        #expect(again.added.map(\.anchor) == first.added.map(\.anchor) && again.added.count == 4000)
        #expect(againStats.count == firstStats.count && againStats.average == firstStats.average && againStats.maximum == firstStats.maximum)
        #expect(store.status.damage.isEmpty, "\(store.status.damage)")
    }

    /// A sealed segment holds no descriptor: it is opened while a reader maps it. Before, every
    /// sealed segment kept one for good (issue 16's soak: one more descriptor per roll).
    @Test func sealedSegmentsHoldNoDescriptor() throws {
        let dir = TempDir()
        var config = StoreConfig(directory: dir.path, sync: .none)
        config.segmentMaxItems = 100
        func storeDescriptors() -> [String] {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
                .filter { $0.hasPrefix(dir.path) }
        }
        do {
            let store = try Store.open(config)
            for i in 0..<30 { _ = try store.append(Fixtures.heartRate(count: 100, start: Fixtures.t0 + Millis(i) * 100_000, offset: i)) }
            #expect(store.status.segments >= 30)
            #expect(try readAll(store, limit: 5000).added.count == 3000)
            // The lock and the open segment; nothing per sealed segment.
            #expect(storeDescriptors().count == 2, "\(storeDescriptors())")
            store.close()
        }
        let reopened = try Store.open(config)
        defer { reopened.close() }
        #expect(try readAll(reopened, limit: 5000).added.count == 3000)
        #expect(storeDescriptors().count == 2, "\(storeDescriptors())")
        #expect(reopened.status.damage.isEmpty, "\(reopened.status.damage)")
    }

    @Test func appendReopenRoundTrip() throws {
        let dir = TempDir()
        var samples = Fixtures.heartRate(count: 5000)
        samples[7].metadata = ["k": "v"]
        samples[8].value = 72.125
        samples[9].value = .pi
        samples[10].end = samples[10].start + 1500
        samples.append(Sample(type: .heartbeatSeries, value: 3, start: Fixtures.t0 + 5_000_000,
                              device: Fixtures.tickr, beats: [0.1, 0.9, 1.7]))
        samples.append(Sample(type: .cyclingSpeed, value: -0.0, start: Fixtures.t0 - 1, device: Fixtures.csc))
        let stored: [Sample]
        do {
            let store = try Store.open(config(dir, sync: .always))
            stored = try store.append(samples)
            store.close()
        }
        let store = try Store.open(config(dir))
        let all = try readAll(store, limit: 777)
        #expect(all.added.compactMap(\.sample) == stored)
        #expect(all.anchor == UInt64(samples.count))
        #expect(stored.map(\.anchor) == Array(1...UInt64(samples.count)))
        #expect(store.status.damage.isEmpty)
    }

    /// The store stage's path: batches appended together as one write, in order, without
    /// being joined first. Streams first seen in one batch are reused by the next; a foot
    /// pod's shared tag, a client's own metadata and a beat series alternate, so the encoder's
    /// reuse of the previous sample's extras bytes must follow every change.
    @Test func batchesAppendAsOneWriteInOrder() throws {
        let dir = TempDir()
        let running = SharedMetadata(["running": "true"])
        let speed = { (i: Int, tagged: Bool) in
            tagged ? Sample(type: .runningSpeed, value: Double(i), start: Fixtures.t0 + Millis(i) * 250, device: Fixtures.csc, metadata: running)
                : Sample(type: .runningSpeed, value: Double(i), start: Fixtures.t0 + Millis(i) * 250, device: Fixtures.csc, metadata: ["note": "\(i)"])
        }
        let batches: [[Sample]] = [
            Fixtures.heartRate(count: 5),
            [speed(0, true), speed(1, true), speed(2, false), speed(3, true),
             Sample(type: .heartbeatSeries, value: 2, start: Fixtures.t0 + 1000, device: Fixtures.tickr, beats: [0.25, 1.0]),
             speed(4, true), speed(5, false), speed(6, false)],
            [],
            Fixtures.heartRate(count: 3, start: Fixtures.t0 + 10_000, offset: 5) + [speed(7, true)],
        ]
        let expected = batches.flatMap { $0 }
        do {
            let store = try Store.open(config(dir, sync: .always))
            #expect(try store.appendBatches(batches) == 1)
            #expect(store.latestAnchor == UInt64(expected.count))
            #expect(try store.appendBatches([[], []]) == UInt64(expected.count) + 1, "nothing to append: the next anchor")
            store.close()
        }
        let store = try Store.open(config(dir))
        defer { store.close() }
        let read = try readAll(store).added.compactMap(\.sample)
        #expect(read.map(\.anchor) == Array(1...UInt64(expected.count)))
        #expect(read.map { "\($0.type) \($0.value) \($0.start) \($0.device.id) \($0.metadata) \($0.beats)" }
                == expected.map { "\($0.type) \($0.value) \($0.start) \($0.device.id) \($0.metadata) \($0.beats)" })
        #expect(store.status.damage.isEmpty)
    }

    @Test func pagingAgainstConcurrentWriterNeverSkipsOrRepeats() async throws {
        let dir = TempDir()
        var cfg = config(dir, sync: .interval(0.005))
        cfg.segmentMaxItems = 3000
        let store = try Store.open(cfg)
        let total = 60_000
        let writer = Task.detached {
            var i = 0
            while i < total {
                let n = min(total - i, Int.random(in: 1...400))
                try store.appendBatch(Fixtures.heartRate(count: n, start: Fixtures.t0 + Millis(i) * 1000, offset: i))
                i += n
            }
            try store.sync()
        }
        var seen: [UInt64] = []
        var anchor: UInt64 = 0
        while seen.count < total {
            let r = try store.anchored(types: [.quantity(.heartRate)], anchor: anchor, limit: Int.random(in: 1...700))
            #expect(r.anchor >= anchor)
            seen += r.added.map(\.anchor)
            for o in r.added {
                let s = try #require(o.sample)
                #expect(s.value == Double(60 + Int(s.anchor - 1) % 120))
            }
            anchor = r.anchor
            await Task.yield()
        }
        try await writer.value
        #expect(seen == Array(1...UInt64(total)))
        #expect(try store.anchored(anchor: anchor).added.isEmpty)
        store.close()
    }

    @Test func deletionByUUIDAndPredicateReachesAnchoredReaders() throws {
        let dir = TempDir()
        let store = try Store.open(config(dir, sync: .always))
        let stored = try store.append(Fixtures.heartRate(count: 100))
        let before = try readAll(store)
        #expect(before.added.count == 100)
        #expect(try store.delete(uuids: [stored[3].uuid, stored[4].uuid]) == 2)
        #expect(throws: StrapError.self) { try store.delete(uuids: [UUID()]) }
        let n = try store.delete(matching: .value(min: 170, max: nil))
        #expect(n == stored.filter { $0.value >= 170 && $0.anchor != 4 && $0.anchor != 5 }.count)
        let after = try store.anchored(anchor: before.anchor)
        #expect(after.added.isEmpty)
        #expect(Set(after.deleted.map(\.uuid)) == Set(stored.filter { $0.value >= 170 || $0.anchor == 4 || $0.anchor == 5 }.map(\.uuid)))
        #expect(Set(after.deleted.map(\.anchor)).count == after.deleted.count)
        let fresh = try readAll(store)
        #expect(fresh.added.count == 100 - after.deleted.count)
        #expect(try store.samples(matching: .all).count == fresh.added.count)
        store.close()
        let reopened = try Store.open(config(dir))
        #expect(try reopened.samples().count == fresh.added.count)
    }

    @Test func workoutsAreStoredObjectsAndPredicates() throws {
        let dir = TempDir()
        let store = try Store.open(config(dir, sync: .always))
        try store.append(Fixtures.heartRate(count: 600) + Fixtures.heartRate(count: 600, device: Fixtures.tickr))
        let w = try store.save(Workout(activityType: "running", locationType: .outdoor, start: Fixtures.t0 + 60_000,
                                       end: Fixtures.t0 + 120_000, deviceIDs: [Fixtures.strap.id]))
        let r = try store.anchored(types: [.workout])
        #expect(r.added == [.workout(w)])
        let inWorkout = try store.samples(matching: .workout(w.uuid))
        #expect(inWorkout.count == 60)
        #expect(inWorkout.allSatisfy { $0.device.id == Fixtures.strap.id })
        #expect(throws: StrapError.notFound("no workout \(UUID(uuid: (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1)))")) {
            try store.samples(matching: .workout(UUID(uuid: (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1))))
        }
    }

    @Test func randomStartAnchorsAcrossCheckpointsAndSegments() throws {
        let dir = TempDir()
        var cfg = config(dir)
        cfg.segmentMaxItems = 60_000
        let store = try Store.open(cfg)
        var rng = SystemRandomNumberGenerator()
        var expected: [Sample] = []
        var i = 0
        while i < 150_000 {
            // Mixed record sizes and interleaved streams, so chains and checkpoints get exercised.
            let n = Bool.random(using: &rng) ? 1 : Int.random(in: 2...900, using: &rng)
            var batch = Fixtures.heartRate(count: n, start: Fixtures.t0 + Millis(i) * 1000, offset: i)
            for k in batch.indices where (i + k) % 3 == 0 { batch[k].device = Fixtures.tickr }
            if i % 7 == 0 { batch[0].value = 1.0 / 3.0 }
            expected += try store.append(batch)
            i += n
        }
        store.close()
        let reopened = try Store.open(cfg)
        #expect(reopened.status.segments >= 3)
        for _ in 0..<150 {
            let a = UInt64.random(in: 0..<UInt64(expected.count), using: &rng)
            let r = try reopened.anchored(anchor: a, limit: 40)
            let want = Array(expected[Int(a)..<min(expected.count, Int(a) + 40)])
            if r.added.compactMap(\.sample) != want {
                Issue.record("from anchor \(a): got \(r.added.count) items, first \(String(describing: r.added.first?.anchor))")
                return
            }
        }
        #expect(try reopened.samples(matching: .device(.id, Fixtures.tickr.id)).count == expected.filter { $0.device == Fixtures.tickr }.count)
    }

    /// A workouts-only read steps over sample records (`LogCursor.skipsSamples`) and meets the
    /// same workouts and deletions, examining as far, from any anchor, as the decoding read:
    /// mixed record sizes and two streams (chains), workouts and tombstones between them,
    /// several segments (checkpoints), and a snapshot whose durable end cuts the log.
    @Test func aWorkoutsOnlyReadSkipsSamplesAndMeetsTheSameObjects() throws {
        let dir = TempDir()
        var cfg = config(dir)
        cfg.segmentMaxItems = 5_000
        let store = try Store.open(cfg)
        defer { store.close() }
        var rng = SimulationRandom(seed: 37)
        var i = 0
        var saved: [Sample] = []
        while i < 20_000 {
            let n = Int.random(in: 1...400, using: &rng)
            var batch = Fixtures.heartRate(count: n, start: Fixtures.t0 + Millis(i) * 1000, offset: i)
            for k in batch.indices where (i + k) % 3 == 0 { batch[k].device = Fixtures.tickr }
            saved += try store.append(batch)
            i += n
            if Int.random(in: 0..<4, using: &rng) == 0 {
                _ = try store.save(Workout(activityType: "cycling", locationType: .indoor, start: Fixtures.t0 + Millis(i) * 1000,
                                           end: Fixtures.t0 + Millis(i + 60) * 1000, deviceIDs: [Fixtures.strap.id]))
            }
            if Int.random(in: 0..<9, using: &rng) == 0, let victim = saved.randomElement(using: &rng) {
                _ = try? store.delete(uuids: [victim.uuid])
            }
        }
        let snap = store.shared.snapshot
        #expect(snap.segments.count >= 3)
        func read(from: UInt64, skipping: Bool) -> (items: [String], examined: UInt64) {
            var cursor = LogCursor(store, from: from, snapshot: snap)
            cursor.skipsSamples = skipping
            var items: [String] = []
            while let item = cursor.next() {
                switch item {
                case .sample: continue
                case .workout(let w): items.append("w\(w.anchor)")
                case let .deletion(a, target, code): items.append("d\(a):\(target):\(code)")
                }
            }
            return (items, cursor.lastExamined)
        }
        let everything = read(from: 1, skipping: false)
        #expect(everything.items.contains { $0.hasPrefix("w") } && everything.items.contains { $0.hasPrefix("d") })
        for from in [1, snap.durableNext - 1, snap.durableNext] + (0..<60).map({ _ in UInt64.random(in: 1..<snap.durableNext, using: &rng) }) {
            let decoded = read(from: from, skipping: false), skipped = read(from: from, skipping: true)
            #expect(skipped.items == decoded.items, "from \(from)")
            #expect(skipped.examined == decoded.examined, "from \(from)")
        }
        // Through the query: the same answer as filtering a full read.
        let workouts = try store.anchored(types: [.workout])
        let all = try readAll(store, limit: 100_000)
        #expect(workouts.added == all.added.filter { if case .workout = $0 { true } else { false } })
        #expect(workouts.deleted == all.deleted.filter { $0.type == .workout })
        #expect(workouts.anchor == all.anchor)
    }
}
