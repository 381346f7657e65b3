import Foundation
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The workout page in Chromium (docs/web.md, "Browser tests"), in BrowserTests' suite so it
/// never runs beside another browser. `Tests/Fixtures/web/workout.py` taps the page's buttons
/// and runs the built strapctl; this test judges the result by strapd's own record, read
/// through StrapKit.
extension BrowserTests {
    static let workoutScript = Browser.repository + "/Tests/Fixtures/web/workout.py"

    /// Rule: the dashboard links to the page; start, lap, pause, resume and end tapped on it are what strapd saved (the
    /// workout's activity, device, and its lap, pause and resume events); a session strapctl
    /// starts while the page is open appears on it without a reload, and its lap button adds a
    /// lap to that session in strapd.
    @Test func theWorkoutPageSteersASessionAndMirrorsOneStrapctlStarted() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let strap = try #require(try await Self.addressesByName(web)["Sim HR 0"])
        let strapctl = WebHarness.buildDirectory.appendingPathComponent("strapctl").path
        let report = try await Browser.run(script: Self.workoutScript, web, screenshot: "workout.png", [
            "steer", "http://\(web.host)/?token=\(web.token)", Browser.artifacts + "/workout.png", strapctl, web.socket, strap,
        ])
        let log = report["log"] as? [String] ?? ["unreadable"]
        #expect(log.isEmpty, "the page did not get there: \(log)")
        #expect(report["url"] as? String == "http://\(web.host)/workout", "the address: \(report["url"] ?? "none")")
        let started = report["started"] as? [String: Any] ?? [:]
        let id = try #require(started["session"] as? String, "the page showed no started session: \(report)")
        let shown = report["withHeartRate"] as? [String: Any] ?? [:]
        #expect((shown["hr"] as? String).flatMap { Int($0) }.map { (30...230).contains($0) } == true, "heart rate: \(shown["hr"] ?? "none")")
        for height in started["buttonHeights"] as? [Double] ?? [0] {
            #expect(height >= 48, "a button \(height) px high is no touch target")
        }

        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        let list = try await store.request("workout.list")
        let saved = WorkoutAPITests.array(list["workouts"]).compactMap { WorkoutAPITests.object($0) }
        let workout = try #require(saved.first { WorkoutAPITests.string($0["sessionID"])?.uppercased() == id.uppercased() },
                                   "strapd saved no workout of the page's session \(id): \(saved)")
        #expect(WorkoutAPITests.string(workout["activityType"]) == "cycling")
        #expect(WorkoutAPITests.array(workout["deviceIDs"]).compactMap(WorkoutAPITests.string) == [strap])
        let kinds = WorkoutAPITests.array(workout["events"]).compactMap { WorkoutAPITests.string(WorkoutAPITests.object($0)?["kind"]) }
        #expect(kinds == ["lap", "pause", "resume"], "the saved workout's events: \(kinds)")

        let mirrored = try #require(report["mirroredID"] as? String, "strapctl printed no id: \(report["strapctl"] ?? "")")
        #expect((report["mirrored"] as? [String: Any])?["session"] as? String == mirrored, "the page showed \(report["mirrored"] ?? "nothing")")
        let session = try await store.request("workout.get", ["session": .string(mirrored)])
        let events = WorkoutAPITests.array(WorkoutAPITests.object(session["session"])?["events"])
        let laps = events.filter { WorkoutAPITests.string(WorkoutAPITests.object($0)?["kind"]) == "lap" }
        #expect(laps.count == 1, "strapd's events of the mirrored session: \(events)")

        #expect((report["violations"] as? [Any])?.isEmpty == true, "CSP violations: \(report["violations"] ?? "?")")
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")
        Browser.expectScreenshot(report, "workout.png")
    }

    /// Rule: the workout page writes device names with textContent. As in
    /// aHostileDeviceNameIsRenderedAsText, the name is put in where the page receives it
    /// (neither --simulate nor --replay names a device in devices.list): each device's
    /// checkbox label shows exactly the text, no element is made from it, no alert runs.
    @Test func aHostileDeviceNameIsTextOnTheWorkoutPage() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let report = try await Browser.run(script: Self.workoutScript, web, screenshot: "workout-hostile-name.png", [
            "hostile", "http://\(web.host)/workout?token=\(web.token)", Browser.artifacts + "/workout-hostile-name.png", Self.hostileName,
        ])
        let labels = report["labels"] as? [[String: Any]] ?? []
        #expect(labels.count == 2, "device labels: \(labels)")
        for label in labels {
            #expect(label["text"] as? String == Self.hostileName, "shown as '\(label["text"] ?? "none")'")
            #expect(label["html"] as? String == "&lt;img src=x onerror=alert(1)&gt;", "its markup: \(label["html"] ?? "none")")
        }
        #expect(report["images"] as? Int == 0, "the page holds \(report["images"] ?? "?") <img> elements")
        #expect(report["elementsInLabels"] as? Int == 0, "labels hold \(report["elementsInLabels"] ?? "?") elements")
        #expect((report["alerts"] as? [Any])?.isEmpty == true, "alert() was called: \(report["alerts"] ?? "?")")
        Browser.expectScreenshot(report, "workout-hostile-name.png")
    }
}
