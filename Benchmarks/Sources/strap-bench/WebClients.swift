import Foundation
import Synchronization

/// Plain HTTP/1.1 over a loopback TCP socket, as a script would speak to strapd-web: the
/// benchmark times strapd-web, so the client side stays a blocking socket, nothing more.
enum WebHTTP {
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else {
            let e = errno
            close(fd)
            throw BenchFailure("connect 127.0.0.1:\(port): errno \(e)")
        }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw BenchFailure("send: errno \(errno)") }
            sent += n
        }
    }

    static func request(path: String, cookie: String?) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + (cookie.map { "Cookie: \($0)\r\n" } ?? "") + "\r\n"
    }

    /// One GET with `Connection: close`, read to the end.
    static func get(port: UInt16, path: String, cookie: String? = nil) throws -> Answer {
        let fd = try connect(port: port)
        defer { close(fd) }
        try send(fd, request(path: path, cookie: cookie))
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            data += buffer[0..<n]
        }
        guard let split = headerEnd(data) else { throw BenchFailure("GET \(path): no HTTP header in \(data.count) bytes") }
        let lines = String(decoding: data[..<split], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw BenchFailure("GET \(path): no status line")
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(data[(split + 4)...])
        if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }), length < body.count {
            body = Array(body[..<length])
        }
        return Answer(status: status, headers: headers, body: body)
    }

    static func headerEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        return (0...(data.count - 4)).first { data[$0] == 13 && data[$0 + 1] == 10 && data[$0 + 2] == 13 && data[$0 + 3] == 10 }
    }
}

/// One EventSource-like client of /events on its own thread: it keeps the `sample` events'
/// data lines (WebFanOut.sampleKey) with the monotonic time the read that brought each
/// returned, for matching against strapd's own live stream.
final class SSEClient: @unchecked Sendable {
    struct Arrival {
        var key: String
        var nanos: UInt64
    }

    private let fd: Int32
    private let record: Bool
    private let state = Mutex<(arrivals: [Arrival], events: Int, opened: Bool)>(([], 0, false))
    private let finished = DispatchSemaphore(value: 0)

    init(port: UInt16, cookie: String, record: Bool) throws {
        fd = try WebHTTP.connect(port: port)
        self.record = record
        try WebHTTP.send(fd, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nCookie: \(cookie)\r\n\r\n")
        Thread { [self] in
            read()
            finished.signal()
        }.start()
    }

    var eventCount: Int { state.withLock { $0.events } }
    /// Whether the answer's header (200, text/event-stream) has arrived.
    var isOpen: Bool { state.withLock { $0.opened } }
    var arrivals: [Arrival] { state.withLock { $0.arrivals } }

    /// Ends the connection and joins the reading thread.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        finished.wait()
        Glibc.close(fd)
    }

    private func read() {
        var pending: [UInt8] = []
        var inBody = false
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let now = monotonicNanos()
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            pending += buffer[0..<n]
            if !inBody {
                guard let end = WebHTTP.headerEnd(pending) else { continue }
                let head = String(decoding: pending[..<end], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 200"), head.lowercased().contains("text/event-stream") else { return }
                pending.removeFirst(end + 4)
                inBody = true
                state.withLock { $0.opened = true }
            }
            // The body is chunked (an open-ended stream); the chunk-size lines sit between
            // frames, so frames are found by their `event:` lines whatever surrounds them.
            var frames: [Arrival] = []
            var count = 0
            while let end = Self.blankLine(pending) {
                let frame = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 2)
                guard let eventAt = frame.range(of: "event: ") else { continue }
                count += 1
                let rest = frame[eventAt.upperBound...]
                guard rest.hasPrefix("sample\n"), record, let dataAt = rest.range(of: "data: ") else { continue }
                frames.append(Arrival(key: Self.withoutFigures(rest[dataAt.upperBound...].prefix { $0 != "\n" }), nanos: now))
            }
            if count > 0 {
                state.withLock {
                    $0.events += count
                    $0.arrivals += frames
                }
            }
        }
    }

    /// The sample as strapd sent it: strapd-web's relay adds the dashboard's `figures` object
    /// (flat, and written last, as the relay appends it) to some samples, which strapd's own
    /// stream does not carry.
    static func withoutFigures(_ line: Substring) -> String {
        guard let figures = line.range(of: #","figures":{"#, options: .backwards) else { return String(line) }
        return String(line[..<figures.lowerBound]) + "}"
    }

    /// The index of the first "\n\n" (the end of a Server-Sent Events frame).
    static func blankLine(_ data: [UInt8]) -> Int? {
        guard data.count >= 2 else { return nil }
        return (0..<(data.count - 1)).first { data[$0] == 10 && data[$0 + 1] == 10 }
    }
}
