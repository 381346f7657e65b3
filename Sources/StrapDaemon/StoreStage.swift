import Dispatch
import StrapModel
import StrapStore

/// The store writer stage: group commit by queue draining. Batches that arrive while an
/// append is running are appended together by the next flush, so the batch size grows with
/// load and the store sees few, large appends.
///
/// Disk full (or any store failure) does not stop ingest: samples wait in memory, up to
/// `maxPending`, and the flush is retried every `retryInterval`; `degraded` says why. Nothing
/// already stored is touched.
final class StoreStage: @unchecked Sendable {
    let store: Store
    let queue = DispatchQueue(label: "strapd.pipeline.store")
    let maxPending: Int
    let retryInterval: DispatchTimeInterval
    /// Confined to `queue`.
    private var pending: [Sample] = []
    private var flushScheduled = false
    private var retryScheduled = false
    private(set) var degraded: String?
    private(set) var lostWhileDegraded = 0
    /// Called on `queue` when the stage becomes degraded (message) or recovers (nil).
    var onDegradedChange: (@Sendable (String?) -> Void)?

    init(store: Store, maxPending: Int = 200_000, retryInterval: DispatchTimeInterval = .seconds(1)) {
        self.store = store
        self.maxPending = maxPending
        self.retryInterval = retryInterval
    }

    func enqueue(_ samples: [Sample]) {
        queue.async { [self] in
            pending += samples
            if pending.count > maxPending {
                // Bounded even when the disk stays full: the oldest unstored samples go first.
                lostWhileDegraded += pending.count - maxPending
                pending.removeFirst(pending.count - maxPending)
            }
            if !flushScheduled && !retryScheduled {
                flushScheduled = true
                queue.async { [self] in flush() }
            }
        }
    }

    private func flush() {
        flushScheduled = false
        guard !pending.isEmpty else { return }
        do {
            try store.appendBatch(pending)
            pending.removeAll(keepingCapacity: true)
            if degraded != nil {
                degraded = nil
                onDegradedChange?(nil)
            }
        } catch {
            if degraded == nil || degraded != error.description {
                degraded = error.description
                onDegradedChange?(error.description)
            }
            retryScheduled = true
            queue.asyncAfter(deadline: .now() + retryInterval) { [self] in
                retryScheduled = false
                flush()
            }
        }
    }

    /// Appends whatever is pending now and makes it durable (SIGTERM, tests).
    func flushAndSync() throws {
        try queue.sync {
            if !pending.isEmpty {
                try store.appendBatch(pending)
                pending.removeAll()
            }
        }
        try store.sync()
    }

    var pendingCount: Int { queue.sync { pending.count } }
}
