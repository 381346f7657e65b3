import CShims
import Glibc

/// The injectable seam under every system call the store, the socket server and the
/// daemon's file writers make (swift-system's mocking idea, but a value passed to whoever
/// makes the calls instead of a global switch): each closure is the raw call, returning -1
/// and setting `errno` on failure. Production uses `.live`; a test copies it and replaces
/// the calls it wants to fail (ENOSPC, EIO, EAGAIN, EPIPE, EMFILE, …). The typed wrappers
/// (`SystemCalls.swift`) are the only callers, and the one place EINTR is retried.
///
/// Not in the seam: one-off set-up calls whose failures are easy to provoke for real
/// (socket/bind/listen/chmod, fcntl flags, opendir, mmap).
public struct Syscalls: Sendable {
    public var open: @Sendable (_ path: String, _ flags: CInt, _ mode: mode_t) -> CInt
    public var close: @Sendable (_ fd: CInt) -> CInt
    public var read: @Sendable (_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int
    public var write: @Sendable (_ fd: CInt, _ buffer: UnsafeRawPointer, _ count: Int) -> Int
    public var pread: @Sendable (_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int
    public var pwrite: @Sendable (_ fd: CInt, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int
    public var fsync: @Sendable (_ fd: CInt) -> CInt
    public var fdatasync: @Sendable (_ fd: CInt) -> CInt
    public var ftruncate: @Sendable (_ fd: CInt, _ length: off_t) -> CInt
    public var fstat: @Sendable (_ fd: CInt, _ status: UnsafeMutablePointer<stat>) -> CInt
    public var rename: @Sendable (_ from: String, _ to: String) -> CInt
    public var unlink: @Sendable (_ path: String) -> CInt
    public var mkdir: @Sendable (_ path: String, _ mode: mode_t) -> CInt
    /// `accept4(SOCK_CLOEXEC | SOCK_NONBLOCK)`.
    public var accept: @Sendable (_ fd: CInt) -> CInt
    /// `send(MSG_NOSIGNAL)` for sockets: a vanished peer is EPIPE, never SIGPIPE.
    public var send: @Sendable (_ fd: CInt, _ buffer: UnsafeRawPointer, _ count: Int) -> Int
    public var shutdown: @Sendable (_ fd: CInt, _ how: CInt) -> CInt

    /// The real calls. Every file is opened close-on-exec: a child (the benchmark's peers,
    /// a test's helper) never inherits the daemon's descriptors.
    public static let live = Syscalls(
        open: { Glibc.open($0, $1 | O_CLOEXEC, $2) },
        close: { Glibc.close($0) },
        read: { Glibc.read($0, $1, $2) },
        write: { Glibc.write($0, $1, $2) },
        pread: { Glibc.pread($0, $1, $2, $3) },
        pwrite: { Glibc.pwrite($0, $1, $2, $3) },
        fsync: { Glibc.fsync($0) },
        fdatasync: { Glibc.fdatasync($0) },
        ftruncate: { Glibc.ftruncate($0, $1) },
        fstat: { Glibc.fstat($0, $1) },
        rename: { Glibc.rename($0, $1) },
        unlink: { Glibc.unlink($0) },
        mkdir: { Glibc.mkdir($0, $1) },
        accept: { cshims_accept4_cloexec_nonblock($0) },
        send: { cshims_send_nosignal($0, $1, $2) },
        shutdown: { Glibc.shutdown($0, $1) }
    )
}
