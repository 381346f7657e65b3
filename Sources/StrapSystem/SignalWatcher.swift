import CShims
import Dispatch
import Glibc
import StrapOS

/// Delivers signals (SIGTERM, SIGINT, SIGHUP...) as calls on a queue.
///
/// Self-pipe rather than `DispatchSource.makeSignalSource`: on Linux libdispatch installs
/// its catching handler only when the source is registered, asynchronously after
/// `resume()`, so a signal arriving in that window meets the old disposition (SIG_IGN:
/// lost; SIG_DFL: the process dies); and its re-raise goes to the thread that registered,
/// which need not be the thread reading the signalfd (seen here: a SIGUSR2 sent right
/// after `resume()` never arrived). Here the handler (C shim, async-signal-safe) is in
/// place when `init` returns and writes the signal number into a pipe that a read source
/// drains on `queue`. The handler is `@Sendable` and never runs on the main actor
/// (docs/swift-on-linux.md#dispatchsource-handlers-in-mainswift-trap, #signals-need-a-self-pipe).
/// One watcher per signal per process: a later watcher takes the signal over.
public final class SignalWatcher: @unchecked Sendable {
    private let source: DispatchSourceRead
    private let signals: [Int32]
    private let readFD: CInt
    private let writeFD: CInt
    private let lifecycle: SourceLifecycle

    public init(signals: [Int32], queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void) {
        var fds: [CInt] = [-1, -1]
        // pipe2 is _GNU_SOURCE-only in Swift; set the flags right after. A failure here
        // means the process is out of descriptors at start-up, which is fatal anyway.
        precondition(pipe(&fds) == 0, "pipe: \(Errno.current)")
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readFD = fds[0]
        writeFD = fds[1]
        self.signals = signals
        for signo in signals { precondition(cshims_signal_to_fd(signo, fds[1]) == 0, "sigaction(\(signo)): \(Errno.current)") }
        source = DispatchSource.makeReadSource(fileDescriptor: readFD, queue: queue)
        let readFD = self.readFD
        source.setEventHandler { @Sendable in
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(readFD, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                for byte in buffer[..<n] { handler(Int32(byte)) }
            }
        }
        let writeFD = self.writeFD
        source.setCancelHandler { @Sendable in
            Glibc.close(readFD)
            Glibc.close(writeFD)
        }
        lifecycle = SourceLifecycle(source)
    }

    /// Idempotent.
    public func start() { lifecycle.start() }

    /// Stops delivery (also done when the watcher is dropped). The signals are left
    /// *ignored*, not restored to their default: a second SIGTERM during shutdown must not
    /// kill the process before the store is flushed.
    public func cancel() {
        for signo in signals { _ = cshims_signal_to_fd(signo, -1) }
        lifecycle.stop()
    }

    deinit { cancel() }
}
