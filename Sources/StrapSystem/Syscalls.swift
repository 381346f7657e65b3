import CShims
import Glibc

/// The injectable seam under every call the server makes in steady state (the
/// swift-system mocking idea without a global switch): each closure is the raw call,
/// returning -1 and setting `errno` on failure. Tests substitute closures that fail with
/// EAGAIN/ENOSPC/EPIPE/ECONNRESET/EMFILE on demand; production uses `.live`.
/// Set-up calls (bind, listen, chmod) are not in the seam: they run once and their
/// failures are ordinary and easy to provoke for real.
public struct Syscalls: Sendable {
    public var read: @Sendable (_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int
    /// `send(MSG_NOSIGNAL)` for sockets: a vanished peer is EPIPE, never SIGPIPE.
    public var write: @Sendable (_ fd: CInt, _ buffer: UnsafeRawPointer, _ count: Int) -> Int
    /// `accept4(SOCK_CLOEXEC | SOCK_NONBLOCK)`.
    public var accept: @Sendable (_ fd: CInt) -> CInt
    public var close: @Sendable (_ fd: CInt) -> CInt
    public var shutdown: @Sendable (_ fd: CInt, _ how: CInt) -> CInt

    public init(
        read: @escaping @Sendable (CInt, UnsafeMutableRawPointer, Int) -> Int,
        write: @escaping @Sendable (CInt, UnsafeRawPointer, Int) -> Int,
        accept: @escaping @Sendable (CInt) -> CInt,
        close: @escaping @Sendable (CInt) -> CInt,
        shutdown: @escaping @Sendable (CInt, CInt) -> CInt
    ) {
        self.read = read
        self.write = write
        self.accept = accept
        self.close = close
        self.shutdown = shutdown
    }

    public static let live = Syscalls(
        read: { Glibc.read($0, $1, $2) },
        write: { cshims_send_nosignal($0, $1, $2) },
        accept: { cshims_accept4_cloexec_nonblock($0) },
        close: { Glibc.close($0) },
        shutdown: { Glibc.shutdown($0, $1) }
    )
}

/// The outcome of a non-blocking transfer.
public enum IOResult: Sendable, Equatable {
    /// Bytes moved; for a read, 0 is end of file.
    case processed(Int)
    case wouldBlock
}

/// Runs `body` until it does not fail with EINTR; any other failure becomes a
/// `SystemCallError` naming `call`. The one place errno is read after a call.
@inline(__always)
func retryingInterrupts<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw SystemCallError(call, error)
    }
}

/// As `retryingInterrupts`, with EAGAIN/EWOULDBLOCK reported as `.wouldBlock` rather
/// than thrown: on a non-blocking fd it is a state, not an error.
@inline(__always)
func nonBlocking(_ call: String, _ body: () -> Int) throws(SystemCallError) -> IOResult {
    do {
        return .processed(try retryingInterrupts(call, body))
    } catch where error.errno == .wouldBlock || error.errno.rawValue == EWOULDBLOCK {
        return .wouldBlock
    }
}

extension Syscalls {
    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult {
        try nonBlocking("read") { read(fd.rawValue, buffer.baseAddress!, buffer.count) }
    }

    public func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult {
        try nonBlocking("send") { write(fd.rawValue, buffer.baseAddress!, buffer.count) }
    }

    /// One pending connection, or nil when none is waiting. ECONNABORTED (the peer gave
    /// up while queued) is skipped like EINTR: it concerns that peer only.
    public func accept(_ listener: FileDescriptor) throws(SystemCallError) -> FileDescriptor? {
        while true {
            do {
                switch try nonBlocking("accept4", { Int(accept(listener.rawValue)) }) {
                case .wouldBlock: return nil
                case .processed(let fd): return FileDescriptor(rawValue: CInt(fd))
                }
            } catch where error.errno == .connectionAborted {
                continue
            }
        }
    }

    /// Closes `fd`. EINTR is *not* retried: on Linux the descriptor is released even
    /// when close is interrupted, and retrying could close a descriptor another thread
    /// has just been given.
    public func close(_ fd: FileDescriptor) throws(SystemCallError) {
        if close(fd.rawValue) < 0, Errno.current != .interrupted {
            throw SystemCallError("close", Errno.current)
        }
    }

    public func shutdown(_ fd: FileDescriptor, _ how: FileDescriptor.ShutdownKind) throws(SystemCallError) {
        _ = try retryingInterrupts("shutdown") { shutdown(fd.rawValue, how.rawValue) }
    }
}
