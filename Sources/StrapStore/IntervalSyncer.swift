import Dispatch
import Glibc
import StrapOS
import Synchronization

/// `sync = interval`: one thread asleep on a one-shot timer that the first append after a
/// sync arms for one interval; when it expires the thread syncs. A Dispatch timer
/// (`asyncAfter`) for the same job went through libdispatch's timer thread on every arm and
/// every expiry (three thread wake-ups per sync), and a semaphore that started a timed sleep
/// cost two; arming a timerfd wakes nobody, so a sync costs the one wake-up that runs it.
/// At a handful of samples a second those wake-ups were most of an idle daemon's CPU.
final class IntervalSyncer: @unchecked Sendable {
    let intervalNanos: Int64
    /// Set once by `start`, before the thread exists.
    private var sync: @Sendable () -> Void = {}
    private var timer: OneShotTimer?
    private let armed = Atomic<Bool>(false)
    /// True while the thread runs; `arm` fails when it is not, and the appender syncs itself.
    private let running = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    init(interval seconds: Double) {
        intervalNanos = Int64(max(1_000_000, Int(seconds * 1e9)))
    }

    func start(sync: @escaping @Sendable () -> Void) {
        self.sync = sync
        timer = try? OneShotTimer()
        guard timer != nil else { exited.signal(); return }
        running.store(true, ordering: .releasing)
        if !DetachedThread.spawn(name: "strapd-sync", { self.run() }) {
            running.store(false, ordering: .releasing)
            exited.signal()
        }
    }

    /// Called after an append that is not synced at once: the first one after a sync schedules
    /// the next, one interval from now. False when there is no syncer thread (no timer or
    /// thread could be made, or it has stopped): the caller must sync itself, so that
    /// `interval` never quietly becomes `none`.
    func arm() -> Bool {
        guard running.load(ordering: .acquiring), let timer else { return false }
        if armed.exchange(true, ordering: .acquiringAndReleasing) { return true }
        do {
            try timer.arm(afterNanoseconds: intervalNanos)
            return true
        } catch {
            armed.store(false, ordering: .releasing)
            return false
        }
    }

    /// Ends the thread; with `wait`, returns once it has (a sync in progress finishes first).
    func stop(wait: Bool) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        guard running.load(ordering: .acquiring), let timer else { return }
        // Expiring at once replaces a pending arming: the thread wakes, sees `stopped`, ends.
        if (try? timer.arm(afterNanoseconds: 1)) == nil { return }
        if wait { exited.wait() }
    }

    private func run() {
        while true {
            do { try timer!.wait() } catch { break }
            if stopped.load(ordering: .acquiring) { break }
            // Cleared first: an append racing with this sync arms the next one.
            armed.store(false, ordering: .releasing)
            sync()
        }
        running.store(false, ordering: .releasing)
        exited.signal()
    }
}
