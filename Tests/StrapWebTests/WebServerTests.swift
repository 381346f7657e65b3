import Foundation
import Testing
import StrapWeb

/// strapd-web over real HTTP in front of a real `strapd --simulate` (docs/web.md). Each test
/// names the rule it guards; each fails when that rule is taken out of strapd-web.
/// Serialized: every test starts its own pair of processes, and the machine has 2 cores.
@Suite(.serialized) struct WebServerTests {
    /// A token that is well-formed but not the one strapd-web made.
    static let wrongToken = String(repeating: "0", count: 64)

    /// Rule: every page needs the token (WebSecurity.check's last refusal).
    @Test func everyPageWithoutTheTokenIsUnauthorized() throws {
        let web = try WebHarness()
        for path in ["/", "/app.js", "/metrics", "/events", "/api/status", "/no-such-page"] {
            let reply = try RawHTTP.request(port: web.port, path: path, host: web.host)
            #expect(reply.status == 401, "\(path) without a token")
            #expect(reply.header("WWW-Authenticate") == "Bearer")
            #expect(!reply.body.contains("<html"), "\(path) leaked the page")
        }
        let wrongBearer = try RawHTTP.request(port: web.port, path: "/", host: web.host,
                                              headers: [("Authorization", "Bearer \(Self.wrongToken)")])
        #expect(wrongBearer.status == 401)
        let wrongQuery = try RawHTTP.request(port: web.port, path: "/?token=\(Self.wrongToken)", host: web.host)
        #expect(wrongQuery.status == 401)
        #expect(wrongQuery.header("Set-Cookie") == nil, "a wrong token opened a session")
        web.stop()
    }

