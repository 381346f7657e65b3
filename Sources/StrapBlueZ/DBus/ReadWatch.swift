import Dispatch
import Glibc

/// A descriptor the bus's queue reads whenever it is readable (an AcquireNotify socket), and
/// that the watch closes when cancelled. On the bus's reader thread when there is one
/// (`BusReader.watch`: a datagram then costs that thread's one wake-up); otherwise a Dispatch
/// read source, which wakes libdispatch's manager thread and a worker for each.
final class ReadWatch: @unchecked Sendable {
    private enum Mechanism {
        case reader(BusReader, token: UInt64)
        case source(DispatchSourceRead)
    }
    private let fd: Int32
    /// Confined to the bus queue; nil once cancelled.
    private var mechanism: Mechanism?

    /// On the bus queue. `ready` runs there.
    init(fd: Int32, reader: BusReader?, queue: DispatchQueue, ready: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.fd = fd
        if let reader, let token = reader.watch(fd, ready: ready) {
            mechanism = .reader(reader, token: token)
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { @Sendable in ready() }
        // The descriptor is closed only once libdispatch has let go of it.
        source.setCancelHandler { @Sendable in _ = Glibc.close(fd) }
        source.resume()
        mechanism = .source(source)
    }

    /// On the bus queue: `ready` does not run again and the descriptor is closed.
    func cancel() {
        switch mechanism {
        case .reader(let reader, let token)?:
            reader.unwatch(fd, token: token)
            _ = Glibc.close(fd)
        case .source(let source)?:
            source.cancel()
        case nil:
            break
        }
        mechanism = nil
    }

    /// Whether the bus's reader thread serves it (tests).
    var onReaderThread: Bool {
        if case .reader? = mechanism { return true }
        return false
    }
}
