import CShims
import Glibc
import StrapWire

/// strapctl's exit codes (strapctl(1)); 0, 1 and 2 keep their `decode` meanings.
public enum ExitCode {
    public static let success: Int32 = 0
    /// The daemon answered with an error (or `decode` got an invalid packet).
    public static let daemonError: Int32 = 1
    public static let usage: Int32 = 2
    /// No daemon to talk to: no socket, nobody listening, connection lost.
    public static let unreachable: Int32 = 3
    /// EACCES on the socket or a `notAuthorized` reply.
    public static let notAuthorized: Int32 = 4
    /// `scan --until ADDR`: the scan ended without ADDR showing up.
    public static let notFound: Int32 = 5
    /// The daemon answered `noData`: the value asked for was never set (an athlete without a
    /// profile, an unset profile field).
    public static let noData: Int32 = 6
    /// Ctrl-C ended a command that had something to finish (`workout export`: nothing written).
    public static let interrupted: Int32 = 130
}

/// Why talking to strapd failed, each with the message and exit code strapctl(1) documents.
public enum ClientError: Error, Equatable, CustomStringConvertible {
    /// No socket at the path, or nobody listening on it.
    case notRunning(String)
    /// EACCES on connect: the socket is 0660, group strapd.
    case permissionDenied(String)
    case io(String)
    /// The daemon closed the connection before answering.
    case closed
    /// The daemon is stopping: it ended the stream with a `shutdown` event.
    case shuttingDown
    case timedOut
    case malformed(String)

    public var description: String {
        switch self {
        case .notRunning(let path): "strapd is not running (no socket at \(path))"
        case .permissionDenied(let path): "permission denied connecting to \(path) (are you in the strapd group?)"
        case .io(let m): m
        case .closed: "strapd closed the connection"
        case .shuttingDown: "strapd is shutting down"
        case .timedOut: "timed out waiting for strapd"
        case .malformed(let m): "unreadable reply from strapd: \(m)"
        }
    }

    public var exitCode: Int32 {
        switch self {
        case .permissionDenied: ExitCode.notAuthorized
        default: ExitCode.unreachable
        }
    }
}

/// A blocking NDJSON client of the strapd socket (a CLI needs nothing fancier).
public final class DaemonClient {
    public static let defaultSocket = "/run/strapd/strapd.sock"
    public let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// `timeout` bounds each read (SO_RCVTIMEO); nil waits forever (streams).
    public init(path: String, timeout: Double? = nil) throws(ClientError) {
        self.path = path
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw .io("socket: \(Self.errnoText(errno))") }
        if cshims_unix_connect(s, path) != 0 {
            let e = errno
            Glibc.close(s)
            switch e {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw .notRunning(path)
            case EACCES, EPERM: throw .permissionDenied(path)
            default: throw .io("connect \(path): \(Self.errnoText(e))")
            }
        }
        fd = s
        if let timeout { setTimeout(timeout) }
    }

    deinit { Glibc.close(fd) }

    public func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends bytes as they are (tests send garbage too).
    public func sendRaw(_ bytes: [UInt8]) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { cshims_send_nosignal(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io("send: \(Self.errnoText(errno))")
            }
            offset += n
        }
    }

    /// Sends one request line.
    public func send(_ request: JSONObject) throws(ClientError) {
        var bytes = JSONWriter.bytes(.object(request))
        bytes.append(0x0A)
        try sendRaw(bytes)
    }

    public func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// The next line without its newline; nil at end of stream.
    public func readLine() throws(ClientError) -> [UInt8]? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<nl])
                start = nl + 1
                if start > 65536 { buffer.removeSubrange(0..<start); start = 0 }
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                if errno == ECONNRESET { return nil }
                throw .io("read: \(Self.errnoText(errno))")
            }
            if n == 0 {
                if start < buffer.count {
                    let rest = Array(buffer[start...])
                    start = buffer.count
                    return rest
                }
                return nil
            }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Whether a whole line is already buffered: `readMessage` returns without reading.
    var hasBufferedLine: Bool { buffer[start...].contains(0x0A) }

    /// The socket, for `poll` (commands that watch several streams at once).
    var descriptor: Int32 { fd }

    /// The next line as a JSON object; nil at end of stream.
    public func readMessage() throws(ClientError) -> JSONObject? {
        guard let line = try readLine() else { return nil }
        do {
            guard case .object(let o) = try JSONParser.parse(line) else { throw ClientError.malformed("not an object") }
            return o
        } catch let e as ClientError {
            throw e
        } catch {
            throw .malformed("\(error)")
        }
    }

    /// Sends a request and returns its reply (the first line with its id and `ok`), skipping
    /// events of other streams.
    public func call(_ request: JSONObject) throws(ClientError) -> JSONObject {
        try send(request)
        let id = request["id"]
        while true {
            guard let message = try readMessage() else { throw .closed }
            if message["id"] == id, message["ok"] != nil { return message }
            if message["id"] == .null, message["ok"] == .bool(false) { return message }
        }
    }

    /// The descriptors among `fds` that are readable (or hung up) within `milliseconds`
    /// (-1: wait as long as it takes).
    static func readable(_ fds: [Int32], milliseconds: Int32) -> Set<Int32> {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let n = polled.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard n > 0 else { return [] }
        return Set(polled.filter { $0.revents != 0 }.map(\.fd))
    }

    static func errnoText(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        cshims_strerror(code, &buf, buf.count)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
