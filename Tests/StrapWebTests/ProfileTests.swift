import Foundation
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The profile API over real HTTP in front of a real `strapd --simulate` (docs/web.md, "The
/// profile API"). What strapd-web did is judged by asking strapd itself through StrapKit.
@Suite(.serialized) struct ProfileTests {
    typealias J = WorkoutAPITests

    /// A PUT as the profile page's script sends it, less whatever `omit` names, plus `extra`.
    static func put(_ web: WebHarness, _ browser: J.Browser, athlete: String, _ body: String,
                    omit: Set<String> = [], extra: [(String, String)] = []) throws -> HTTPReply {
        var headers: [(String, String)] = [("Cookie", browser.cookie), ("Origin", browser.origin), ("Content-Type", "application/json")]
        headers.removeAll { omit.contains($0.0) }
        return try RawHTTP.request(port: web.port, method: "PUT", path: "/api/profile?athlete=\(athlete)", host: web.host,
                                   headers: headers + extra, body: body)
    }

    static func profileGet(_ web: WebHarness, _ athlete: String) async throws -> JSONObject {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        return try await store.request("profile.get", ["athlete": .string(athlete)])
    }

    /// A number as strapd wrote it (`81` and `81.0` are the same weight).
    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    static func seed(_ web: WebHarness, _ athlete: String) async throws {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        _ = try await store.request("profile.set", ["athlete": .string(athlete), "profile": .object([
            "dateOfBirth": .string("1994-03-02"), "weight": .double(61.5), "restingHeartRate": .int(52),
            "heartRateZones": .object(["method": .string("heartRateReserve")]),
        ])])
    }

    /// GET is `profile.get`'s answer unchanged (the estimated maximum and the age included),
    /// and an athlete without a profile is strapd's noData as 404.
    @Test func theGetIsProfileGet() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        try await Self.seed(web, "ana")
        let reply = try RawHTTP.request(port: web.port, path: "/api/profile?athlete=ana", host: web.host, headers: [web.bearer])
        #expect(reply.status == 200, "\(reply.body)")
        let strapds = try await Self.profileGet(web, "ana")
        #expect(J.json(reply) == strapds)
        #expect(Self.number(J.object(strapds["profile"])?["weight"]) == 61.5)
        let nobody = try RawHTTP.request(port: web.port, path: "/api/profile?athlete=bea", host: web.host, headers: [web.bearer])
        #expect(nobody.status == 404 && J.string(J.json(nobody)["code"]) == "noData", "\(nobody.status) \(nobody.body)")
    }

    /// A PUT from the page changes the fields it names and no other; `null` clears one.
    @Test func aPutChangesWhatProfileGetAnswers() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        try await Self.seed(web, "ana")
        let browser = try J.Browser(web)
        let reply = try Self.put(web, browser, athlete: "ana", #"{"weight":70.25,"functionalThresholdPower":240,"restingHeartRate":null}"#)
        #expect(reply.status == 200, "\(reply.body)")
        let profile = J.object(try await Self.profileGet(web, "ana")["profile"]) ?? [:]
        #expect(Self.number(profile["weight"]) == 70.25)
        #expect(Self.number(profile["functionalThresholdPower"]) == 240)
        #expect(profile["restingHeartRate"] == nil)
        #expect(profile["dateOfBirth"] == .string("1994-03-02"))
        #expect(J.object(J.json(reply)["profile"]) == profile, "the PUT's answer is profile.set's: the whole profile")
    }

    /// A value strapd refuses is its refusal as JSON, and changes nothing; a body that is not
    /// a JSON object never reaches strapd.
    @Test func aBadValueIsStrapdsRefusalAndChangesNothing() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        try await Self.seed(web, "ana")
        let before = try await Self.profileGet(web, "ana")
        let browser = try J.Browser(web)
        let cases: [(String, Int, String)] = [
            (#"{"weight":0,"height":180}"#, 422, "weight must be from 10 to 400 kg, got 0"),
            (#"{"functionalThresholdPower":3000}"#, 422, "functionalThresholdPower must be from 30 to 2000 W"),
            (#"{"shoeSize":44}"#, 422, "shoeSize"),
            (#"[70]"#, 400, "not a JSON object"),
            (#"{"weight":"#, 400, "not JSON"),
        ]
        for (body, status, message) in cases {
            let reply = try Self.put(web, browser, athlete: "ana", body)
            let json = J.json(reply)
            #expect(reply.status == status && (J.string(json["error"]) ?? "").contains(message), "\(body): \(reply.status) \(reply.body)")
            if status == 422 { #expect(J.string(json["code"]) == "invalidOption", "\(body): \(reply.body)") }
        }
        let plain = try Self.put(web, browser, athlete: "ana", #"{"weight":70}"#, omit: ["Content-Type"], extra: [("Content-Type", "text/plain")])
        #expect(plain.status == 415, "\(plain.body)")
        #expect(try await Self.profileGet(web, "ana") == before, "a refused PUT changed the profile")
    }

    /// Who may write: the cookie with our Origin, or the bearer token. Each refused request is
    /// then sent the right way, so the refusal is the rule's and not a broken request's.
    @Test func noTokenTheOverlayTokenOrAnotherOriginChangesNothing() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        try await Self.seed(web, "ana")
        let before = try await Self.profileGet(web, "ana")
        let browser = try J.Browser(web)
        let body = #"{"weight":80}"#
        let refused: [(String, HTTPReply, Int)] = [
            ("no token", try Self.put(web, browser, athlete: "ana", body, omit: ["Cookie"]), 401),
            ("the overlay token", try Self.put(web, browser, athlete: "ana", body, omit: ["Cookie", "Origin"],
                                               extra: [("Authorization", "Bearer \(web.overlayToken)")]), 403),
            ("a foreign Origin", try Self.put(web, browser, athlete: "ana", body, omit: ["Origin"], extra: [("Origin", "http://evil.example")]), 403),
            ("the cookie without an Origin", try Self.put(web, browser, athlete: "ana", body, omit: ["Origin"]), 403),
        ]
        for (what, reply, status) in refused {
            #expect(reply.status == status && J.string(J.json(reply)["error"]) != nil, "\(what): \(reply.status) \(reply.body)")
        }
        #expect(try await Self.profileGet(web, "ana") == before, "a refused PUT changed the profile")
        #expect(!web.overlayToken.isEmpty)
        let script = try Self.put(web, browser, athlete: "ana", body, omit: ["Cookie", "Origin"], extra: [web.bearer])
        #expect(script.status == 200, "\(script.body)")
        let page = try Self.put(web, browser, athlete: "ana", #"{"weight":81}"#)
        #expect(page.status == 200, "\(page.body)")
        #expect(Self.number(J.object(try await Self.profileGet(web, "ana")["profile"])?["weight"]) == 81)
    }

    static let script = Browser.repository + "/Tests/Fixtures/web/profile.py"

    /// In Chromium: the dashboard links to /profile; the weight typed into the form and saved
    /// is what `profile.get` answers afterwards, and a weight strapd refuses shows strapd's own
    /// message and changes nothing. No CSP violation, no alert, no console error but the
    /// refused PUT's 422 and the profile-less default athlete's 404.
    @Test func theProfilePageSavesAnEditedField() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        try await Self.seed(web, "ana")
        let report = try await Browser.run(script: Self.script, web, screenshot: "profile.png", [
            "http://\(web.host)/?token=\(web.token)", Browser.artifacts + "/profile.png", "ana", "72.5",
        ])
        let log = report["log"] as? [String] ?? ["unreadable"]
        #expect(log.isEmpty, "the page did not get there: \(log)")
        #expect(report["linked"] as? String == "http://\(web.host)/profile")
        #expect(report["loadedWeight"] as? String == "61.5")
        let profile = J.object(try await Self.profileGet(web, "ana")["profile"]) ?? [:]
        #expect(Self.number(profile["weight"]) == 72.5, "profile.get's weight after the page saved: \(profile["weight"] ?? .null)")
        #expect((report["refusal"] as? String ?? "").contains("weight must be from 10 to 400 kg, got 0"), "refusal shown: \(report["refusal"] ?? "none")")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "CSP violations: \(report["violations"] ?? "?")")
        #expect((report["alerts"] as? [Any])?.isEmpty ?? true, "alerts: \(report["alerts"] ?? "?")")
        // Chromium logs every 4xx a fetch gets: the refused save's 422, and the 404 of the
        // default athlete, who has no profile, when the link first opens the page.
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter {
            !$0.contains("/favicon.ico") && !$0.contains("athlete=ana - Failed to load resource: the server responded with a status of 422")
                && !$0.contains("athlete=default - Failed to load resource: the server responded with a status of 404")
        }
        #expect(errors.isEmpty, "console errors: \(errors)")
        Browser.expectScreenshot(report, "profile.png")
    }
}
