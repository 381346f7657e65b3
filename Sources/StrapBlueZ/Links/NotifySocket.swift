import Dispatch
import Glibc
import StrapOS

/// Reads an AcquireNotify fd: one datagram per notification, at most MTU bytes each.
/// EOF or an error means BlueZ released the notification (disconnect, StopNotify).
final class NotifySocket: @unchecked Sendable {
    private let fd: Int32
    private let mtu: Int
    private var source: DispatchSourceRead?
    private let onData: ([UInt8]) -> Void
    private let onClose: () -> Void

    init(fd: Int32, mtu: UInt16, queue: DispatchQueue, onData: @escaping ([UInt8]) -> Void, onClose: @escaping () -> Void) {
        self.fd = fd
        // BlueZ's MTU counts the 3-byte ATT header; a datagram never exceeds it.
        self.mtu = max(Int(mtu), 23)
        self.onData = onData
        self.onClose = onClose
        // Reads below see EAGAIN, not a wait, once the socket is drained.
        try? FileDescriptor(rawValue: fd).setNonBlocking()
        let s = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        s.setEventHandler { @Sendable [weak self] in self?.drain() }
        s.setCancelHandler { @Sendable in _ = Glibc.close(fd) }
        source = s
        s.resume()
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: mtu)
        let descriptor = FileDescriptor(rawValue: fd)
        while true {
            // One datagram per read; 0 (end of file) or an error means BlueZ released it.
            let got = buffer.withUnsafeMutableBytes { raw in try? Syscalls.live.read(descriptor, into: raw) }
            switch got {
            case .processed(let n)? where n > 0:
                onData(Array(buffer[0..<n]))
            case .wouldBlock?:
                return
            default:
                cancel()
                onClose()
                return
            }
        }
    }

    func cancel() {
        source?.cancel()
        source = nil
    }

    deinit { source?.cancel() }
}
