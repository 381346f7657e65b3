import CSystemd
import Dispatch
import Glibc
import StrapOS
import Synchronization

/// The sd_notify(3) states the daemon sends.
public enum NotifyState: Sendable, Equatable {
    case ready
    case reloading
    case stopping
    case watchdog
    /// A one-line human status, shown by `systemctl status`. Newlines are replaced.
    case status(String)

    var assignment: String {
        switch self {
        case .ready: "READY=1"
        case .reloading: "RELOADING=1"
        case .stopping: "STOPPING=1"
        case .watchdog: "WATCHDOG=1"
        case .status(let text): "STATUS=" + text.replacing("\n", with: " ")
        }
    }
}

/// `sd_notify` from Swift (it is not variadic, so it imports directly). Without
/// NOTIFY_SOCKET (not under systemd) every call is a cheap no-op.
public enum SystemdNotifier {
    /// Sends the states in one datagram. Returns true if systemd was told, false when
    /// there is no notification socket; throws when sending failed.
    @discardableResult
    public static func notify(_ states: NotifyState...) throws(SystemCallError) -> Bool {
        try notify(states)
    }

    @discardableResult
    public static func notify(_ states: [NotifyState]) throws(SystemCallError) -> Bool {
        let message = states.map(\.assignment).joined(separator: "\n")
        let r = sd_notify(0, message)
        if r < 0 { throw SystemCallError("sd_notify", Errno(rawValue: -r)) }
        return r > 0
    }

    /// sd_notify's datagram socket is blocking: a notification socket that stops draining
    /// would stall whoever sends. Status and watchdog sends go through this queue instead, so
    /// a stalled systemd delays only its own messages; at most `maximumQueued` wait, and
    /// newer ones are dropped meanwhile (statuses are superseded and pings repeat anyway).
    static let sendQueue = DispatchQueue(label: "strapd.sd-notify")
    static let queued = Atomic<Int>(0)
    public static let maximumQueued = 8

    /// Sends without blocking the caller. Returns false when the message was dropped because
    /// earlier ones are still waiting on the socket.
    @discardableResult
    public static func notifyInBackground(_ states: NotifyState...) -> Bool {
        if queued.add(1, ordering: .relaxed).newValue > maximumQueued {
            queued.subtract(1, ordering: .relaxed)
            return false
        }
        sendQueue.async {
            _ = try? notify(states)
            queued.subtract(1, ordering: .relaxed)
        }
        return true
    }

    /// The watchdog interval systemd expects pings within (`WatchdogSec=`), or nil when
    /// the watchdog is off or meant for another process (WATCHDOG_PID).
    public static func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        let r = sd_watchdog_enabled(0, &usec)
        guard r > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec))
    }
}

/// Sends WATCHDOG=1 at half the watchdog interval, as sd_watchdog_enabled(3) advises.
/// Run it on the queue whose liveness matters (the daemon's main pipeline queue): if that
/// queue wedges, the pings stop and systemd restarts the service, which is the point.
/// `isHealthy` lets the daemon withhold pings when it knows it is stuck.
public final class WatchdogPinger: @unchecked Sendable {
    public let interval: Duration
    private let timer: DispatchSourceTimer
    private let queue: DispatchQueue
    private let lifecycle: SourceLifecycle

    /// Nil when the watchdog is not enabled for this process.
    public convenience init?(queue: DispatchQueue, isHealthy: @escaping @Sendable () -> Bool = { true }) {
        guard let interval = SystemdNotifier.watchdogInterval() else { return nil }
        self.init(interval: interval, queue: queue, isHealthy: isHealthy)
    }

    public init(interval: Duration, queue: DispatchQueue, isHealthy: @escaping @Sendable () -> Bool = { true }) {
        self.interval = interval
        self.queue = queue
        let half = interval / 2
        let (seconds, attoseconds) = half.components
        let nanos = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .nanoseconds(max(nanos, 1_000_000)), leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler { @Sendable in
            // The timer firing on `queue` is the liveness proof; the send itself must not be
            // able to wedge that queue.
            if isHealthy() { SystemdNotifier.notifyInBackground(.watchdog) }
        }
        lifecycle = SourceLifecycle(timer)
    }

    /// Idempotent; `stop()` (or dropping the pinger) ends the pings for good.
    public func start() { lifecycle.start() }
    public func stop() { lifecycle.stop() }
}
