import Foundation
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The workout control API over real HTTP in front of a real `strapd --simulate=2`
/// (docs/web.md, "The workout API"). What strapd-web did is judged by asking strapd itself
/// through StrapKit. Each security test also sends the same request the right way afterwards,
/// so a refusal is proven to be the rule's and not a broken request's.
@Suite(.serialized) struct WorkoutAPITests {
    /// A browser's session: the cookie the token URL set, and the page's origin.
    struct Browser {
        let web: WebHarness
        let cookie: String

        init(_ web: WebHarness) throws {
            self.web = web
            let opened = try RawHTTP.request(port: web.port, path: "/?token=\(web.token)", host: web.host)
            cookie = try #require(opened.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        }

        var origin: String { "http://\(web.host)" }

        /// A POST as the page's script sends it, less whatever `omit` names, plus `extra`.
        func post(_ path: String, _ body: String, omit: Set<String> = [], extra: [(String, String)] = []) throws -> HTTPReply {
            var headers: [(String, String)] = [("Cookie", cookie), ("Origin", origin), ("Content-Type", "application/json")]
            headers.removeAll { omit.contains($0.0) }
            return try RawHTTP.request(port: web.port, method: "POST", path: path, host: web.host, headers: headers + extra, body: body)
        }
    }

    static func json(_ reply: HTTPReply) -> JSONObject {
        if case .object(let o)? = try? JSONParser.parse(Array(reply.body.utf8)) { return o }
        return [:]
    }

    static func string(_ value: JSONValue?) -> String? { if case .string(let s)? = value { s } else { nil } }
    static func object(_ value: JSONValue?) -> JSONObject? { if case .object(let o)? = value { o } else { nil } }
    static func array(_ value: JSONValue?) -> [JSONValue] { if case .array(let a)? = value { a } else { [] } }

    /// The session's id and state in a `{session, statistics}` answer.
    static func session(_ reply: HTTPReply) -> (id: String?, state: String?) {
        let s = object(json(reply)["session"])
        return (string(s?["session"]), string(s?["state"]))
    }

