import CShims
import CSystemd
import Glibc
import StrapOS

/// Why a listening socket could not be set up.
public enum ListenerError: Error, Sendable, Equatable, CustomStringConvertible {
    case system(SystemCallError, path: String?)
    /// Something that is not a socket sits at the path; it is never deleted.
    case pathOccupied(String)
    /// Another process accepts connections on the path.
    case alreadyServing(String)
    /// The passed/activated fd is not a listening unix stream socket.
    case notAListeningUnixSocket(FileDescriptor)
    /// systemd passed a number of sockets other than the one the daemon expects.
    case unexpectedActivationCount(Int32)

    public var description: String {
        switch self {
        case .system(let e, let path?): "\(path): \(e)"
        case .system(let e, nil): "\(e)"
        case .pathOccupied(let p): "\(p) exists and is not a socket; refusing to replace it"
        case .alreadyServing(let p): "\(p): another process is already listening"
        case .notAListeningUnixSocket(let fd): "\(fd) is not a listening unix stream socket"
        case .unexpectedActivationCount(let n): "systemd passed \(n) sockets, expected 1"
        }
    }
}

/// A listening, non-blocking, close-on-exec AF_UNIX stream socket: bound by us, or
/// adopted from systemd socket activation.
public struct UnixListener: Sendable {
    public let fd: FileDescriptor
    /// The socket path when we bound it (we unlink it on close); nil when adopted, since
    /// the path then belongs to the socket unit.
    public let ownedPath: String?

    public static let defaultBacklog: CInt = 512

    /// Binds `path`. A stale socket left by a crashed run is replaced, but only after a
    /// connect attempt shows nobody listens there; any other file is left alone.
    /// Permissions: bind, then chmod `mode` and chown to `group`. Changing the umask
    /// instead would race with every other thread creating files; the window between
    /// bind and chmod is harmless because the default umask (022) leaves the socket
    /// without group/other write permission, and connecting needs write permission.
    public static func bind(path: String, mode: mode_t = 0o660, group: gid_t? = nil,
                            backlog: CInt = defaultBacklog) throws(ListenerError) -> UnixListener {
        try removeStaleSocket(at: path)
        let raw: CInt
        do {
            raw = try retryingInterrupts("socket") { cshims_unix_socket(Int32(SOCK_STREAM.rawValue)) }
        } catch {
            throw .system(error, path: path)
        }
        let fd = FileDescriptor(rawValue: raw)
        do {
            _ = try retryingInterrupts("bind") { cshims_unix_bind(raw, path) }
            _ = try retryingInterrupts("chmod") { chmod(path, mode) }
            // Skipped when the group is already ours: the socket has it, and the unit's
            // seccomp filter (~@privileged) forbids chown.
            if let group, group != getegid() {
                _ = try retryingInterrupts("chown") { chown(path, uid_t.max, group) }
            }
            _ = try retryingInterrupts("listen") { listen(raw, backlog) }
        } catch {
            try? fd.close()
            if error.call != "bind" { unlink(path) }
            throw .system(error, path: path)
        }
        return UnixListener(fd: fd, ownedPath: path)
    }

    /// Adopts an fd handed over by systemd (or a test): it must be a listening AF_UNIX
    /// stream socket; it is made non-blocking and close-on-exec.
    public static func adopt(_ fd: FileDescriptor) throws(ListenerError) -> UnixListener {
        guard sd_is_socket_unix(fd.rawValue, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw .notAListeningUnixSocket(fd)
        }
        do {
            try fd.setNonBlocking()
            try fd.setCloseOnExec()
        } catch {
            throw .system(error, path: nil)
        }
        return UnixListener(fd: fd, ownedPath: nil)
    }

    /// The socket passed by systemd socket activation, or nil when not activated.
    /// `sd_listen_fds(1)` checks LISTEN_PID against our pid and unsets the variables so
    /// children do not inherit them. The parameters exist for tests; the daemon calls
    /// `activated()`.
    public static func activated(count: Int32 = sd_listen_fds(1),
                                 firstFD: CInt = SD_LISTEN_FDS_START) throws(ListenerError) -> UnixListener? {
        if count < 0 { throw .system(SystemCallError("sd_listen_fds", Errno(rawValue: -count)), path: nil) }
        if count == 0 { return nil }
        guard count == 1 else { throw .unexpectedActivationCount(count) }
        return try adopt(FileDescriptor(rawValue: firstFD))
    }

    /// Closes the socket and removes the path if we created it.
    public func close() {
        try? fd.close()
        if let ownedPath { unlink(ownedPath) }
    }

    private static func removeStaleSocket(at path: String) throws(ListenerError) {
        var st = stat()
        if lstat(path, &st) != 0 {
            let e = Errno.current
            if e == .noSuchFile { return }
            throw .system(SystemCallError("lstat", e), path: path)
        }
        guard st.st_mode & S_IFMT == S_IFSOCK else { throw .pathOccupied(path) }
        let probe = cshims_unix_socket(Int32(SOCK_STREAM.rawValue))
        guard probe >= 0 else { throw .system(SystemCallError("socket", .current), path: path) }
        defer { Glibc.close(probe) }
        // Non-blocking connect to a live listener succeeds or gives EAGAIN (backlog full);
        // ECONNREFUSED means the socket file is stale.
        if cshims_unix_connect(probe, path) == 0 || Errno.current == .wouldBlock {
            throw .alreadyServing(path)
        }
        if Errno.current != .connectionRefused && Errno.current != .noSuchFile {
            throw .system(SystemCallError("connect", .current), path: path)
        }
        unlink(path)
    }
}
