import Glibc
import StrapOS
import Synchronization

public enum TokenFileError: Error, Equatable, CustomStringConvertible {
    case system(call: String, path: String, errno: Int32)
    /// Readable or writable by others than its owner: someone may have copied it.
    case tooOpen(path: String, mode: UInt32)
    case malformed(path: String)

    /// StrapOS's error (EINTR already retried, short writes finished) in this file's terms.
    init(_ error: SystemCallError, path: String) {
        self = .system(call: error.call, path: error.path ?? path, errno: error.errno.rawValue)
    }

    public var description: String {
        switch self {
        case .system(let call, let path, let errno): "\(call) \(path): \(String(cString: strerror(errno)))"
        case .tooOpen(let path, let mode): "\(path) has mode \(String(mode, radix: 8)); the token file must be 0600 (remove it and strapd-web makes a new token)"
        case .malformed(let path): "\(path) does not hold a token (64 hexadecimal digits); remove it and strapd-web makes a new one"
        }
    }
}

/// strapd-web's secret: 256 random bits as 64 hex digits, in `<state dir>/token`, mode 0600.
/// Made once and kept across restarts, so a bookmarked URL keeps working; removing the file
/// (and restarting) revokes every URL and session.
public enum AccessToken {
    public static let fileName = "token"
    /// The URL strapd-web serves, with the token, rewritten at each start: what a person opens
    /// (`strapctl web url` prints it; strapctl does not link StrapWeb and names the file
    /// itself, `WebCommands.urlFileName`: the two must stay equal).
    public static let urlFileName = "url"
    /// The overlay's read-only token and its URL (docs/web.md, "The overlay token"): a second
    /// secret, so the URL pasted into OBS, which a stream's viewers may glimpse, cannot steer.
    public static let overlayFileName = "overlay-token"
    public static let overlayURLFileName = "overlay-url"

    public static func generate() -> String {
        var rng = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &rng)
            return String(byte >> 4, radix: 16) + String(byte & 15, radix: 16)
        }.joined()
    }

    /// Reads the token in `directory`, or makes one (O_EXCL, 0600) when there is none.
    public static func loadOrCreate(in directory: String, file: String = fileName) throws(TokenFileError) -> String {
        let path = directory + "/" + file
        if let existing = try read(path) { return existing }
        let token = generate()
        try create(token + "\n", at: path)
        return token
    }

    /// Writes the URL file next to the token (0600, replaced atomically).
    public static func writeURL(_ url: String, in directory: String, file: String = urlFileName) throws(TokenFileError) {
        let path = directory + "/" + file
        do throws(SystemCallError) { try Syscalls.live.writeFileAtomically(Array((url + "\n").utf8), to: path, mode: 0o600) } catch {
            throw TokenFileError(error, path: path)
        }
    }

    /// The file's first line, refused if the file is open to others or not a token.
    static func read(_ path: String) throws(TokenFileError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .system(call: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system(call: "fstat", path: path, errno: errno) }
        guard st.st_mode & 0o077 == 0 else { throw .tooOpen(path: path, mode: st.st_mode & 0o7777) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { throw .system(call: "read", path: path, errno: errno) }
        let text = String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw .malformed(path: path)
        }
        return text
    }

    /// Created, never replaced (O_EXCL): two strapd-web starting at once cannot each take a
    /// different token; the loser fails and the next start reads the winner's.
    private static func create(_ text: String, at path: String) throws(TokenFileError) {
        do throws(SystemCallError) {
            let file = try OpenFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode: 0o600)
            try file.writeAll(Array(text.utf8))
            try file.sync()
        } catch {
            throw TokenFileError(error, path: path)
        }
    }

    /// Equal without an early exit, so the time taken says nothing about a guess.
    public static func matches(_ candidate: String, _ token: String) -> Bool {
        let a = Array(candidate.utf8), b = Array(token.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}

/// The browser sessions the token opened: random ids held in memory only (a restart ends
/// them; the token URL opens a new one). Bounded: the oldest goes first.
public final class SessionBook: Sendable {
    public static let cookieName = "strapd_web_session"
    public static let limit = 256
    private let sessions = Mutex<[String]>([])

    public init() {}

    public func open() -> String {
        let id = AccessToken.generate()
        sessions.withLock {
            if $0.count >= Self.limit { $0.removeFirst() }
            $0.append(id)
        }
        return id
    }

    public func isOpen(_ id: String) -> Bool {
        sessions.withLock { list in list.contains { AccessToken.matches(id, $0) } }
    }

    public func close(_ id: String) {
        sessions.withLock { $0.removeAll { AccessToken.matches(id, $0) } }
    }
}