    /// Rule: the token opens the page, by header (scripts) or by the URL, which trades it for
    /// an HttpOnly, SameSite=Strict session cookie and takes it out of the address bar.
    @Test func theTokenOpensThePage() throws {
        let web = try WebHarness()
        let byBearer = try RawHTTP.request(port: web.port, path: "/", host: web.host, headers: [web.bearer])
        #expect(byBearer.status == 200)
        #expect(byBearer.body.contains("<!DOCTYPE html>"))
        let csp = byBearer.header("Content-Security-Policy") ?? ""
        #expect(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "CSP: \(csp)")

        let byURL = try RawHTTP.request(port: web.port, path: "/?token=\(web.token)", host: web.host)
        #expect(byURL.status == 303)
        #expect(byURL.header("Location") == "/")
        let setCookie = byURL.header("Set-Cookie") ?? ""
        #expect(setCookie.hasPrefix(SessionBook.cookieName + "="))
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), "cookie: \(setCookie)")
        let cookie = try String(#require(setCookie.split(separator: ";").first))
        let byCookie = try RawHTTP.request(port: web.port, path: "/", host: web.host, headers: [("Cookie", cookie)])
        #expect(byCookie.status == 200)
        #expect(byCookie.body.contains("<!DOCTYPE html>"))
        // The redirect stays on this server: a path that a browser reads as another host's
        // (`//host/`, `/\\host/`) goes to `/`; an ordinary one is kept.
        for (path, location) in [("//evil.example/", "/"), ("/%5Cevil.example/", "/"), ("/app.css", "/app.css")] {
            let reply = try RawHTTP.request(port: web.port, path: "\(path)?token=\(web.token)", host: web.host)
            #expect(reply.status == 303 && reply.header("Location") == location, "\(path): \(reply.status) \(reply.header("Location") ?? "-")")
        }
        web.stop()
    }

    /// Rule: the Host header must name this machine (or an --allow-host name), whatever the
    /// credentials: a DNS-rebinding page reaches strapd-web under its own name.
    @Test func aForeignHostIsRefusedEvenWithTheToken() throws {
        let web = try WebHarness(webArguments: ["--allow-host", "strapd.example"])
        for host in ["evil.example:\(web.port)", "evil.example", "127.0.0.1.evil.example:\(web.port)", "localhost.evil.example"] {
            let reply = try RawHTTP.request(port: web.port, path: "/", host: host, headers: [web.bearer])
            #expect(reply.status == 403, "Host: \(host)")
            #expect(!reply.body.contains("<html"), "Host: \(host) was served the page")
        }
        // No Host at all (libmicrohttpd 0.9.75 lets an HTTP/1.1 request without one through).
        let hostless = try RawHTTP.request(port: web.port, path: "/", host: nil, headers: [web.bearer])
        #expect(hostless.status == 403, "no Host: \(hostless.status)")
        // The names that are this machine, and the one the administrator added, are served.
        for host in [web.host, "localhost:\(web.port)", "LOCALHOST", "strapd.example:\(web.port)"] {
            let reply = try RawHTTP.request(port: web.port, path: "/", host: host, headers: [web.bearer])
            #expect(reply.status == 200, "Host: \(host)")
        }
        web.stop()
    }

    /// Rule: a request that changes something (POST /logout) with the session cookie must come
    /// from strapd-web's own origin (CSRF), and logging out ends the session.
    @Test func aChangeWithTheCookieNeedsOurOrigin() throws {
        let web = try WebHarness()
        let opened = try RawHTTP.request(port: web.port, path: "/?token=\(web.token)", host: web.host)
        let cookie = try #require(opened.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let noOrigin = try RawHTTP.request(port: web.port, method: "POST", path: "/logout", host: web.host, headers: [("Cookie", cookie)])
        #expect(noOrigin.status == 403)
        let foreign = try RawHTTP.request(port: web.port, method: "POST", path: "/logout", host: web.host,
                                          headers: [("Cookie", cookie), ("Origin", "http://evil.example")])
        #expect(foreign.status == 403)
        let stillOpen = try RawHTTP.request(port: web.port, path: "/", host: web.host, headers: [("Cookie", cookie)])
        #expect(stillOpen.status == 200, "a refused logout ended the session")
        let own = try RawHTTP.request(port: web.port, method: "POST", path: "/logout", host: web.host,
                                      headers: [("Cookie", cookie), ("Origin", "http://\(web.host)")])
        #expect(own.status == 204)
        let afterLogout = try RawHTTP.request(port: web.port, path: "/", host: web.host, headers: [("Cookie", cookie)])
        #expect(afterLogout.status == 401)
        web.stop()
    }

    /// Rule: /metrics is Prometheus text with a heart-rate gauge for each connected strap,
    /// fed by the live relay (strapd's status does not carry heart rates).
    @Test func metricsCarryTheSimulatedStrapsHeartRate() throws {
        let web = try WebHarness()
        let family = "strapd_device_heart_rate_beats_per_minute"
        var reply: HTTPReply?
        var line: Substring?
        for _ in 0..<150 where line == nil {
            reply = try RawHTTP.request(port: web.port, path: "/metrics", host: web.host, headers: [web.bearer])
            line = reply?.body.split(separator: "\n").first { $0.hasPrefix(family + "{") }
            if line == nil { usleep(200_000) }
        }
        let metrics = try #require(reply)
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let sample = try #require(line, "no \(family) within 30 s:\n\(metrics.body)\nstrapd-web: \(web.log("web"))")
        #expect(sample.contains(#"name="Sim HR 0""#), "\(sample)")
        let value = Double(sample.split(separator: " ").last ?? "")
        #expect(value.map { (30...230).contains($0) } == true, "\(sample)")
        #expect(metrics.body.contains("\nstrapd_up 1\n"))
        #expect(metrics.body.contains("# TYPE \(family) gauge\n"))
        Self.expectExpositionFormat(metrics.body)
        web.stop()
    }

    /// Rule: /events relays strapd's live stream as Server-Sent Events: a heart-rate sample of
    /// the simulated strap arrives, and it is live (timed now, not read back from the store).
    @Test func eventsRelayALiveHeartRate() throws {
        let web = try WebHarness()
        let marker = "event: sample\ndata: {\"type\":\"heartRate\""
        let reply = try RawHTTP.exchange(port: web.port, path: "/events", host: web.host, headers: [web.bearer], timeout: 30) {
            $0.contains(marker) && $0[$0.range(of: marker)!.upperBound...].contains("\n\n")
        }
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "text/event-stream")
        let start = try #require(reply.body.range(of: marker), "no heart-rate event within 30 s:\n\(reply.body)")
        let frame = reply.body[start.lowerBound...].components(separatedBy: "\n\n")[0]
        let data = try #require(frame.split(separator: "\n").first { $0.hasPrefix("data: ") }).dropFirst(6)
        let sample = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
        let device = try #require(sample["device"] as? [String: Any])
        #expect(device["name"] as? String == "Sim HR 0")
        #expect((sample["value"] as? Double).map { (30...230).contains($0) } == true, "\(sample)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let time = try #require((sample["start"] as? String).flatMap(formatter.date(from:)), "\(sample)")
        #expect(abs(time.timeIntervalSinceNow) < 10, "not live: \(sample["start"] ?? "")")
        web.stop()
    }

    /// Rule: an /events client that leaves is let go (its queue and its place in the relay),
    /// which /metrics counts in `strapd_web_event_clients`.
    @Test func anEventsClientThatLeavesIsLetGo() throws {
        let web = try WebHarness()
        func eventClients() throws -> String? {
            let metrics = try RawHTTP.request(port: web.port, path: "/metrics", host: web.host, headers: [web.bearer])
            return metrics.body.split(separator: "\n").first { $0.hasPrefix("strapd_web_event_clients ") }.map { String($0.split(separator: " ")[1]) }
        }
        var whileOpen: String?
        // Counted while the stream is open (the check runs from inside the read loop).
        _ = try RawHTTP.exchange(port: web.port, path: "/events", host: web.host, headers: [web.bearer], timeout: 30) {
            guard $0.contains("event: sample") else { return false }
            whileOpen = try? eventClients()
            return true
        }
        #expect(whileOpen == "1")
        // Closed: strapd-web notices at its next write (the simulator sends every second).
        var afterClose = try eventClients()
        for _ in 0..<150 where afterClose != "0" {
            usleep(200_000)
            afterClose = try eventClients()
        }
        #expect(afterClose == "0")
        web.stop()
    }

    /// Rule: /api/devices is strapd's `devices.list` result, asked through StrapKit, as JSON;
    /// with strapd gone it is a 502 naming strapd, and /metrics says `strapd_up 0`.
    @Test func apiForwardsStrapdsDeviceListAndSaysWhenStrapdIsGone() throws {
        let web = try WebHarness()
        let reply = try RawHTTP.request(port: web.port, path: "/api/devices", host: web.host, headers: [web.bearer])
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/json")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
        let names = (body["devices"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.contains("Sim HR 0"), "\(reply.body)")

        web.stopStrapd()
        let gone = try RawHTTP.request(port: web.port, path: "/api/devices", host: web.host, headers: [web.bearer])
        #expect(gone.status == 502, "\(gone.status) \(gone.body)")
        #expect(gone.body.contains("strapd"))
        let metrics = try RawHTTP.request(port: web.port, path: "/metrics", host: web.host, headers: [web.bearer])
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("\nstrapd_up 0\n"), "\(metrics.body)")
        web.stop()
    }

    /// Each line is a HELP or TYPE comment or `name{labels} value`, and each sample's family
    /// was TYPEd before it (what `promtool check metrics` checks first).
    static func expectExpositionFormat(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var typed: Set<String> = []
        let sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.e+]+|NaN|[+-]Inf)$/
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# HELP ") { continue }
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 4 && ["gauge", "counter"].contains(parts[3]), "\(line)", sourceLocation: sourceLocation)
                if parts.count == 4 { typed.insert(String(parts[2])) }
                continue
            }
            guard let match = try? sampleLine.wholeMatch(in: String(line)) else {
                Issue.record("not exposition format: \(line)", sourceLocation: sourceLocation)
                continue
            }
            #expect(typed.contains(String(match.1)), "\(match.1) has no TYPE line before it", sourceLocation: sourceLocation)
        }
    }
}
