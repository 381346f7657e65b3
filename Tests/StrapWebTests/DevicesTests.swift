import Foundation
import Glibc
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The devices API and page over real HTTP in front of a real `strapd --simulate=2`
/// (docs/web.md, "The devices API", "The devices page"). The harness runs strapd-web as the
/// test's own user, strapd's user too, which strapd grants everything, `admin` included; the
/// tests without it run strapd-web as another uid with the packaged grant (`read`, `record`),
/// as ServiceGrantTests do. What strapd-web did is judged by asking strapd through StrapKit.
@Suite(.serialized) struct DevicesTests {
    typealias J = WorkoutAPITests

    static func addresses(_ web: WebHarness) async throws -> [String] {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        return try await store.deviceAddresses()
    }

    static func post(_ web: WebHarness, _ path: String, _ body: String? = nil, headers: [(String, String)]) throws -> HTTPReply {
        try RawHTTP.request(port: web.port, method: "POST", path: path, host: web.host, headers: headers, body: body)
    }

    static let json = ("Content-Type", "application/json")

    /// A script with the bearer token scans, pairs and forgets; strapd's list shows each.
    @Test func aScriptScansPairsAndForgets() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let listed = try await Self.addresses(web)
        #expect(listed.count == 2)
        let scan = try Self.post(web, "/api/devices/scan", #"{"timeout":0.5}"#, headers: [web.bearer, Self.json])
        #expect(scan.status == 200, "\(scan.body)")
        let found = J.array(J.json(scan)["devices"]).compactMap { J.object($0) }
        #expect(Set(found.compactMap { J.string($0["address"]) }) == Set(listed), "\(scan.body)")
        #expect(found.contains { J.string($0["name"]) == "Sim HR 0" }, "\(scan.body)")

        let target = listed[1]
        let pair = try Self.post(web, "/api/devices/\(target)/pair", headers: [web.bearer])
        #expect(pair.status == 200 && J.json(pair) == ["address": .string(target), "action": .string("pair")], "\(pair.body)")
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        #expect(try await store.request("devices.info", ["address": .string(target)])["paired"] == .bool(true))

        let forget = try Self.post(web, "/api/devices/\(target)/forget", headers: [web.bearer])
        #expect(forget.status == 200 && J.string(J.json(forget)["action"]) == "forget", "\(forget.body)")
        #expect(try await Self.addresses(web) == [listed[0]])
    }

