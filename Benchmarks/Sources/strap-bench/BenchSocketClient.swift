import CShims
import Foundation

/// A plain blocking NDJSON client of strapd's socket, as a script or strapctl would be: one
/// request line out, reply and event lines in. The workouts and export sections drive the
/// shipped daemon with it (start sessions, list them, stream an export).
final class BenchSocketClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1

    init(socket path: String, timeoutSeconds: Int = 30) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, cshims_unix_connect(fd, path) == 0 else {
            if fd >= 0 { Glibc.close(fd) }
            throw BenchFailure("cannot connect to \(path): errno \(errno)")
        }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    /// Sends `{"id": N, "op": op, ...params}` and returns N.
    @discardableResult
    func send(_ op: String, _ params: [String: Any] = [:]) throws -> Int {
        let id = nextID
        nextID += 1
        var object = params
        object["id"] = id
        object["op"] = op
        let line = try JSONSerialization.data(withJSONObject: object) + Data([0x0A])
        let sent = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == line.count else { throw BenchFailure("cannot send \(op): errno \(errno)") }
        return id
    }

    /// The next line (without its newline); throws on timeout or when the daemon closes.
    func readLine() throws -> ArraySlice<UInt8> {
        var scanned = 0
        while true {
            if let nl = buffer[scanned...].firstIndex(of: 0x0A) {
                let line = buffer[..<nl]
                buffer.removeSubrange(...nl)
                return line
            }
            scanned = buffer.count
            var chunk = [UInt8](repeating: 0, count: 256 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw BenchFailure(n == 0 ? "strapd closed the connection" : "no reply from strapd (errno \(errno))") }
            buffer += chunk[0..<n]
        }
    }

    func readObject() throws -> [String: Any] {
        let line = try readLine()
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw BenchFailure("not a JSON object from strapd: \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
        return object
    }

    /// One request and its `ok` reply's result (events of other streams are not expected on
    /// this connection); an error reply throws with its message.
    func request(_ op: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        let id = try send(op, params)
        while true {
            let reply = try readObject()
            guard (reply["id"] as? Int) == id, reply["event"] == nil else { continue }
            guard reply["ok"] as? Bool == true else {
                throw BenchFailure("\(op) failed: \((reply["error"] as? [String: Any])?["message"] ?? reply)")
            }
            return reply["result"] as? [String: Any] ?? [:]
        }
    }
}
