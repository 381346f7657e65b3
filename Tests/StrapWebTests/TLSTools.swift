import Foundation
import Glibc

/// A throwaway certificate and key made by `openssl req -x509` in a temp directory, for
/// 127.0.0.1, localhost and `lanAddress` when the machine has one, plus a second key that
/// belongs to no certificate here.
final class TLSFixture {
    let directory: String
    var certificate: String { directory + "/cert.pem" }
    var key: String { directory + "/key.pem" }
    var otherKey: String { directory + "/other-key.pem" }
    /// The options that serve TLS with this pair.
    var arguments: [String] { ["--tls-cert", certificate, "--tls-key", key] }

    init(name: String = #function) throws {
        directory = NSTemporaryDirectory() + "strapweb-tls-\(name.filter(\.isLetter).prefix(10))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let names = ["DNS:localhost", "IP:127.0.0.1"] + (TLSFixture.lanAddress.map { ["IP:\($0)"] } ?? [])
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                          "-subj", "/CN=strapd-web test", "-addext", "subjectAltName=" + names.joined(separator: ","),
                          "-keyout", key, "-out", certificate])
        try Self.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", otherKey])
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    struct OpenSSLFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static func openssl(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = arguments
        // A file, not a pipe (TLSClient says why).
        let log = NSTemporaryDirectory() + "strapweb-openssl-\(UUID().uuidString.prefix(8)).stderr"
        FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard p.terminationStatus == 0 else { throw OpenSSLFailure(description: "openssl \(arguments.joined(separator: " ")): \(text)") }
    }

    /// This machine's first IPv4 address that is not loopback (an interface that is up), or nil.
    static let lanAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let e = entry {
            defer { entry = e.pointee.ifa_next }
            guard let address = e.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET,
                  e.pointee.ifa_flags & UInt32(IFF_UP) != 0, e.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0 else { continue }
            var inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &inet, &text, socklen_t(text.count)) != nil else { continue }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }()
}

/// HTTP/1.1 over TLS through `openssl s_client`, which verifies the server's certificate
/// against `caFile` and its address or name before a byte of the request goes out
/// (`-verify_return_error`); the request is written by hand as RawHTTP's, so the test controls
/// the Host header.
enum TLSClient {
    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    static func request(address: String = "127.0.0.1", port: UInt16, caFile: String, path: String, host: String?,
                        headers: [(String, String)] = [], method: String = "GET") throws -> HTTPReply {
        var request = "\(method) \(path) HTTP/1.1\r\n"
        if let host { request += "Host: \(host)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "Connection: close\r\n\r\n"
        // s_client reads on after stdin ends until the server closes (Connection: close).
        return try exchange(request, address: address, port: port, caFile: caFile, seconds: 20, until: nil)
    }

    /// `request` through `openssl s_client -quiet` (only the server's bytes on stdout; it
    /// keeps the connection after stdin ends), watched every 10 ms until it exits, `enough`
    /// holds for the response so far, or `seconds` have passed; then killed. Throws when no
    /// response head came at all.
    static func exchange(_ request: String, address: String, port: UInt16, caFile: String, seconds: Int,
                         until enough: ((HTTPReply) -> Bool)?) throws -> HTTPReply {
        // Files, not pipes: tests run side by side and start children, and a child started
        // meanwhile may inherit a pipe's write end, so its end of file would never come.
        let exchange = NSTemporaryDirectory() + "strapweb-tls-exchange-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: exchange + ".in", contents: Data(request.utf8))
        FileManager.default.createFile(atPath: exchange + ".out", contents: nil)
        FileManager.default.createFile(atPath: exchange + ".err", contents: nil)
        defer { for end in [".in", ".out", ".err"] { try? FileManager.default.removeItem(atPath: exchange + end) } }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["s_client", "-connect", "\(address):\(port)", "-CAfile", caFile, "-verify_return_error",
                       "-verify_ip", address, "-quiet"]
        p.standardInput = FileHandle(forReadingAtPath: exchange + ".in")
        p.standardOutput = FileHandle(forWritingAtPath: exchange + ".out")
        p.standardError = FileHandle(forWritingAtPath: exchange + ".err")
        try p.run()
        var reply: HTTPReply?
        for _ in 0..<(seconds * 100) where p.isRunning {
            if let enough {
                reply = RawHTTP.parse(Array(FileManager.default.contents(atPath: exchange + ".out") ?? Data()))
                if let reply, enough(reply) { break }
            }
            usleep(10_000)
        }
        // SIGKILL, not terminate(): s_client inherits this process' signal mask, in which
        // libdispatch blocks SIGTERM, so a SIGTERM stays pending and waitUntilExit never returns.
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        // What arrived up to the end, in case it came after the last look.
        reply = RawHTTP.parse(Array(FileManager.default.contents(atPath: exchange + ".out") ?? Data())) ?? reply
        guard let reply else {
            let stderr = String(decoding: FileManager.default.contents(atPath: exchange + ".err") ?? Data(), as: UTF8.self)
            throw Refused(description: "no HTTP response over TLS (openssl exit \(p.terminationStatus)): \(stderr)")
        }
        return reply
    }
}
