import Foundation
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The history API and page (docs/web.md, "The history API", "The history page") over real
/// HTTP in front of a real `strapd --simulate=2`. What strapd-web answers is held to what strapd
/// itself says, asked through StrapKit, and its exports to the built strapctl's, byte for byte.
@Suite(.serialized) struct HistoryTests {
    typealias J = WorkoutAPITests

    /// A workout of a few seconds on the simulated strap, started and ended through StrapKit,
    /// by an athlete whose profile gives strapd zones (a maximum heart rate); returns the saved workout's UUID once the store holds every heart-rate sample of it
    /// (samples are durable a sync interval after they arrive).
    static func recordWorkout(_ web: WebHarness, seconds: Int = 5) async throws -> (uuid: String, samples: Int) {
        let strap = try await J.strapAddress(web)
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        _ = try await store.request("profile.set", ["athlete": .string("ana"), "profile": .object(["maximumHeartRate": .int(190)])])
        let started = try await store.request("workout.start", ["activityType": .string("cycling"), "locationType": .string("indoor"),
                                                                 "devices": .array([.string(strap)]), "athlete": .string("ana")])
        let session = try #require(J.string(J.object(started["session"])?["session"]))
        // At least `seconds` of the session with heart rate in it: a loaded machine (the whole
        // suite, a CI run beside it) can start the simulated strap late, and a fixed sleep then
        // saved a workout with no heart rate (seen once).
        try await Task.sleep(for: .seconds(seconds))
        for _ in 0..<120 {
            let now = try await store.request("workout.get", ["session": .string(session)])
            let statistics = J.object(now["statistics"]) ?? [:]
            let elapsed: Double = switch statistics["elapsedTime"] {
            case .double(let d)?: d
            case .int(let i)?: Double(i)
            default: 0
            }
            if statistics["heartRateAverage"] != nil && elapsed >= Double(seconds) { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        let ended = try await store.request("workout.end", ["session": .string(session)])
        let uuid = try #require(J.string(J.object(ended["workout"])?["uuid"]), "workout.end answered \(ended)")
        var last = -1
        for _ in 0..<50 {
            let count = try await storedHeartRates(store, uuid).count
            if count > 0 && count == last { return (uuid, count) }
            last = count
            try await Task.sleep(for: .milliseconds(500))
        }
        Issue.record("the store's heart-rate samples of \(uuid) never settled (last \(last))")
        return (uuid, last)
    }

    /// The workout's heart-rate samples as strapd's store gives them (`samples.query`).
    static func storedHeartRates(_ store: StrapStore, _ uuid: String) async throws -> [JSONObject] {
        let r = try await store.request("samples.query", ["types": .array([.string("heartRate")]), "limit": .int(100_000),
                                                          "predicate": .object(["workout": .string(uuid)])])
        #expect(r["truncated"] == .bool(false))
        return J.array(r["samples"]).compactMap(J.object)
    }

    /// `strapctl workout export ID --format F -o -`'s bytes.
    static func strapctlExport(_ web: WebHarness, _ id: String, format: String) throws -> [UInt8] {
        let p = Process()
        p.executableURL = WebHarness.buildDirectory.appendingPathComponent("strapctl")
        p.arguments = ["--socket", web.socket, "workout", "export", id, "--format", format, "-o", "-"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "strapctl workout export \(id) --format \(format) exited \(p.terminationStatus)")
        return [UInt8](data)
    }

    func get(_ web: WebHarness, _ path: String, headers: [(String, String)]? = nil) throws -> HTTPReply {
        try RawHTTP.request(port: web.port, path: path, host: web.host, headers: headers ?? [web.bearer], timeout: 30)
    }

    /// The list and one workout are strapd's answers passed through: the list is
    /// `workout.list`'s workouts, the workout `workout.get`'s, and its heart-rate samples are
    /// every one the store holds for it, the same starts and values.
    @Test func theListAndAWorkoutAreStrapdsOwn() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let (uuid, stored) = try await Self.recordWorkout(web)
        let store = StrapStore(socket: web.socket)
        defer { store.close() }

        let list = try get(web, "/api/workouts")
        #expect(list.status == 200, "\(list.status) \(list.body)")
        #expect(list.header("Content-Type") == "application/json")
        let listed = J.array(J.json(list)["workouts"])
        #expect(listed == J.array(try await store.request("workout.list")["workouts"]), "the list is not workout.list's")
        #expect(listed.contains { J.string(J.object($0)?["uuid"]) == uuid })
        #expect(J.array(J.json(try get(web, "/api/workouts?limit=1"))["workouts"]).count == 1)

        let one = try get(web, "/api/workouts/\(uuid)")
        #expect(one.status == 200, "\(one.status) \(one.body)")
        let answer = J.json(one)
        let daemon = try await store.request("workout.get", ["session": .string(uuid)])
        #expect(answer["workout"] == daemon["workout"], "the workout is not workout.get's")
        let summary = J.object(J.object(answer["workout"])?["summary"]) ?? [:]
        #expect(summary["timeBelowZone1"] != nil && summary["timeInZone5"] != nil, "no zone times in \(summary.keys.sorted())")
        #expect(summary["hrvRMSSD"] != nil, "no HRV figures in \(summary.keys.sorted())")
        let laps = J.array(J.object(answer["workout"])?["laps"])
        #expect(laps.count >= 1, "no laps")

        let heartRate = J.object(answer["heartRate"]) ?? [:]
        let samples = J.array(heartRate["samples"]).compactMap(J.object)
        #expect(heartRate["count"] == .int(Int64(stored)))
        #expect(samples.count == stored, "\(samples.count) samples served, the store holds \(stored)")
        func pairs(_ s: [JSONObject]) -> [String] { s.map { "\(J.string($0["start"]) ?? "?")=\($0["value"].map { "\($0)" } ?? "?")" }.sorted() }
        #expect(pairs(samples) == pairs(try await Self.storedHeartRates(store, uuid)), "the samples are not the store's")
    }

    /// Each format's download is exactly `strapctl workout export`'s file, with its size as
    /// Content-Length and as an attachment.
    @Test func theExportIsStrapctlsByteForByte() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let (uuid, _) = try await Self.recordWorkout(web)
        for (format, type) in [("fit", "application/vnd.ant.fit"), ("tcx", "application/vnd.garmin.tcx+xml"), ("csv", "text/csv")] {
            let reply = try get(web, "/api/workouts/\(uuid)/export?format=\(format)")
            #expect(reply.status == 200, "\(format): \(reply.status) \(reply.body.prefix(200))")
            #expect(reply.header("Content-Type") == type)
            #expect(reply.header("Content-Disposition") == "attachment; filename=\"\(uuid.lowercased()).\(format)\"")
            #expect(reply.header("Content-Length") == String(reply.data.count))
            let expected = try Self.strapctlExport(web, uuid, format: format)
            #expect(!expected.isEmpty)
            #expect(reply.data == expected, "\(format): \(reply.data.count) bytes served, strapctl wrote \(expected.count), or they differ")
        }
        let byDefault = try get(web, "/api/workouts/\(uuid)/export")
        #expect(byDefault.header("Content-Type") == "application/vnd.ant.fit")
    }

