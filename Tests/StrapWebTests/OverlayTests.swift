import Foundation
import Glibc
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// `/overlay` and its read-only token (docs/web.md, "The overlay"), over real HTTP in front
/// of a real `strapd --simulate=2`, and in a real browser. Each refusal is paired with the
/// same request made with the main token, so a 403 is the overlay rule's and not a broken
/// request's.
@Suite(.serialized) struct OverlayTests {
    /// Paths the overlay token must not open, each of which the main token opens.
    static let closedPaths = ["/api/devices", "/api/status", "/api/sessions", "/metrics", "/", "/index.html", "/app.js",
                              "/workout", "/workout.js"]

    /// Rule: the overlay token, as `?token=`, as its cookie or as a bearer token, reads
    /// /overlay, its files and /events, and nothing else: every other page, /api/*, /metrics
    /// and every POST is 403, even with the page's own Origin; no workout starts. The main
    /// token still opens everything, /overlay included.
    @Test func theOverlayTokenReadsTheOverlayAndCannotSteer() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let overlay = web.overlayToken
        #expect(overlay.count == 64 && overlay != web.token, "overlay token '\(overlay)'")
        let mode = try FileManager.default.attributesOfItem(atPath: web.webState + "/" + AccessToken.overlayFileName)[.posixPermissions] as? Int
        #expect(mode == 0o600, "overlay-token mode \(String(mode ?? 0, radix: 8))")

        let (port, host) = (web.port, web.host)
        func get(_ path: String, _ headers: [(String, String)] = []) async throws -> HTTPReply {
            try await Self.send(port, host, path, headers)
        }
        let opened = try await get("/overlay?token=\(overlay)&size=80")
        #expect(opened.status == 200, "GET /overlay?token=: \(opened.status) \(opened.body)")
        #expect(opened.header("Content-Security-Policy") == WebSecurity.contentSecurityPolicy)
        let cookie = try #require(opened.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        #expect(cookie.hasPrefix(WebSecurity.overlayCookieName + "="), "cookie \(cookie)")
        let origin = ("Origin", "http://\(host)")
        let byCookie = [("Cookie", cookie)], byBearer = [("Authorization", "Bearer \(overlay)")]

