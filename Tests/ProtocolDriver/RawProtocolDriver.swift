import CShims
import Glibc
import StrapOS
import StrapWire

/// Why the raw driver failed.
public enum ProtocolDriverError: Error, Equatable, CustomStringConvertible {
    /// No socket at the path, or nobody listening on it.
    case notRunning(String)
    /// EACCES on connect.
    case permissionDenied(String)
    case io(String)
    /// The daemon closed the connection before answering.
    case closed
    case timedOut
    case malformed(String)

    public var description: String {
        switch self {
        case .notRunning(let path): "strapd is not running (no socket at \(path))"
        case .permissionDenied(let path): "permission denied connecting to \(path)"
        case .io(let m): m
        case .closed: "strapd closed the connection"
        case .timedOut: "timed out waiting for strapd"
        case .malformed(let m): "unreadable reply from strapd: \(m)"
        }
    }
}

/// A raw, blocking driver of strapd's socket protocol for the daemon's conformance tests: it
/// sends whatever bytes a test hands it (garbage, oversized lines, half requests, a write
/// half-closed) and reads the answers line by line, with a timeout on every read. It is no
/// client: programs (strapctl included) talk to strapd through StrapKit (docs/testing.md).
public final class RawProtocolDriver {
        public let path: String
    private let fd: FileDescriptor
    private let sys = Syscalls.live
    private var buffer: [UInt8] = []
    private var start = 0

    /// `timeout` bounds each read (SO_RCVTIMEO); nil waits forever (streams).
    public init(path: String, timeout: Double? = nil) throws(ProtocolDriverError) {
        self.path = path
        let s: CInt
        do {
            s = try retryingInterrupts("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        } catch {
            throw .io(error.description)
        }
        if cshims_unix_connect(s, path) != 0 {
            let e = Errno.current
            try? sys.close(FileDescriptor(rawValue: s))
            switch e {
            case .noSuchFile, .connectionRefused, .notDirectory: throw .notRunning(path)
            case .permissionDenied, .notPermitted: throw .permissionDenied(path)
            default: throw .io(SystemCallError("connect", e, path: path).description)
            }
        }
        fd = FileDescriptor(rawValue: s)
        if let timeout { setTimeout(timeout) }
    }

    deinit { try? sys.close(fd) }

    public func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        _ = setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends bytes as they are (tests send garbage too).
    public func sendRaw(_ bytes: [UInt8]) throws(ProtocolDriverError) {
        var offset = 0
        while offset < bytes.count {
            let sent: Result<IOResult, SystemCallError> = bytes[offset...].withUnsafeBytes { raw in
                Result { () throws(SystemCallError) -> IOResult in try sys.send(fd, from: raw) }
            }
            switch sent {
            case .success(.processed(let n)): offset += n
            case .success(.wouldBlock): throw .timedOut
            case .failure(let e): throw e.errno == .brokenPipe || e.errno == .connectionReset ? .closed : .io(e.description)
            }
        }
    }

    /// Sends one request line.
    public func send(_ request: JSONObject) throws(ProtocolDriverError) {
        var bytes = JSONWriter.bytes(.object(request))
        bytes.append(0x0A)
        try sendRaw(bytes)
    }

    public func shutdownWrite() { try? sys.shutdown(fd, .write) }

    /// The next line without its newline; nil at end of stream.
    public func readLine() throws(ProtocolDriverError) -> [UInt8]? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<nl])
                start = nl + 1
                if start > 65536 { buffer.removeSubrange(0..<start); start = 0 }
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let got: Result<IOResult, SystemCallError> = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SystemCallError) -> IOResult in try sys.read(fd, into: raw) }
            }
            let n: Int
            switch got {
            case .success(.processed(let count)): n = count
            case .success(.wouldBlock): throw .timedOut
            case .failure(let e) where e.errno == .connectionReset: return nil
            case .failure(let e): throw .io(e.description)
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
    public var hasBufferedLine: Bool { buffer[start...].contains(0x0A) }

    /// The socket, for `poll` (commands that watch several streams at once).
    public var descriptor: Int32 { fd.rawValue }

    /// The next line as a JSON object; nil at end of stream.
    public func readMessage() throws(ProtocolDriverError) -> JSONObject? {
        guard let line = try readLine() else { return nil }
        do {
            guard case .object(let o) = try JSONParser.parse(line) else { throw ProtocolDriverError.malformed("not an object") }
            return o
        } catch let e as ProtocolDriverError {
            throw e
        } catch {
            throw .malformed("\(error)")
        }
    }

    /// Sends a request and returns its reply (the first line with its id and `ok`), skipping
    /// events of other streams.
    public func call(_ request: JSONObject) throws(ProtocolDriverError) -> JSONObject {
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
    public static func readable(_ fds: [Int32], milliseconds: Int32) -> Set<Int32> {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let n = polled.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard n > 0 else { return [] }
        return Set(polled.filter { $0.revents != 0 }.map(\.fd))
    }
}
