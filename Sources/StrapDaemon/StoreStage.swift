import Dispatch
import StrapModel
import StrapOS
import StrapStore
import Synchronization

/// The store writer stage: group commit by queue draining. Batches that arrive while an
/// append is running are appended together by the next flush, so the batch size grows with
/// load and the store sees few, large appends.
///
/// Bounded both ways. While the store is healthy but behind, `enqueue` makes the ingest
/// queue wait until the backlog is below `lowWater` (back-pressure that ends in the
/// pipeline's counted drops at the door, never in silent loss). While the store fails
/// (disk full), ingest never waits — live streaming goes on — and samples wait in memory
/// up to `maxPending`, oldest dropped first and counted; the flush is retried every
/// `retryInterval`. Nothing already stored is touched.
///
/// The stage's state is confined to `confinement`, not to `queue`: `queue` only gives the
/// deferred work (a flush, a retry) a thread, and each of its blocks takes the lock. A sparse
/// batch is appended under the lock on the caller's thread, which through `queue.sync` cost
/// two allocations and ~2.5 k instructions per notification (docs/benchmarks.md).
public final class StoreStage: @unchecked Sendable {
    let store: Store
    let queue = DispatchQueue(label: "strapd.pipeline.store")
    /// Held around every use of the state below, whichever thread runs it.
    private let confinement = ConfinementLock()
    let maxPending: Int
    let highWater: Int
    let lowWater: Int
    let retryInterval: DispatchTimeInterval
    private let backlog = Atomic<Int>(0)
    private let failing = Atomic<Bool>(false)
    private let waiting = Atomic<Bool>(false)
    private let room = DispatchSemaphore(value: 0)
    /// Confined to `confinement`: batches as enqueued, appended together by the next flush
    /// without being copied into one array.
    private var pending: [[Sample]] = []
    private var pendingSamples = 0
    /// Batches the store has taken, handed back to the ingest queue (`reusableBuffer`), so
    /// that their samples are released on the thread that made them and the buffer is
    /// reused: released here, every sample's device and shared metadata had its reference
    /// count changed from two threads at once. Bounded by `maxFinished`.
    private let finished = Mutex<[[Sample]]>([])
    private let maxFinished = 4
    private var flushScheduled = false
    private var retryScheduled = false
    public private(set) var degraded: String?
    public private(set) var lostWhileDegraded = 0
    /// Called under `confinement` (on `queue` or the appending thread) when the stage becomes
    /// degraded or recovers; it must not call back into the stage synchronously.
    var onDegradedChange: (@Sendable (Health) -> Void)?
    /// Batches that come at least this long after the previous one are appended on the
    /// caller's thread (`appendHere`). At the default `sync_interval` (100 ms) such a batch is
    /// synced at once; with a longer interval it only arms the sync, a shorter one syncs it at
    /// once too: either way the caller waits for one append, never for a backlog.
    let sparseGap: UInt64 = 100_000_000
    /// Confined to the caller of `enqueue` (the ingest queue).
    private var lastEnqueue: UInt64 = 0
    private var syncsEveryAppend: Bool { store.config.sync == .always }
    /// Samples dropped (the oldest, beyond `maxPending`) since the current degradation began.
    private var lostAtDegradation = 0

    public enum Health: Sendable, Equatable {
        case degraded(String)
        /// The store took appends again: `written` held samples went in with the first one,
        /// `lost` were dropped while it could not (memory bound).
        case recovered(written: Int, lost: Int)
    }

    public init(store: Store, maxPending: Int = 200_000, highWater: Int = 100_000, lowWater: Int = 20_000,
                retryInterval: DispatchTimeInterval = .seconds(1)) {
        self.store = store
        self.maxPending = maxPending
        self.highWater = highWater
        self.lowWater = lowWater
        self.retryInterval = retryInterval
    }

    /// `callerIdle`: the ingest queue has nothing else in flight (it hands on because its last
    /// event is done, not in the middle of a burst).
    func enqueue(_ samples: [Sample], callerIdle: Bool = false) {
        let now = DispatchTime.now().uptimeNanoseconds
        let sparse = now &- lastEnqueue >= sparseGap
        lastEnqueue = now
        if backlog.add(samples.count, ordering: .relaxed).newValue == samples.count && (sparse || callerIdle && !syncsEveryAppend)
            && !failing.load(ordering: .relaxed) && appendHere(samples, deferSync: !sparse) {
            return
        }
        // Queued in order behind earlier batches; a sparse batch never overtakes one, since
        // it is appended here only when the backlog was empty (nothing still in flight).
        queue.async { [self] in
            confinement.withLock {
                pending.append(samples)
                pendingSamples += samples.count
                if pendingSamples > maxPending { dropOldest(pendingSamples - maxPending) }
                if !flushScheduled && !retryScheduled {
                    flushScheduled = true
                    queue.async { [self] in confinement.withLock { flush() } }
                }
            }
        }
        // The timeout re-checks the condition, so a wake-up lost to a race costs 20 ms, not a hang.
        while backlog.load(ordering: .relaxed) > highWater && !failing.load(ordering: .relaxed) {
            waiting.store(true, ordering: .relaxed)
            _ = room.wait(timeout: .now() + .milliseconds(20))
        }
    }