        for headers in [byCookie, byBearer] {
            for path in ["/overlay", "/overlay.css", "/overlay.js"] {
                let reply = try await get(path, headers)
                #expect(reply.status == 200, "\(headers[0].0) GET \(path): \(reply.status)")
            }
            let events = try await WorkoutAPITests.onThread {
                try RawHTTP.exchange(port: port, path: "/events", host: host, headers: headers, timeout: 30) { $0.contains("event: sample") }
            }
            #expect(events.status == 200 && events.body.contains("event: sample"), "\(headers[0].0) /events: \(events.status) \(events.body.prefix(200))")
            for path in Self.closedPaths {
                let reply = try await get(path, headers)
                #expect(reply.status == 403, "\(headers[0].0) GET \(path): \(reply.status)")
            }
            for (path, body) in [("/api/workout/start", #"{"activityType":"cycling"}"#), ("/logout", "{}")] {
                let reply = try await Self.send(port, host, path, headers + [origin, ("Content-Type", "application/json")], method: "POST", body: body)
                #expect(reply.status == 403, "\(headers[0].0) POST \(path) with our Origin: \(reply.status) \(reply.body)")
            }
        }
        // As the URL's query on another page: refused, not redirected into a session.
        for path in ["/api/devices", "/", "/metrics", "/workout"] {
            let reply = try await get(path + "?token=\(overlay)")
            #expect(reply.status == 403, "GET \(path)?token=overlay: \(reply.status)")
            #expect(reply.header("Set-Cookie") == nil, "GET \(path)?token=overlay set a cookie")
        }
        // The overlay's cookie still opens the overlay after all that (no refusal ended it).
        #expect(try await get("/overlay", byCookie).status == 200)
        let (open, _) = try await WorkoutAPITests.strapdWorkouts(web)
        #expect(open.isEmpty, "the overlay token started \(open)")

        // The main token: every path the overlay may not open, and the overlay itself.
        for path in Self.closedPaths + ["/overlay", "/overlay.css", "/overlay.js"] {
            let reply = try await get(path, [web.bearer])
            #expect(reply.status == 200, "main token GET \(path): \(reply.status)")
        }
        let start = try await Self.send(port, host, "/api/workout/start", [web.bearer, ("Content-Type", "application/json")],
                                        method: "POST", body: #"{"activityType":"cycling"}"#)
        #expect(start.status == 200, "main token start: \(start.status) \(start.body)")
        #expect(try await WorkoutAPITests.strapdWorkouts(web).open.count == 1)
    }

    /// Rule: the overlay token's file is made and checked as the main one's: 64 hex digits,
    /// 0600, kept across loads; refused when others may read it or it holds no token; and
    /// strapd-web refuses to start when it equals the main token (a copied file would make
    /// the read-only URL steer).
    @Test func theOverlayTokenFileIsMadeAndCheckedLikeTheToken() throws {
        let dir = "/tmp/strapweb-ovtoken-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + AccessToken.overlayFileName
        let token = try AccessToken.loadOrCreate(in: dir, file: AccessToken.overlayFileName)
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try AccessToken.loadOrCreate(in: dir, file: AccessToken.overlayFileName) == token)
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + AccessToken.fileName), "the main token was made too")
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        #expect(throws: TokenFileError.tooOpen(path: path, mode: 0o640)) { try AccessToken.loadOrCreate(in: dir, file: AccessToken.overlayFileName) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try Data("not a token\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: TokenFileError.malformed(path: path)) { try AccessToken.loadOrCreate(in: dir, file: AccessToken.overlayFileName) }

        // The same token in both files: strapd-web exits 1 naming the overlay file, and writes no URL.
        try FileManager.default.removeItem(atPath: path)
        let main = try AccessToken.loadOrCreate(in: dir)
        #expect(FileManager.default.createFile(atPath: path, contents: Data((main + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let web = Process()
        web.executableURL = WebHarness.buildDirectory.appendingPathComponent("strapd-web")
        web.arguments = ["--listen", "127.0.0.1:0", "--socket", dir + "/none.sock", "--state-dir", dir]
        let err = Pipe()
        web.standardError = err
        try web.run()
        // A strapd-web that accepted the files would serve on: stopped after 10 s.
        for _ in 0..<500 where web.isRunning { usleep(20_000) }
        if web.isRunning { web.terminate() }
        web.waitUntilExit()
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(web.terminationStatus == 1, "strapd-web exited \(web.terminationStatus): \(said)")
        #expect(said.contains(AccessToken.overlayFileName) && said.contains("equals the token"), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + AccessToken.urlFileName))
    }

    static func send(_ port: UInt16, _ host: String, _ path: String, _ headers: [(String, String)] = [], method: String = "GET",
                     body: String? = nil) async throws -> HTTPReply {
        try await WorkoutAPITests.onThread {
            try RawHTTP.request(port: port, method: method, path: path, host: host, headers: headers, body: body)
        }
    }

    /// Rule: the overlay's /events carries heart-rate samples only, each cut to type, value and
    /// the device's address and name. The main token's stream, read beside it, carries the
    /// speed/cadence sensor's samples too, so the filter has something to leave out.
    @Test func theOverlaysStreamCarriesHeartRatesOnly() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let (port, host, bearer, overlay) = (web.port, web.host, web.bearer, web.overlayToken)
        let (full, cut, status) = try await WorkoutAPITests.onThread {
            let full = try RawHTTP.exchange(port: port, path: "/events", host: host, headers: [bearer], timeout: 30) {
                Self.frames($0).contains { $0.event == "sample" && !$0.data.contains(#""heartRate""#) }
            }
            let cut = try RawHTTP.exchange(port: port, path: "/events", host: host,
                                           headers: [("Authorization", "Bearer \(overlay)")], timeout: 8) { _ in false }
            return (Self.frames(full.body), Self.frames(cut.body), cut.status)
        }
        #expect(status == 200, "the overlay's /events: \(status)")
        #expect(full.contains { $0.event == "sample" && !$0.data.contains(#""heartRate""#) }, "the main stream: \(full.prefix(5))")
        #expect(cut.count >= 2, "the overlay's stream in 8 s: \(cut)")
        for frame in cut {
            #expect(frame.event == "sample", "the overlay got \(frame.event): \(frame.data)")
            guard case .object(let o)? = try? JSONParser.parse(Array(frame.data.utf8)) else {
                Issue.record("not JSON: \(frame.data)")
                continue
            }
            #expect(Set(o.keys) == ["type", "value", "device"], "members \(o.keys.sorted())")
            #expect(WorkoutAPITests.string(o["type"]) == "heartRate")
            let deviceKeys = Set(WorkoutAPITests.object(o["device"]).map { Array($0.keys) } ?? [])
            #expect(deviceKeys.contains("address") && deviceKeys.isSubset(of: ["address", "name"]), "device members \(deviceKeys)")
        }
    }

    /// (event, data) of each Server-Sent Events frame in `body`; comments left out.
    static func frames(_ body: String) -> [(event: String, data: String)] {
        body.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard let event = lines.first(where: { $0.hasPrefix("event: ") }), let data = lines.first(where: { $0.hasPrefix("data: ") }) else { return nil }
            return (String(event.dropFirst(7)), String(data.dropFirst(6)))
        }
    }

    /// Rule: a setting that is not on the lists never reaches the page or its stylesheet: a
    /// hostile colour, font, layout, size or device is dropped for the default, while valid
    /// ones come through. Checked on the served HTML and CSS, over HTTP.
    @Test func hostileSettingsNeverReachThePageOrItsStyle() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        let hostile = ["red;background:url(https://evil.example/x)", "red}body{display:none", "</style><script>alert(1)</script>",
                       "#fff\"><img src=x onerror=alert(1)>", "expression(alert(1))", "#12345g", "javascript:alert(1)", "#ffff",
                       "var(--x)", "rgb(1,2,3)"]
        let bearer = ("Authorization", "Bearer \(web.overlayToken)")
        let (port, host) = (web.port, web.host)
        for value in hostile {
            let q = Self.encoded(value)
            let query = "color=\(q)&font=\(q)&layout=\(q)&size=\(q)&device=\(q)&max=\(q)&zone=\(q)"
            let page = try await Self.send(port, host, "/overlay?" + query, [bearer])
            let css = try await Self.send(port, host, "/overlay.css?" + query, [bearer])
            #expect(page.status == 200 && css.status == 200)
            for (what, text) in [("page", page.body), ("stylesheet", css.body)] {
                for piece in ["evil", "url(", "<script>", "<img", "alert", "display:none", "expression", "12345g", "var(", "rgb("] {
                    #expect(!text.contains(piece), "\(what) with color=\(value) holds '\(piece)'")
                }
            }
            // The page's one script element is its own.
            #expect(page.body.components(separatedBy: "<script").count == 2, "script elements in the page for \(value): \(page.body)")
            #expect(css.body.contains("color: white;"), "the default colour is gone for \(value): \(css.body.prefix(300))")
            #expect(page.body.contains(#"href="/overlay.css?color=white&amp;size=120&amp;font=sans&amp;layout=stack""#),
                    "the page's stylesheet link for \(value): \(page.body)")
        }
        // Valid settings come through, each where it belongs.
        let good = "color=%23ffcc00&size=64&font=mono&layout=row&device=5e:1a:00:00:00:01&max=200&zone=n"
        let page = try await Self.send(port, host, "/overlay?" + good, [bearer]).body
        #expect(page.contains(#"class="plain row" data-device="5E:1A:00:00:00:01" data-zones="100,120,140,160,180""#), "\(page)")
        let css = try await Self.send(port, host, "/overlay.css?" + good, [bearer]).body
        #expect(css.contains("color: #ffcc00;") && css.contains("font-size: 64px;") && css.contains("monospace"), "\(css)")
        #expect(css.contains("background: transparent") && css.contains("overflow: hidden"), "\(css)")
        #expect(try await Self.send(port, host, "/overlay.css?color=gold", [bearer]).body.contains("color: gold;"))
    }

    /// Rule: the zones are the athlete's own when strapd has them (its profile's scheme in bpm,
    /// as workouts use it), 50–90 % of `max` when the URL gives one, else 50–90 % of 190.
    @Test func theZonesAreTheAthletesElseTheDefault() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        let (port, host, bearer) = (web.port, web.host, ("Authorization", "Bearer \(web.overlayToken)"))
        func zones(_ query: String) async throws -> String {
            let page = try await Self.send(port, host, "/overlay" + query, [bearer]).body
            return page.components(separatedBy: "data-zones=\"").dropFirst().first?.components(separatedBy: "\"").first ?? "none in \(page)"
        }
        #expect(try await zones("") == "95,114,133,152,171", "no profile: the default")
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        _ = try await store.request("profile.set", ["athlete": .string("ana"), "profile": .object([
            "maximumHeartRate": .int(200),
            "heartRateZones": .object(["method": .string("percentMaxHR"), "bounds": .array([55, 65, 75, 85, 92, 100].map { .int($0) })]),
        ])])
        #expect(try await zones("?athlete=ana") == "110,130,150,170,184", "ana's profile")
        #expect(try await zones("?athlete=ana&max=180") == "90,108,126,144,162", "max= over the profile")
        #expect(try await zones("") == "95,114,133,152,171", "the default athlete has no profile")
        #expect(try await zones("?athlete=%3Cb%3E") == "95,114,133,152,171", "a name off the pattern is the default athlete")
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    /// Rule: the overlay, opened in Chromium with the overlay URL strapd-web wrote (plus
    /// settings), shows the strap's heart rate and follows it: two different values, each one
    /// strapd stored for the strap (samples.query through StrapKit), on a transparent page
    /// without scrollbars, under the CSP, without a console error. Screenshot `overlay.png`.
    @Test func theOverlayShowsTheStrapsHeartRateAsItChanges() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let url = try String(contentsOfFile: web.webState + "/" + AccessToken.overlayURLFileName, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines) + "&size=160&color=%23ffee00&font=rounded"
        let script = Browser.repository + "/Tests/Fixtures/web/overlay.py"
        let report = try await Browser.run(script: script, web, screenshot: "overlay.png", [url, Browser.artifacts + "/overlay.png"])
        let shown = (report["values"] as? [String] ?? []).compactMap { Int($0) }
        #expect(Set(shown).count >= 2, "the overlay showed \(report["values"] ?? "nothing")")
        let address = try #require(try await BrowserTests.addressesByName(web)["Sim HR 0"])
        let stored = await BrowserTests.storedHeartRates(web, address: address, until: { Set(shown).isSubset(of: $0) })
        #expect(Set(shown).isSubset(of: stored), "shown \(shown); strapd stored \(stored)")
        #expect(report["zone"] as? String ?? "" != "" || shown.allSatisfy { $0 < 95 }, "no zone shown: \(report)")
        #expect(report["background"] as? String == "rgba(0, 0, 0, 0)", "background \(report["background"] ?? "?")")
        #expect(report["scrolls"] as? Bool == false, "the page scrolls")
        #expect(report["fontSize"] as? String == "160px", "font size \(report["fontSize"] ?? "?")")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "CSP violations: \(report["violations"] ?? "?")")
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")
        Browser.expectScreenshot(report, "overlay.png")
    }

    /// Rule: the overlay writes the device's name as text. Every name its stream brings is
    /// replaced in the browser by `BrowserTests.hostileName` (as the dashboard's test does):
    /// the name shows as exactly that text, its markup escaped, no <img> in the page, no alert.
    /// With `innerHTML` in overlay.js this fails.
    @Test func aHostileDeviceNameIsTextOnTheOverlay() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        let url = try String(contentsOfFile: web.webState + "/" + AccessToken.overlayURLFileName, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let script = Browser.repository + "/Tests/Fixtures/web/overlay.py"
        let report = try await Browser.run(script: script, web, screenshot: "overlay-hostile-name.png",
                                           [url, Browser.artifacts + "/overlay-hostile-name.png", BrowserTests.hostileName])
        #expect(!(report["values"] as? [String] ?? []).isEmpty, "no heart rate came through the renamed stream: \(report)")
        #expect(report["name"] as? String == BrowserTests.hostileName, "shown as '\(report["name"] ?? "none")'")
        #expect(report["nameHTML"] as? String == "&lt;img src=x onerror=alert(1)&gt;", "its markup: \(report["nameHTML"] ?? "none")")
        #expect(report["images"] as? Int == 0, "the page holds \(report["images"] ?? "?") <img> elements")
        #expect((report["alerts"] as? [Any])?.isEmpty == true, "alert() was called: \(report["alerts"] ?? "?")")
    }
}