    /// strapd's refusals pass through with its text; a scan's bound is strapd-web's own.
    @Test func refusalsAreStrapdsOrTheScansBound() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        let bad = try Self.post(web, "/api/devices/not-an-address/forget", headers: [web.bearer])
        #expect(bad.status == 400 && J.string(J.json(bad)["code"]) == "badRequest", "\(bad.status) \(bad.body)")
        #expect(J.string(J.json(bad)["error"])?.contains(#"must be a Bluetooth address like AA:BB:CC:DD:EE:FF, not "not-an-address""#) == true, "\(bad.body)")
        let unknown = try Self.post(web, "/api/devices/00:11:22:33:44:55/pair", headers: [web.bearer])
        #expect(unknown.status == 404 && J.string(J.json(unknown)["code"]) == "notFound", "\(unknown.status) \(unknown.body)")
        for body in [#"{"timeout":5.5}"#, #"{"timeout":0}"#, #"{"timeout":"5"}"#, "[]"] {
            let refused = try Self.post(web, "/api/devices/scan", body, headers: [web.bearer, Self.json])
            #expect(refused.status == 400 && J.string(J.json(refused)["code"]) == nil, "\(body): \(refused.status) \(refused.body)")
        }
        let plain = try Self.post(web, "/api/devices/scan", "{}", headers: [web.bearer, ("Content-Type", "text/plain")])
        #expect(plain.status == 415, "\(plain.body)")
        let get = try RawHTTP.request(port: web.port, path: "/api/devices/scan", host: web.host, headers: [web.bearer])
        #expect(get.status == 405 && get.header("Allow") == "POST")
        #expect(try await Self.addresses(web).count == 1)
    }

    /// Who may forget: the cookie with our Origin, or the bearer token; each refused request
    /// leaves the device listed, then the same request sent the right way forgets it.
    @Test func noTokenTheOverlayTokenOrAMissingOriginForgetsNothing() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let browser = try J.Browser(web)
        let listed = try await Self.addresses(web)
        let path = "/api/devices/\(listed[0])/forget"
        let refused: [(String, HTTPReply, Int)] = [
            ("no cookie", try browser.post(path, "{}", omit: ["Cookie"]), 401),
            ("the overlay token", try browser.post(path, "{}", omit: ["Cookie", "Origin"], extra: [("Authorization", "Bearer \(web.overlayToken)")]), 403),
            ("the overlay token with our Origin", try browser.post(path, "{}", omit: ["Cookie"], extra: [("Authorization", "Bearer \(web.overlayToken)")]), 403),
            ("the cookie without an Origin", try browser.post(path, "{}", omit: ["Origin"]), 403),
            ("a foreign Origin", try browser.post(path, "{}", omit: ["Origin"], extra: [("Origin", "http://evil.example")]), 403),
            ("a scan with the overlay token", try browser.post("/api/devices/scan", #"{"timeout":0.2}"#, omit: ["Cookie", "Origin"],
                                                              extra: [("Authorization", "Bearer \(web.overlayToken)")]), 403),
        ]
        #expect(!web.overlayToken.isEmpty)
        for (what, reply, status) in refused {
            #expect(reply.status == status && J.string(J.json(reply)["error"]) != nil, "\(what): \(reply.status) \(reply.body)")
        }
        #expect(try await Self.addresses(web) == listed, "a refused request forgot a device")
        let page = try browser.post(path, "{}")
        #expect(page.status == 200, "\(page.body)")
        #expect(try await Self.addresses(web) == [listed[1]])
    }

    static let script = Browser.repository + "/Tests/Fixtures/web/devices.py"

    /// In Chromium: the dashboard links to /devices, which lists strapd's devices; Scan shows
    /// both simulated sensors; Forget asks once more, then the device is gone from the page and
    /// from strapd's `devices.list`. No CSP violation, no alert, no console error.
    @Test func theDevicesPageForgetsADevice() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let listed = try await Self.addresses(web)
        let report = try await Browser.run(script: Self.script, web, screenshot: "devices.png", [
            "forget", "http://\(web.host)/?token=\(web.token)", Browser.artifacts + "/devices.png", listed[0],
        ])
        let log = report["log"] as? [String] ?? ["unreadable"]
        #expect(log.isEmpty, "the page did not get there: \(log)")
        #expect(report["linked"] as? String == "http://\(web.host)/devices")
        #expect(report["listed"] as? [String] == listed)
        #expect(Set(report["found"] as? [String] ?? []) == Set(listed))
        #expect((report["foundNames"] as? [String] ?? []).contains("Sim HR 0"))
        #expect(report["stillListedWhenArmed"] as? Bool == true, "one click forgot the device")
        #expect(report["after"] as? [String] == [listed[1]])
        #expect(try await Self.addresses(web) == [listed[1]], "strapd still lists \(listed[0])")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "CSP violations: \(report["violations"] ?? "?")")
        #expect((report["alerts"] as? [Any])?.isEmpty ?? true, "alerts: \(report["alerts"] ?? "?")")
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")
        Browser.expectScreenshot(report, "devices.png")
    }

    /// Every name the page receives (the list and the scan) replaced in the browser by the
    /// hostile name (dashboard.py's stand-in: --simulate names its own devices) shows as that
    /// text, its markup the escaped text, no <img> in the page, no alert.
    @Test func aHostileDeviceNameIsTextOnTheDevicesPage() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let report = try await Browser.run(script: Self.script, web, screenshot: "devices-hostile-name.png", [
            "hostile", "http://\(web.host)/?token=\(web.token)", Browser.artifacts + "/devices-hostile-name.png", BrowserTests.hostileName,
        ])
        let rows = (report["devices"] as? [[String: Any]] ?? []) + (report["found"] as? [[String: Any]] ?? [])
        #expect(rows.count == 4, "rows: \(rows)")
        for row in rows {
            #expect(row["name"] as? String == BrowserTests.hostileName, "shown as '\(row["name"] ?? "none")'")
            #expect(row["nameHTML"] as? String == "&lt;img src=x onerror=alert(1)&gt;", "its markup: \(row["nameHTML"] ?? "none")")
        }
        #expect(report["images"] as? Int == 0, "the page holds \(report["images"] ?? "?") <img> elements")
        #expect((report["alerts"] as? [Any])?.isEmpty == true, "alert() was called: \(report["alerts"] ?? "?")")
        Browser.expectScreenshot(report, "devices-hostile-name.png")
    }
}
