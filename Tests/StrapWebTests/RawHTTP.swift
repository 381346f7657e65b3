import Foundation
import Glibc

/// HTTP/1.1 over a plain loopback TCP socket, written by hand so a test controls every byte
/// it sends (a foreign Host header, no Host at all, a given Origin), which URLSession and
/// curl both second-guess. Only what the tests read: the status line, headers, and a body
/// with Content-Length, to the end, or chunked (the Server-Sent Events stream).
struct HTTPFailure: Error, CustomStringConvertible {
    let description: String
}

struct HTTPReply {
    let status: Int
    let headers: [(name: String, value: String)]
    /// The body as far as it was read, chunked framing removed.
    let body: String
    /// The same bytes as they came (a binary body: a FIT file).
    var data: [UInt8] = []

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

enum RawHTTP {
    /// One request on a connection of its own (`Connection: close`), read to the end.
    /// `host` nil sends no Host header at all.
    static func request(port: UInt16, method: String = "GET", path: String, host: String?,
                        headers: [(String, String)] = [], body: String? = nil, timeout: Double = 10) throws(HTTPFailure) -> HTTPReply {
        try exchange(port: port, method: method, path: path, host: host, headers: headers, body: body, timeout: timeout) { _ in false }
    }

    /// A request whose response does not end by itself (Server-Sent Events): reads until
    /// `enough` holds for the body read so far, or `timeout` seconds have passed, then closes.
    static func exchange(port: UInt16, method: String = "GET", path: String, host: String?, headers: [(String, String)] = [],
                         body: String? = nil, timeout: Double, until enough: (String) -> Bool) throws(HTTPFailure) -> HTTPReply {
        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        var request = "\(method) \(path) HTTP/1.1\r\n"
        if let host { request += "Host: \(host)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
        request += "Connection: close\r\n\r\n" + (body ?? "")
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw HTTPFailure(description: "send: \(errno)")
        }
        var received: [UInt8] = []
        let deadline = now() + timeout
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if let reply = parse(received), enough(reply.body) { return reply }
            let left = deadline - now()
            if left <= 0 { break }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000) + 1)
            if ready < 0, errno != EINTR { throw HTTPFailure(description: "poll: \(errno)") }
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }  // the server closed: the response is complete
            received += buffer[..<n]
        }
        guard let reply = parse(received) else {
            throw HTTPFailure(description: "no complete response head within \(timeout) s: \(String(decoding: received, as: UTF8.self))")
        }
        return reply
    }

    private static func connectLoopback(port: UInt16) throws(HTTPFailure) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPFailure(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let e = errno
            close(fd)
            throw HTTPFailure(description: "connect 127.0.0.1:\(port): \(e)")
        }
        return fd
    }

    private static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// The response in `raw` once its head is complete; nil before.
    static func parse(_ raw: [UInt8]) -> HTTPReply? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard raw.count >= 4, let end = (0...(raw.count - 4)).first(where: { Array(raw[$0..<($0 + 4)]) == separator }) else { return nil }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(raw[(end + 4)...])
        if headers.contains(where: { $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased() == "chunked" }) {
            body = dechunk(body)
        }
        return HTTPReply(status: status, headers: headers, body: String(decoding: body, as: UTF8.self), data: body)
    }

    /// The chunks' data, as far as whole chunks were received.
    static func dechunk(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while let lineEnd = (i..<max(i, raw.count - 1)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 }) {
            let sizeText = String(decoding: raw[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0,
                  lineEnd + 2 + size <= raw.count else { break }
            out += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            i = lineEnd + 2 + size + 2
            if i >= raw.count { break }
        }
        return out
    }
}
