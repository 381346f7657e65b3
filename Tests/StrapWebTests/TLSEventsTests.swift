import Foundation
import Glibc
import Testing
import StrapWeb

/// Rule (docs/web.md, "TLS"): over TLS the live stream works as over plain HTTP, with what a
/// browser holds: the session cookie the token URL set (Secure), sent by the page's EventSource.
/// Without it the stream is refused over TLS too.
@Suite struct TLSEventsTests {
    @Test func eventsStreamSamplesOverTLSWithTheSessionCookie() throws {
        let tls = try TLSFixture()
        let web = try WebHarness(webArguments: tls.arguments)
        let opened = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/?token=\(web.token)", host: web.host)
        #expect(opened.status == 303)
        let setCookie = try #require(opened.header("Set-Cookie"))
        // What the browser sends back: the name=value pair, not the attributes.
        let cookie = String(setCookie.prefix { $0 != ";" })
        #expect(cookie.hasPrefix(SessionBook.cookieName + "="), "\(setCookie)")

        let marker = "event: sample\ndata: "
        let events = try TLSClient.stream(port: web.port, caFile: tls.certificate, path: "/events", host: web.host,
                                          headers: [("Cookie", cookie), ("Accept", "text/event-stream")]) { body in
            guard let start = body.range(of: marker) else { return false }
            return body[start.upperBound...].contains("\n\n")
        }
        #expect(events.status == 200)
        #expect(events.header("Content-Type") == "text/event-stream")
        let start = try #require(events.body.range(of: marker), "no sample frame over TLS:\n\(events.body.prefix(500))")
        let data = events.body[start.upperBound...].prefix { $0 != "\n" }
        let sample = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any], "\(data)")
        let device = try #require(sample["device"] as? [String: Any], "\(sample)")
        #expect((device["name"] as? String)?.hasPrefix("Sim ") == true, "\(sample)")
        #expect(sample["type"] is String, "\(sample)")

        let refused = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/events", host: web.host)
        #expect(refused.status == 401, "\(refused.status) \(refused.body)")
        web.stop()
    }
}

extension TLSClient {
    /// A request over TLS whose response does not end by itself (Server-Sent Events):
    /// `openssl s_client` as `request` runs it, read until `enough` holds for the body so far,
    /// or 30 s have passed, then killed. Throws when no response head came at all.
    static func stream(address: String = "127.0.0.1", port: UInt16, caFile: String, path: String, host: String,
                       headers: [(String, String)], until enough: (String) -> Bool) throws -> HTTPReply {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        // Files, not pipes, for the reason `request` gives.
        let exchange = NSTemporaryDirectory() + "strapweb-tls-stream-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: exchange + ".in", contents: Data(request.utf8))
        FileManager.default.createFile(atPath: exchange + ".out", contents: nil)
        FileManager.default.createFile(atPath: exchange + ".err", contents: nil)
        defer { for end in [".in", ".out", ".err"] { try? FileManager.default.removeItem(atPath: exchange + end) } }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        // -quiet implies -ign_eof: the connection stays open after the request is written.
        p.arguments = ["s_client", "-connect", "\(address):\(port)", "-CAfile", caFile, "-verify_return_error",
                       "-verify_ip", address, "-quiet"]
        p.standardInput = FileHandle(forReadingAtPath: exchange + ".in")
        p.standardOutput = FileHandle(forWritingAtPath: exchange + ".out")
        p.standardError = FileHandle(forWritingAtPath: exchange + ".err")
        try p.run()
        var reply: HTTPReply?
        for _ in 0..<3000 {
            reply = RawHTTP.parse(Array(FileManager.default.contents(atPath: exchange + ".out") ?? Data()))
            if let reply, enough(reply.body) { break }
            if !p.isRunning { break }
            usleep(10_000)
        }
        // SIGKILL, not terminate(): s_client inherits this process' signal mask, in which
        // libdispatch blocks SIGTERM, so a SIGTERM stays pending and waitUntilExit never returns
        // (seen: the test hung with the frame long read).
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