    /// A sparse batch (the first for `sparseGap`, with nothing pending) is appended on the
    /// caller's thread, under `confinement`: its sync is due at once anyway (the store syncs
    /// an append that comes an interval after the last on the appending thread), so the hop to
    /// a worker bought only a wake-up, and at sensor rates that was a fifth of an idle daemon's
    /// CPU (docs/benchmarks.md). So is a denser batch while the ingest queue has nothing else
    /// to do and the store does not sync every append (`sync = always`): the append is then a
    /// write into the page cache, and a hop per notification was the last worker wake-up on
    /// the notification path in the lab's profile. In a burst, or with `always`, batches hop
    /// as before, so the ingest queue never waits for the disk while it has work, and appends
    /// that queue up behind a sync go to the disk together. False when the batch was not taken.
    /// `deferSync`: a dense batch; its sync, even when due, is the syncer thread's.
    private func appendHere(_ samples: [Sample], deferSync: Bool) -> Bool {
        confinement.withLock {
            guard pending.isEmpty, !flushScheduled, !retryScheduled else { return false }
            pending.append(samples)
            pendingSamples = samples.count
            flush(deferSync: deferSync)
            return true
        }
    }

    private func flush(deferSync: Bool = false) {
        confinement.assertHeld()
        flushScheduled = false
        guard !pending.isEmpty else { return }
        do {
            try store.appendBatches(pending, deferSync: deferSync)
            let written = pendingSamples
            backlog.subtract(written, ordering: .relaxed)
            handBack()
            if degraded != nil {
                degraded = nil
                failing.store(false, ordering: .relaxed)
                onDegradedChange?(.recovered(written: written, lost: lostWhileDegraded - lostAtDegradation))
            }
        } catch {
            failing.store(true, ordering: .relaxed)
            if degraded == nil { lostAtDegradation = lostWhileDegraded }
            if degraded != error.description {
                degraded = error.description
                onDegradedChange?(.degraded(error.description))
            }
            retryScheduled = true
            queue.asyncAfter(deadline: .now() + retryInterval) { [self] in
                confinement.withLock {
                    retryScheduled = false
                    flush()
                }
            }
        }
        if waiting.load(ordering: .relaxed) && (backlog.load(ordering: .relaxed) <= lowWater || failing.load(ordering: .relaxed)) {
            waiting.store(false, ordering: .relaxed)
            room.signal()
        }
    }

    /// Appends whatever is pending now and makes it durable (SIGTERM, tests). On `queue`, so
    /// that batches still queued there (`enqueue`'s blocks) are pending by then.
    public func flushAndSync() throws {
        try queue.sync { try confinement.withLock { () throws(StrapError) in try appendPending() } }
        try store.sync()
    }

    /// Under `confinement`: `flushAndSync`'s append of everything pending.
    private func appendPending() throws(StrapError) {
        confinement.assertHeld()
        guard !pending.isEmpty else { return }
        try store.appendBatches(pending)
        backlog.subtract(pendingSamples, ordering: .relaxed)
        pending.removeAll()
        pendingSamples = 0
    }

    /// Counts the batches still queued on `queue` too (read behind them).
    public var pendingCount: Int { queue.sync { confinement.withLock { pendingSamples } } }

    /// Under `confinement`: the store took `pending`; up to `maxFinished` of its batches go back to the
    /// ingest queue, the rest (a backlog drained at once) are released here.
    private func handBack() {
        confinement.assertHeld()
        finished.withLock { f in
            while f.count < maxFinished, let batch = pending.popLast() { f.append(batch) }
        }
        // Capacity kept: the next turn's batch goes in without allocating an array for it.
        pending.removeAll(keepingCapacity: true)
        pendingSamples = 0
    }

    /// Under `confinement`: while degraded, the oldest samples beyond `maxPending` are dropped, counted.
    private func dropOldest(_ count: Int) {
        confinement.assertHeld()
        lostWhileDegraded += count
        backlog.subtract(count, ordering: .relaxed)
        pendingSamples -= count
        var excess = count
        while excess > 0, !pending.isEmpty {
            if pending[0].count <= excess {
                excess -= pending[0].count
                pending.removeFirst()
            } else {
                pending[0].removeFirst(excess)
                excess = 0
            }
        }
    }

    /// For the ingest queue's next turn: an emptied buffer the store is done with (its samples
    /// released here, on the caller's thread), or a new one.
    func reusableBuffer() -> [Sample] {
        // One batch taken out, the others (a flush that took several) released here under the
        // lock, and the shared array keeps its capacity: swapping it out for an empty one made
        // the store queue allocate a new one on every hand-back.
        guard var buffer = finished.withLock({ f -> [Sample]? in
            let last = f.popLast()
            if !f.isEmpty { f.removeAll(keepingCapacity: true) }
            return last
        }) else { return [] }
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }
}
