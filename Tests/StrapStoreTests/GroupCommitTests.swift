import Foundation
import Testing
@testable import StrapStore
import StrapModel

@Suite struct GroupCommitTests {
    /// `sync = interval`: nobody calls sync, yet each append becomes durable (and visible to
    /// readers) by itself, including appends after an idle spell, when no sync is scheduled.
    @Test func intervalAppendsBecomeDurableWithoutAnExplicitSync() throws {
        let dir = TempDir("interval")
        let store = try Store.open(config(dir, sync: .interval(0.02)))
        defer { store.close() }
        for round in 1...3 {
            let first = try store.appendBatch(Fixtures.heartRate(count: 10, start: Fixtures.t0 + Millis(round) * 60_000, offset: round * 10))
            var waited = 0
            while store.latestAnchor < first + 9, waited < 500 { usleep(10_000); waited += 1 }
            #expect(store.latestAnchor == first + 9, "round \(round): durable up to \(store.latestAnchor), wrote \(first)...\(first + 9)")
            usleep(100_000)  // idle: the next append must arm a new sync
        }
    }

    /// An append after the interval has passed is synced on the appending thread (durable on
    /// return); with `deferSync` (the ingest thread in a run of notifications) the sync is the
    /// syncer thread's, still within the interval.
    @Test func aDeferredSyncIsLeftToTheSyncerAndStillComesWithinTheInterval() throws {
        let dir = TempDir("deferred")
        let store = try Store.open(config(dir, sync: .interval(1)))
        defer { store.close() }
        let first = try store.appendBatch(Fixtures.heartRate(count: 10, start: Fixtures.t0))
        #expect(store.latestAnchor == first + 9, "synced on the appending thread")
        usleep(1_100_000)  // the interval passes: the next append's sync is due
        let second = try store.appendBatches([Fixtures.heartRate(count: 5, start: Fixtures.t0 + 60_000, offset: 10)], deferSync: true)
        #expect(store.latestAnchor == first + 9, "a deferred sync ran on the appending thread")
        var waited = 0
        while store.latestAnchor < second + 4, waited < 1000 { usleep(10_000); waited += 1 }
        #expect(store.latestAnchor == second + 4, "the syncer did not sync the deferred append")
    }

    /// Several threads appending with `sync = always`: every append returns durable anchors,
    /// anchors are unique and dense, and a reader sees each one as soon as append returned.
    @Test func concurrentAlwaysAppendersAreDurableOnReturn() async throws {
        let dir = TempDir("group")
        let store = try Store.open(config(dir, sync: .always))
        let writers = 4, rounds = 60
        let returned = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for w in 0..<writers {
                group.addTask {
                    var mine: [UInt64] = []
                    for r in 0..<rounds {
                        let batch = Fixtures.heartRate(count: 1 + (r % 5), start: Fixtures.t0 + Millis(w * 1_000_000 + r * 10) * 1000,
                                                       device: w % 2 == 0 ? Fixtures.strap : Fixtures.tickr)
                        let stored = try store.append(batch)
                        // Durable on return: an anchored reader must already see the last one.
                        let last = stored.last!.anchor
                        let seen = try store.anchored(anchor: last - 1, limit: 1)
                        if seen.added.first?.anchor != last { throw StrapError.internal("anchor \(last) not visible after append") }
                        mine += stored.map(\.anchor)
                    }
                    return mine
                }
            }
            var all: [UInt64] = []
            for try await part in group { all += part }
            return all
        }
        #expect(returned.count == Set(returned).count)
        #expect(returned.sorted() == Array(1...UInt64(returned.count)))
        store.close()
        let reopened = try Store.open(config(dir))
        #expect(reopened.latestAnchor == UInt64(returned.count))
    }
}
