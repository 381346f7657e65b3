import Foundation
import Testing
@testable import StrapStore
import StrapModel

@Suite struct GroupCommitTests {
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
