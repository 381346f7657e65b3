import CShims
import Glibc

/// A one-shot monotonic timer a thread sleeps on (timerfd). Arming is one system call on
/// the arming thread and wakes nobody; the sleeping thread wakes once, when it expires. A
/// semaphore signalled to start a timed sleep wakes the sleeper twice (once to begin the
/// sleep, once when it ends), and at a few syncs a second that was a visible part of an
/// idle daemon's CPU.
public final class OneShotTimer: Sendable {
    public let descriptor: FileDescriptor

    public init() throws(SystemCallError) {
        descriptor = FileDescriptor(rawValue: try retryingInterrupts("timerfd_create") { cshims_timer_create() })
    }

    /// Expires `nanoseconds` from now, replacing any earlier arming.
    public func arm(afterNanoseconds nanoseconds: Int64) throws(SystemCallError) {
        _ = try retryingInterrupts("timerfd_settime") { cshims_timer_arm(descriptor.rawValue, nanoseconds) }
    }

    /// Blocks until the timer has expired (at once when it already has since the last wait).
    public func wait() throws(SystemCallError) {
        var expirations: UInt64 = 0
        _ = try retryingInterrupts("read(timerfd)") { read(descriptor.rawValue, &expirations, 8) }
    }

    deinit { try? descriptor.close() }
}