    /// strapd's open sessions and saved workouts, asked through StrapKit.
    static func strapdWorkouts(_ web: WebHarness) async throws -> (open: [JSONObject], saved: [JSONObject]) {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        let list = try await store.request("workout.list")
        let open = array(list["sessions"]).compactMap { object(object($0)?["session"]) }.filter { string($0["state"]) != "ended" }
        return (open, array(list["workouts"]).compactMap { object($0) })
    }

    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in Thread { c.resume(with: Result { try work() }) }.start() }
    }

    static func strapAddress(_ web: WebHarness) async throws -> String {
        try #require(try await BrowserTests.addressesByName(web)["Sim HR 0"])
    }

    /// start → lap → pause → resume → end through HTTP; the workout strapd saved has the lap,
    /// and /api/sessions lists the session while it is open and not after.
    @Test func aWorkoutStartedLappedAndEndedOverHTTPIsSavedByStrapd() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let browser = try Browser(web)
        let strap = try await Self.strapAddress(web)
        let started = try browser.post("/api/workout/start", #"{"activityType":"cycling","locationType":"indoor","devices":["\#(strap)"]}"#)
        #expect(started.status == 200, "start: \(started.status) \(started.body)")
        let id = try #require(Self.session(started).id, "start answered \(started.body)")
        #expect(Self.session(started).state == "running")

        let listed = try RawHTTP.request(port: web.port, path: "/api/sessions", host: web.host, headers: [("Cookie", browser.cookie)])
        #expect(Self.array(Self.json(listed)["sessions"]).compactMap { Self.string(Self.object(Self.object($0)?["session"])?["session"]) } == [id])

        let body = #"{"session":"\#(id)"}"#
        for (command, state) in [("lap", "running"), ("pause", "paused"), ("resume", "running")] {
            let reply = try browser.post("/api/workout/\(command)", body)
            #expect(reply.status == 200 && Self.session(reply).state == state, "\(command): \(reply.status) \(reply.body)")
        }
        let ended = try browser.post("/api/workout/end", body)
        #expect(ended.status == 200, "end: \(ended.status) \(ended.body)")
        let endedWorkout = try #require(Self.object(Self.json(ended)["workout"]), "end answered \(ended.body)")

        let (open, saved) = try await Self.strapdWorkouts(web)
        #expect(open.isEmpty, "still open in strapd: \(open)")
        let workout = try #require(saved.first { Self.string($0["sessionID"]) == id }, "strapd saved no workout of session \(id): \(saved)")
        #expect(Self.string(workout["uuid"]) == Self.string(endedWorkout["uuid"]))
        #expect(Self.string(workout["activityType"]) == "cycling")
        #expect(Self.array(workout["deviceIDs"]).compactMap(Self.string) == [strap])
        let kinds = Self.array(workout["events"]).compactMap { Self.string(Self.object($0)?["kind"]) }
        #expect(kinds.filter { $0 == "lap" }.count == 1 && kinds.contains("pause") && kinds.contains("resume"), "events: \(kinds)")
        let after = try RawHTTP.request(port: web.port, path: "/api/sessions", host: web.host, headers: [("Cookie", browser.cookie)])
        #expect(Self.array(Self.json(after)["sessions"]).isEmpty, "/api/sessions after the end: \(after.body)")
    }

    /// Rules: a control request needs the cookie (or the bearer token: not the URL's token), an
    /// Origin equal to the page's when it comes with the cookie, and a JSON body (a form
    /// cannot send one). Each refused start leaves strapd without a session.
    @Test func aControlRequestWithoutTheCookieOrFromAnotherOriginStartsNothing() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let browser = try Browser(web)
        let devices = try await BrowserTests.addressesByName(web)
        let strap = try #require(devices["Sim HR 0"]), other = try #require(devices.first { $0.key != "Sim HR 0" }?.value)
        let start = #"{"activityType":"running","devices":["\#(strap)"]}"#
        let refusals: [(String, HTTPReply, Int)] = [
            ("no cookie", try browser.post("/api/workout/start", start, omit: ["Cookie"]), 401),
            ("the URL's token instead of the cookie", try browser.post("/api/workout/start?token=\(web.token)", start, omit: ["Cookie"]), 401),
            ("a foreign Origin", try browser.post("/api/workout/start", start, omit: ["Origin"], extra: [("Origin", "http://evil.example")]), 403),
            ("a foreign Origin with the bearer token", try browser.post("/api/workout/start", start, omit: ["Origin", "Cookie"],
                                                                         extra: [("Origin", "http://evil.example"), web.bearer]), 403),
            ("another port's Origin", try browser.post("/api/workout/start", start, omit: ["Origin"], extra: [("Origin", "http://127.0.0.1:1")]), 403),
            ("no Origin", try browser.post("/api/workout/start", start, omit: ["Origin"]), 403),
            ("a form's body", try browser.post("/api/workout/start", "activityType=running", omit: ["Content-Type"],
                                               extra: [("Content-Type", "application/x-www-form-urlencoded")]), 415),
        ]
        for (what, reply, status) in refusals {
            #expect(reply.status == status, "\(what): \(reply.status) \(reply.body)")
            #expect(Self.string(Self.json(reply)["error"]) != nil, "\(what): the refusal is not {\"error\": …}: \(reply.body)")
        }
        for (what, reply, status) in refusals where status == 415 {
            #expect(Self.string(Self.json(reply)["error"])?.contains("application/json") == true, "\(what): \(reply.body)")
        }
        let (open, _) = try await Self.strapdWorkouts(web)
        #expect(open.isEmpty, "a refused request started \(open)")
        // The same request from the page itself, and from a script with the bearer token, starts one.
        let own = try browser.post("/api/workout/start", start)
        #expect(own.status == 200, "the page's own start: \(own.status) \(own.body)")
        let script = try browser.post("/api/workout/start", #"{"activityType":"cycling","devices":["\#(other)"]}"#,
                                      omit: ["Cookie", "Origin"], extra: [web.bearer])
        #expect(script.status == 200, "a script's start: \(script.status) \(script.body)")
        #expect(try await Self.strapdWorkouts(web).open.count == 2)
    }

    /// Bodies are decoded before strapd is asked: malformed ones are 400 naming the field;
    /// strapd's own refusals keep their code and get the status of docs/web.md's table.
    @Test func badRequestsAreRefusedWithAMessageAndStrapdsCodesMapToStatuses() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let browser = try Browser(web)
        let local: [(String, String, Int, String)] = [
            ("start", "{not json", 400, "not JSON"),
            ("start", "[]", 400, "the body must be an object"),
            ("start", "{}", 400, "activityType is missing"),
            ("start", #"{"activityType":7}"#, 400, "activityType must be a string"),
            ("start", #"{"activityType":"running","devices":"all"}"#, 400, "devices must be an array"),
            ("lap", #"{"session":"lap-1"}"#, 400, "is not a session id"),
            ("pause", #"{"session":"281019D0-FFC9-4A5E-8349-C0AF310A8F88","metadata":{"a":"b"}}"#, 400, "only lap"),
            ("start", #"{"activityType":"pogo"}"#, 422, "invalidOption"),
        ]
        for (command, body, status, message) in local {
            let reply = try browser.post("/api/workout/\(command)", body)
            let said = (Self.string(Self.json(reply)["error"]) ?? "") + " " + (Self.string(Self.json(reply)["code"]) ?? "")
            #expect(reply.status == status && said.contains(message), "\(command) \(body): \(reply.status) \(reply.body)")
        }
        #expect(try await Self.strapdWorkouts(web).open.isEmpty, "a refused request started a session")
        // The strap named: with no devices strapd takes the connected ones, and a test must
        // not depend on the simulated sensors having connected yet.
        let strap = try await Self.strapAddress(web)
        let started = try browser.post("/api/workout/start", #"{"activityType":"running","devices":["\#(strap)"]}"#)
        let id = try #require(Self.session(started).id, "start: \(started.body)")
        let unknown = "281019D0-FFC9-4A5E-8349-C0AF310A8F88"
        let mapped: [(String, String, Int, String)] = [
            ("lap", #"{"session":"\#(unknown)"}"#, 404, "notFound"),
            ("resume", #"{"session":"\#(id)"}"#, 409, "invalidTransition"),
            ("start", #"{"activityType":"running","devices":["\#(strap)"]}"#, 409, "busy"),
        ]
        for (command, body, status, code) in mapped {
            let reply = try browser.post("/api/workout/\(command)", body)
            #expect(reply.status == status && Self.string(Self.json(reply)["code"]) == code, "\(command) \(body): \(reply.status) \(reply.body)")
        }
        let get = try RawHTTP.request(port: web.port, path: "/api/workout/lap", host: web.host, headers: [("Cookie", browser.cookie)])
        #expect(get.status == 405)
        let nowhere = try browser.post("/api/workout/stretch", #"{"session":"\#(id)"}"#)
        #expect(nowhere.status == 404)
        #expect(try await Self.strapdWorkouts(web).open.count == 1, "a refused request changed strapd's sessions")
    }

    /// Mirroring: a session started elsewhere (StrapKit, as strapctl does) is announced on
    /// /events as `workout.created` and `workout.state`, with strapd's data.
    @Test func eventsAnnounceASessionStartedThroughStrapKit() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let port = web.port, host = web.host, bearer = web.bearer
        // The stream is read on a thread of its own: the cooperative pool is left to StrapKit.
        let stream = Task {
            try await Self.onThread {
                try RawHTTP.exchange(port: port, path: "/events", host: host, headers: [bearer], timeout: 30) { $0.contains("event: workout.state\n") }
            }
        }
        try await Task.sleep(for: .seconds(2))
        let strap = try await Self.strapAddress(web)
        let session = WorkoutSession(store: StrapStore(socket: web.socket),
                                     configuration: WorkoutConfiguration(activityType: .rowing, deviceIDs: [strap]))
        try await session.start()
        let id = try #require(session.id).uuidString
        let body = try await stream.value.body
        #expect(body.contains("event: workout.created\ndata: {"), "no created event: \(body.suffix(2000))")
        let state = body.components(separatedBy: "event: workout.state\ndata: ").dropFirst().first?.split(separator: "\n").first ?? ""
        #expect(state.contains(#""session":"\#(id)""#) && state.contains(#""state":"running""#), "state event: \(state)")
    }
}
