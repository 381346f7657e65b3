import Dispatch
import Glibc

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
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let s = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        s.setEventHandler { @Sendable [weak self] in self?.drain() }
        s.setCancelHandler { @Sendable in _ = Glibc.close(fd) }
        source = s
        s.resume()
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: mtu)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                onData(Array(buffer[0..<n]))
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            if n < 0 && errno == EINTR { continue }
            cancel()
            onClose()
            return
        }
    }

    func cancel() {
        source?.cancel()
        source = nil
    }

    deinit { source?.cancel() }
}
