import CShims
import Glibc

/// An epoll instance a thread of its own sleeps on, descriptors named by a 64-bit token
/// (`cshims_epoll_*`). Level-triggered and read-only, which is all its users need: a
/// descriptor keeps being reported until it is drained. Descriptors may be added and removed
/// from any thread while another waits (the kernel allows it; no wake-up is needed).
public final class Epoll: Sendable {
    public let descriptor: FileDescriptor

    public init() throws(SystemCallError) {
        descriptor = FileDescriptor(rawValue: try retryingInterrupts("epoll_create1") { cshims_epoll_create() })
    }

    /// Reports `fd` as `token` while it is readable (or at end of file, or on error).
    public func addReadable(_ fd: Int32, token: UInt64) throws(SystemCallError) {
        _ = try retryingInterrupts("epoll_ctl(ADD)") { cshims_epoll_add_readable(descriptor.rawValue, fd, token) }
    }

    /// Stops reporting `fd`. Must come before `fd` is closed: a closed descriptor leaves the
    /// set only once every duplicate of it is closed too.
    public func remove(_ fd: Int32) throws(SystemCallError) {
        _ = try retryingInterrupts("epoll_ctl(DEL)") { cshims_epoll_remove(descriptor.rawValue, fd) }
    }

    /// Blocks until something is ready (or `timeoutMilliseconds`, -1 for none) and writes the
    /// ready tokens to the start of `tokens` (at most its count, 64 at most); returns how many.
    /// EINTR returns 0, so the caller's loop can check whether to end.
    public func wait(into tokens: inout [UInt64], timeoutMilliseconds: Int32 = -1) throws(SystemCallError) -> Int {
        let n = tokens.withUnsafeMutableBufferPointer { b in
            cshims_epoll_wait_tokens(descriptor.rawValue, b.baseAddress, Int32(b.count), timeoutMilliseconds)
        }
        if n >= 0 { return Int(n) }
        let error = Errno.current
        if error == .interrupted { return 0 }
        throw SystemCallError("epoll_wait", error)
    }

    deinit { try? descriptor.close() }
}
