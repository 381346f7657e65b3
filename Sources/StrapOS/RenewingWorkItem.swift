import Dispatch

/// A `queue.sync` on the notification path takes a work item made once instead of a closure:
/// Swift on Linux turns a closure passed to `sync` into a new heap block each time, two
/// allocations and about a third of the hop's instructions (docs/benchmarks.md, "Instructions
/// and allocations per notification"); a work item's block is made when the item is. The
/// turn runs as before, on the calling thread when the queue is idle, so latency and
/// confinement do not change. Used by the bus reader's turn and the live fan-out's.
///
/// Renewed after `maximumUses` turns: libdispatch counts a work item's runs in 32 bits and
/// takes the count coming back to one for a first run (it leaves the item's group again, which
/// traps), so one item must not run 2³² times. Not thread-safe: its owner keeps it in a lock
/// or on one thread.
public struct RenewingWorkItem {
    public let maximumUses: Int
    private var queue: DispatchQueue?
    private var current: DispatchWorkItem?
    public private(set) var uses = 0

    public init(maximumUses: Int = 1 << 24) {
        precondition(maximumUses > 0)
        self.maximumUses = maximumUses
    }

    /// The item for `queue`: the one made before, or one from `make` for a first use, another
    /// queue, or once `maximumUses` turns have taken the current one.
    public mutating func item(on queue: DispatchQueue, _ make: () -> DispatchWorkItem) -> DispatchWorkItem {
        if let current, self.queue === queue, uses < maximumUses {
            uses += 1
            return current
        }
        let item = make()
        self.queue = queue
        current = item
        uses = 1
        return item
    }
}
