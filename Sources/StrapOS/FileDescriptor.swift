import CShims
import Glibc

/// An open file descriptor as a value (swift-system's `FileDescriptor` shape). It does
/// not close itself: ownership is explicit in the type that holds it.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    public var description: String { "fd \(rawValue)" }

    public enum ShutdownKind: CInt, Sendable {
        case read = 0   // SHUT_RD
        case write = 1  // SHUT_WR
        case both = 2   // SHUT_RDWR
    }

    public func setNonBlocking() throws(SystemCallError) {
        let flags = try retryingInterrupts("fcntl(F_GETFL)") { fcntl(rawValue, F_GETFL) }
        if flags & O_NONBLOCK == 0 {
            _ = try retryingInterrupts("fcntl(F_SETFL)") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
        }
    }

    public func setCloseOnExec() throws(SystemCallError) {
        let flags = try retryingInterrupts("fcntl(F_GETFD)") { fcntl(rawValue, F_GETFD) }
        if flags & FD_CLOEXEC == 0 {
            _ = try retryingInterrupts("fcntl(F_SETFD)") { fcntl(rawValue, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// Closes through the live syscalls (see `Syscalls.close` for the EINTR rule).
    public func close() throws(SystemCallError) { try Syscalls.live.close(self) }

    /// A connected non-blocking unix stream socket pair (tests, in-process plumbing).
    public static func socketPair() throws(SystemCallError) -> (FileDescriptor, FileDescriptor) {
        var fds: [CInt] = [-1, -1]
        _ = try retryingInterrupts("socketpair") {
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds)
        }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}
