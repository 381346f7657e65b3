import Glibc

/// An exclusive, advisory lock on a file, held as long as this value lives: `flock` on an
/// open file description, so the kernel releases it when the process ends however it ends
/// (SIGKILL and a power cut included) and no stale lock file ever has to be cleaned up.
/// The holder writes its pid into the file, because neither `flock` nor an OFD lock can
/// tell another process who holds it.
public final class LockFile: Sendable {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Another open file description holds the lock; `pid` as its holder wrote it.
        case held(path: String, pid: Int32?)
        case system(SystemCallError)

        public var description: String {
            switch self {
            case let .held(path, pid):
                "\(path) is locked by \(pid.map { "process \($0)" } ?? "another process")"
            case let .system(e): "\(e)"
            }
        }
    }

    public let path: String
    private let file: OpenFile

    /// Takes the lock without waiting, creating the file if needed.
    public init(path: String, syscalls: Syscalls = .live) throws(Failure) {
        self.path = path
        do { file = try OpenFile(path: path, flags: O_RDWR | O_CREAT, mode: 0o644, syscalls: syscalls) } catch {
            throw .system(error)
        }
        let fd = file.descriptor.rawValue
        var rc: CInt
        repeat { rc = flock(fd, LOCK_EX | LOCK_NB) } while rc != 0 && errno == EINTR
        if rc != 0 {
            let e = Errno.current
            guard e == .wouldBlock else { throw .system(SystemCallError("flock", e, path: path)) }
            throw .held(path: path, pid: Self.holder(file))
        }
        // Best effort: the lock protects whether or not the pid could be written.
        try? file.truncate(to: 0)
        try? file.pwriteAll(Array("\(getpid())\n".utf8), at: 0)
    }

    private static func holder(_ file: OpenFile) -> Int32? {
        guard let bytes = try? file.read(at: 0, count: 32), let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return Int32(text.filter { !$0.isWhitespace })
    }
}