    /// Refusals: an unknown or malformed id is 404 and an unknown format 400, each as JSON; no
    /// token is 401 and the overlay's read-only token 403 on every history path; another
    /// method is 405.
    @Test func unknownWorkoutsAndMissingTokensAreRefused() async throws {
        let web = try WebHarness(sensors: 1)
        defer { web.stop() }
        let unknown = UUID().uuidString
        for path in ["/api/workouts/\(unknown)", "/api/workouts/\(unknown)/export?format=csv", "/api/workouts/not-a-uuid",
                     "/api/workouts/not-a-uuid/export"] {
            let reply = try get(web, path)
            #expect(reply.status == 404, "\(path): \(reply.status) \(reply.body)")
            #expect(reply.header("Content-Type") == "application/json")
            #expect(J.string(J.json(reply)["error"]) != nil, "\(path): \(reply.body)")
        }
        #expect(J.string(J.json(try get(web, "/api/workouts/\(unknown)"))["code"]) == "notFound")
        let badFormat = try get(web, "/api/workouts/\(unknown)/export?format=gpx")
        #expect(badFormat.status == 400 && J.string(J.json(badFormat)["error"])?.contains("gpx") == true, "\(badFormat.body)")
        #expect(try get(web, "/api/workouts?limit=0").status == 400)

        for path in ["/api/workouts", "/api/workouts/\(unknown)", "/api/workouts/\(unknown)/export", "/history", "/history.js"] {
            let anonymous = try get(web, path, headers: [])
            #expect(anonymous.status == 401, "\(path) without a token: \(anonymous.status)")
            let overlay = try get(web, path, headers: [("Authorization", "Bearer \(web.overlayToken)")])
            #expect(overlay.status == 403, "\(path) with the overlay token: \(overlay.status)")
        }
        let post = try RawHTTP.request(port: web.port, method: "POST", path: "/api/workouts/\(unknown)", host: web.host,
                                       headers: [web.bearer, ("Content-Type", "application/json")], body: "{}")
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD", "\(post.status) \(post.header("Allow") ?? "")")
    }

    static let script = Browser.repository + "/Tests/Fixtures/web/history.py"

    /// In Chromium: the dashboard links to /history; the workout strapctl recorded is listed,
    /// and chosen it draws one polyline point per heart-rate sample the store holds for it
    /// (counted by strapd, not the page); its FIT link downloads strapctl's export, byte for
    /// byte. No CSP violation, no console error.
    @Test func theHistoryPageDrawsEveryStoredSampleAndDownloadsTheFIT() async throws {
        let web = try WebHarness()
        defer { web.stop() }
        let strap = try await J.strapAddress(web)
        let strapctl = WebHarness.buildDirectory.appendingPathComponent("strapctl").path
        let report = try await Browser.run(script: Self.script, web, screenshot: "history.png", [
            "http://\(web.host)/?token=\(web.token)", Browser.artifacts + "/history.png", strapctl, web.socket, strap, web.directory + "/downloads",
        ])
        let log = report["log"] as? [String] ?? ["unreadable"]
        #expect(log.isEmpty, "the page did not get there: \(log)")
        #expect(report["url"] as? String == "http://\(web.host)/history")
        let uuid = try #require(report["workout"] as? String, "no workout recorded: \(report)")
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        let stored = try await Self.storedHeartRates(store, uuid).count
        #expect(stored > 0)
        #expect(report["points"] as? Int == stored, "the curve has \(report["points"] ?? "?") points, the store \(stored) samples")
        #expect(report["apiCount"] as? Int == stored, "the API counted \(report["apiCount"] ?? "?")")
        #expect((report["laps"] as? Int ?? 0) >= 1, "no lap rows")
        #expect(report["zones"] as? Int == 6, "zone rows: \(report["zones"] ?? "?")")
        #expect(report["downloadName"] as? String == uuid.lowercased() + ".fit")
        let downloaded = (report["download"] as? String).flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) }
        let expected = try Self.strapctlExport(web, uuid, format: "fit")
        #expect(downloaded == expected, "the downloaded FIT (\(downloaded?.count ?? 0) bytes) is not strapctl's (\(expected.count))")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "CSP violations: \(report["violations"] ?? "?")")
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")
        Browser.expectScreenshot(report, "history.png")
    }
}
