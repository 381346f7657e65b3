import Dispatch
import Glibc

/// Delivers signals (SIGTERM, SIGINT, SIGHUP...) as calls on a queue. Each signal's
/// default disposition is set to ignore first: a DispatchSource only observes a signal,
/// and without SIG_IGN the default action (terminate) would win before the handler runs.
/// The handler is `@Sendable` and runs on `queue`, never on the main actor (G6).
public final class SignalWatcher: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]

    public init(signals: [Int32], queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { signo in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: queue)
            source.setEventHandler { @Sendable in handler(signo) }
            return source
        }
    }

    public func start() { sources.forEach { $0.resume() } }

    /// Stops observing; the signals stay ignored (restoring the default mid-shutdown could
    /// kill the process before it has flushed the store).
    public func cancel() { sources.forEach { $0.cancel() } }
}
