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
                       headers: [(String, String)], until enough: @escaping (String) -> Bool) throws -> HTTPReply {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        return try exchange(request, address: address, port: port, caFile: caFile, seconds: 30, until: { enough($0.body) })
    }
}
