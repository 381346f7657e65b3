import Dispatch
import StrapOS
import Synchronization
import Testing

@Suite struct RenewingWorkItemTests {
    /// The work item is the same turn after turn, run each time on its queue, and replaced
    /// after its bound of uses or for another queue.
    @Test func theTurnItemIsReusedAndRenewedAfterItsBound() {
        final class Runs: Sendable { let count = Atomic(0) }
        let runs = Runs()
        let queue = DispatchQueue(label: "server"), other = DispatchQueue(label: "other")
        var turn = RenewingWorkItem(maximumUses: 3)
        var made = 0
        // Kept, so no item's address can be reused by a later one.
        var items: [DispatchWorkItem] = []
        for _ in 0..<7 {
            let item = turn.item(on: queue) {
                made += 1
                return DispatchWorkItem {
                    dispatchPrecondition(condition: .onQueue(queue))
                    runs.count.add(1, ordering: .relaxed)
                }
            }
            queue.sync(execute: item)
            items.append(item)
        }
        // Uses 1-3, 4-6 and 7: three items, each run on the queue every time it was taken.
        #expect(made == 3)
        #expect(runs.count.load(ordering: .relaxed) == 7)
        #expect(items[0] === items[1] && items[1] === items[2] && items[2] !== items[3])
        #expect(items[3] === items[5] && items[5] !== items[6])
        let moved = turn.item(on: other) { made += 1; return DispatchWorkItem {} }
        #expect(made == 4 && moved !== items[6] && turn.uses == 1)
    }
}
