import Dispatch
import Glibc
import StrapOS
import Synchronization

/// `sync = interval`: one thread that sleeps until an append arms it, waits one interval and
/// syncs. A Dispatch timer (`asyncAfter`) for the same job went through libdispatch's timer
/// thread on every arm and every expiry — three thread wake-ups per sync where this costs two,
/// and at a handful of samples a second those wake-ups were most of an idle daemon's CPU.
final class IntervalSyncer: @unchecked Sendable {
    private let interval: DispatchTimeInterval
    let intervalNanos: Int64
    /// Set once by `start`, before the thread exists.
    private var sync: @Sendable () -> Void = {}
    /// Signalled by `arm` (when not already armed) and by `stop`.
    private let wake = DispatchSemaphore(value: 0)
    private let armed = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    init(interval seconds: Double) {
        intervalNanos = Int64(max(1_000_000, Int(seconds * 1e9)))
        interval = .nanoseconds(Int(intervalNanos))
    }

    func start(sync: @escaping @Sendable () -> Void) {
        self.sync = sync
        if !DetachedThread.spawn({ self.run() }) {
            // No thread: appends are still written; `close` (and explicit syncs) make them durable.
            stopped.store(true, ordering: .relaxed)
            exited.signal()
        }
    }

    /// Called after every append: the first one after a sync schedules the next.
    func arm() {
        if !armed.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// Ends the thread; with `wait`, returns once it has (a sync in progress finishes first).
    func stop(wait: Bool) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        if wait { exited.wait() }
    }

    private func run() {
        while true {
            wake.wait()
            if stopped.load(ordering: .acquiring) { break }
            // Sleeps the interval; `stop` cuts it short (no other signal comes while armed).
            _ = wake.wait(timeout: .now() + interval)
            if stopped.load(ordering: .acquiring) { break }
            // Cleared first: an append racing with this sync arms the next one.
            armed.store(false, ordering: .releasing)
            sync()
        }
        exited.signal()
    }
}
