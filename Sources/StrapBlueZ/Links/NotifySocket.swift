import Dispatch
import Glibc
import StrapOS

/// Reads an AcquireNotify fd: one datagram per notification, at most MTU bytes each.
/// EOF or an error means BlueZ released the notification (disconnect, StopNotify).
final class NotifySocket: @unchecked Sendable {
    private let fd: Int32
    private let mtu: Int
    /// Confined to the bus queue.
    private var watch: ReadWatch?
    private let onData: ([UInt8]) -> Void
    private let onClose: () -> Void
    /// Held, not read from the global each time: a method called on `Syscalls.live` copied
    /// the whole table (a retain and release of each of its closures) on every read.
    private let syscalls: Syscalls
    /// Confined to the bus queue: one buffer for every datagram, not one per wake-up.
    private var buffer: [UInt8]

    /// On the bus queue; the socket owns `fd` from here on.
    init(fd: Int32, mtu: UInt16, bus: Bus, syscalls: Syscalls = .live,
         onData: @escaping ([UInt8]) -> Void, onClose: @escaping () -> Void) {
        self.fd = fd
        // BlueZ's MTU counts the 3-byte ATT header; a datagram never exceeds it.
        self.mtu = max(Int(mtu), 23)
        self.syscalls = syscalls
        buffer = [UInt8](repeating: 0, count: self.mtu)
        self.onData = onData
        self.onClose = onClose
        // Reads below see EAGAIN, not a wait, once the socket is drained.
        try? FileDescriptor(rawValue: fd).setNonBlocking()
        watch = bus.watchReadable(fd) { [weak self] in self?.drain() }
    }

    /// Whether the bus's reader thread reads it (tests).
    var onReaderThread: Bool { watch?.onReaderThread ?? false }

    private func drain() {
        let descriptor = FileDescriptor(rawValue: fd)
        // Until drained, or cancelled meanwhile (by whatever `onData` set off): the fd is
        // closed then, and its number may already be another's.
        while watch != nil {
            // One datagram per read; 0 (end of file) or an error means BlueZ released it.
            var value: [UInt8] = []
            let got = buffer.withUnsafeMutableBytes { raw in
                let got = try? syscalls.read(descriptor, into: raw)
                if case .processed(let n)? = got, n > 0 { value = [UInt8](UnsafeRawBufferPointer(rebasing: raw[..<n])) }
                return got
            }
            switch got {
            case .processed(let n)? where n > 0:
                onData(value)
            case .wouldBlock?:
                return
            default:
                cancel()
                onClose()
                return
            }
        }
    }

    /// On the bus queue: stops reading and closes the socket.
    func cancel() {
        watch?.cancel()
        watch = nil
    }

    deinit { watch?.cancel() }
}
