import Foundation
import Synchronization
import Testing
@testable import StrapStore
import StrapModel

@Suite struct FollowTests {
    @Test func followSwitchesFromCatchUpToLiveWithoutGapOrDuplicate() async throws {
        let dir = TempDir("follow")
        var cfg = config(dir, sync: .interval(0.002))
        cfg.segmentMaxItems = 10_000
        let store = try Store.open(cfg)
        try store.appendBatch(Fixtures.heartRate(count: 20_000))
        try store.sync()
        let total = 120_000
        let writer = Task.detached {
            var i = 20_000
            while i < total {
                let n = min(total - i, 250)
                try store.appendBatch(Fixtures.heartRate(count: n, start: Fixtures.t0 + Millis(i) * 1000, offset: i))
                i += n
            }
            try store.sync()
        }
        var seen: [UInt64] = []
        seen.reserveCapacity(total)
        var values = true
        for try await page in store.follow(types: [.quantity(.heartRate)], from: 0, limit: 1500) {
            for o in page.added {
                seen.append(o.anchor)
                if o.sample?.value != Double(60 + Int(o.anchor - 1) % 120) { values = false }
            }
            if seen.count >= total { break }
        }
        try await writer.value
        #expect(values)
        #expect(seen == Array(1...UInt64(total)))
        store.close()
    }

    @Test func followEndsWhenStoreCloses() async throws {
        let dir = TempDir("follow")
        let store = try Store.open(config(dir))
        try store.appendBatch(Fixtures.heartRate(count: 10))
        let reader = Task {
            var n = 0
            for try await page in store.follow() { n += page.added.count }
            return n
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        store.close()
        #expect(try await reader.value == 10)
    }

    @Test(arguments: [SyncPolicy.none, .always, .interval(3600)])
    func commitObserverIsCalledOncePerPublishedDurablePosition(_ sync: SyncPolicy) throws {
        let dir = TempDir("commits")
        let store = try Store.open(config(dir, sync: sync))
        defer { store.close() }
        let seen = Mutex<[UInt64]>([])
        let observation = store.observeCommits { latest in seen.withLock { $0.append(latest) } }
        try store.appendBatch(Fixtures.heartRate(count: 5))
        try store.appendBatch(Fixtures.heartRate(count: 3, offset: 5))
        try store.sync()
        try store.sync()
        // `interval` may sync the first append at once or with the second: one call per
        // position either way, never one for a sync that published nothing new.
        let expected = seen.withLock { $0 }
        if sync == .interval(3600) {
            #expect(expected == [8] || expected == [5, 8])
        } else {
            #expect(expected == [5, 8])
        }
        #expect(store.latestAnchor == 8)
        // A deletion is a commit too (its tombstone is what followers read next).
        let victim = try store.anchored(anchor: 0, limit: 1).added[0].uuid
        try store.delete(uuids: [victim])
        #expect(seen.withLock { $0 } == expected + [9])
        observation.cancel()
        try store.appendBatch(Fixtures.heartRate(count: 2, offset: 8))
        try store.sync()
        #expect(seen.withLock { $0 }.last == 9)
    }
}
