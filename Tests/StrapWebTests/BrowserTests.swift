import Foundation
import Glibc
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The dashboard in a real browser (docs/web.md, "Browser tests"): Debian's headless Chromium,
/// driven by selenium from `Tests/Fixtures/web/dashboard.py`, loads the token URL of a real
/// strapd-web in front of a real `strapd --simulate`. The script only reports what the page
/// shows; these tests judge it against what strapd itself stored, asked through StrapKit.
/// Without Chromium, chromedriver or the selenium venv they fail saying how to install them;
/// they never skip. Screenshots go to `.build/artifacts/web/`, the folder to keep from a CI run.
///
/// Everything that waits here awaits (StrapKit's async calls, Task.sleep) rather than blocking
/// its thread: Swift Testing runs tests on the cooperative pool, as wide as the machine's
/// cores, and a test blocking a thread for a browser's seconds (or DaemonLink's semaphore)
/// starved the other suites' StrapKit calls on 2 cores until they timed out.
@Suite(.serialized) struct BrowserTests {
    /// The hostile name of issue 34: HTML that would run script if the page parsed it.
    static let hostileName = "<img src=x onerror=alert(1)>"

    /// Rule: each simulated strap's tile shows a heart rate, and that number is one strapd
    /// sent for that strap: it is among the strap's stored heart rates (samples.query). Read
    /// twice, 3 s apart, both must be strapd's; a change is not required (a heart rate can
    /// hold for seconds), so a page frozen on a value strapd sent is not caught. With 4 simulated devices (HR, CSC, RSC, HR) every device has a
    /// tile and the two that measure no heart rate show none.
    @Test func theDashboardShowsEachStrapsHeartRateThatStrapdSent() async throws {
        let web = try WebHarness(sensors: 4)
        defer { web.stop() }
        let straps = ["Sim HR 0", "Sim HR 1"]
        let report = try await Browser.run(.live, web, screenshot: "dashboard.png", straps)
        #expect(report["state"] as? String == "live", "the page's state: \(report["state"] ?? "none")")
        // The token went into a cookie and out of the address bar (the 303 to the same path).
        let url = report["url"] as? String ?? ""
        #expect(url == "http://\(web.host)/", "the browser's address: \(url)")
        let addresses = try await Self.addressesByName(web)
        for key in ["tiles", "tilesLater"] {
            let tiles = Browser.tiles(report[key])
            #expect(Set(tiles.keys) == Set(addresses.keys), "\(key): tiles \(tiles.keys.sorted()), strapd's devices \(addresses.keys.sorted())")
            for name in straps {
                let shown = try #require(tiles[name].flatMap { Int($0) }, "\(key): \(name) shows '\(tiles[name] ?? "no tile")'")
                let address = try #require(addresses[name])
                let stored = await Self.storedHeartRates(web, address: address, until: { $0.contains(shown) })
                #expect(stored.contains(shown), "\(key): \(name) shows \(shown) bpm; strapd stored \(stored)")
            }
            for (name, text) in tiles where !straps.contains(name) {
                #expect(text == "–", "\(key): \(name) measures no heart rate but shows '\(text)'")
            }
        }
        Browser.expectScreenshot(report, "dashboard.png")
    }

    /// Rule: the dashboard works under the CSP strapd-web sends (its script is a file, not
    /// inline), it causes no CSP violation of its own, and an inline script or inline event
    /// handler put into the page does not run: the browser blocks both and reports them.
    /// Served without the CSP header, the injected script runs and this fails.
    @Test func theDashboardRunsUnderItsCSPAndNoInlineScriptRuns() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let report = try await Browser.run(.live, web, screenshot: "dashboard-csp.png", ["Sim HR 0"])
        let tiles = Browser.tiles(report["tiles"])
        #expect(tiles["Sim HR 0"].flatMap { Int($0) } != nil, "app.js did not fill the tiles under the CSP: \(tiles)")
        let before = report["violationsBefore"] as? [Any] ?? ["unreadable"]
        #expect(before.isEmpty, "the page itself violates its CSP: \(before)")
        // The favicon a browser asks for by itself is a 404: strapd-web serves none.
        let errors = (report["consoleErrorsBefore"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")
        #expect(report["inlineRan"] as? Bool == false, "an inline <script> ran")
        #expect(report["handlerRan"] as? Bool == false, "an inline onerror handler ran")
        let blocked = Set((report["violationsAfter"] as? [[String: Any]] ?? []).compactMap { $0["directive"] as? String })
        #expect(blocked.isSuperset(of: ["script-src-elem", "script-src-attr"]), "violations reported: \(blocked)")
    }

    /// Rule: a device's name is rendered as text. Every name the page receives (from
    /// /api/devices and the live stream) is replaced in the browser by `hostileName`, as
    /// neither --simulate nor --replay can name a device in devices.list: what this proves is
    /// app.js's rendering, not how a name travels through strapd. Each tile's text must be the
    /// name itself, with no element made from it, no image in the page and no alert. With
    /// `innerHTML` in place of `textContent` the tiles hold an <img> and this fails.
    @Test func aHostileDeviceNameIsRenderedAsText() async throws {
        let web = try WebHarness(sensors: 2)
        defer { web.stop() }
        let report = try await Browser.run(.hostile, web, screenshot: "dashboard-hostile-name.png", [Self.hostileName])
        let tiles = report["tiles"] as? [[String: Any]] ?? []
        #expect(tiles.count == 2, "tiles: \(tiles)")
        for tile in tiles {
            #expect(tile["name"] as? String == Self.hostileName, "shown as '\(tile["name"] ?? "none")'")
            #expect(tile["nameHTML"] as? String == "&lt;img src=x onerror=alert(1)&gt;", "its markup: \(tile["nameHTML"] ?? "none")")
        }
        #expect(tiles.contains { (($0["hr"] as? String).flatMap { Int($0) }) != nil }, "no heart rate came through the renamed live stream: \(tiles)")
        #expect(report["images"] as? Int == 0, "the page holds \(report["images"] ?? "?") <img> elements")
        #expect(report["elementsInNames"] as? Int == 0, "names hold \(report["elementsInNames"] ?? "?") elements")
        #expect((report["alerts"] as? [Any])?.isEmpty == true, "alert() was called: \(report["alerts"] ?? "?")")
        Browser.expectScreenshot(report, "dashboard-hostile-name.png")
    }

    /// Rule: a name that comes through strapd is rendered as text, end to end. strapd replays
    /// a capture (docs/capture-format.md) whose strap's link came up under `hostileName`; the
    /// name reaches the page in the live stream's samples, through strapd-web's /events, with
    /// nothing replaced in the browser. (devices.list names a replayed device by its address,
    /// so the name does not come through /api/devices: aHostileDeviceNameIsRenderedAsText
    /// covers that path.)
    @Test func aHostileNameStrapdRelaysIsRenderedAsText() async throws {
        let capture = "/tmp/strapweb-hostile-\(UUID().uuidString.prefix(8)).capture"
        try Self.hostileCapture().write(toFile: capture, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let web = try WebHarness(sensors: nil, strapdArguments: ["--replay", capture])
        defer { web.stop() }
        let report = try await Browser.run(.relayed, web, screenshot: "dashboard-relayed-hostile-name.png", [Self.hostileName])
        let tiles = report["tiles"] as? [[String: Any]] ?? []
        #expect(tiles.count == 1, "tiles: \(tiles)")
        for tile in tiles {
            #expect(tile["name"] as? String == Self.hostileName, "shown as '\(tile["name"] ?? "none")'")
            #expect(tile["nameHTML"] as? String == "&lt;img src=x onerror=alert(1)&gt;", "its markup: \(tile["nameHTML"] ?? "none")")
            #expect((tile["hr"] as? String).flatMap { Int($0) }.map { (70...89).contains($0) } == true, "heart rate: \(tile["hr"] ?? "none")")
        }
        #expect(report["images"] as? Int == 0, "the page holds \(report["images"] ?? "?") <img> elements")
        #expect(report["elementsInNames"] as? Int == 0, "names hold \(report["elementsInNames"] ?? "?") elements")
        #expect((report["alerts"] as? [Any])?.isEmpty == true, "alert() was called: \(report["alerts"] ?? "?")")
        Browser.expectScreenshot(report, "dashboard-relayed-hostile-name.png")
    }

    /// One strap whose link comes up named `hostileName`, then a heart rate (70–89 bpm, flags
    /// 0: one octet) every second for 5 minutes, replayed in real time: long enough that the
    /// page, opened a few seconds after strapd starts, sees live samples. The name holds no
    /// character JSON would escape, so it is written as it is.
    static func hostileCapture() -> String {
        let address = "5E:1A:00:00:66:00"
        var lines = [#"{"t":"2026-12-07T04:00:00.000Z","mono":1000.0,"device":"\#(address)","event":"linkUp","name":"\#(hostileName)"}"#]
        for i in 1...300 {
            let time = String(format: "2026-12-07T04:%02d:%02d.000Z", i / 60, i % 60)
            lines.append(#"{"t":"\#(time)","mono":\#(1000 + i).0,"device":"\#(address)","event":"notification","characteristic":"2a37","hex":"00\#(String(format: "%02x", 70 + i % 20))"}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// strapd's devices by name (devices.list through StrapKit).
    static func addressesByName(_ web: WebHarness) async throws -> [String: String] {
        let result = try await StrapStore(socket: web.socket).request("devices.list")
        guard case .array(let devices)? = result["devices"] else { return [:] }
        var byName: [String: String] = [:]
        for case .object(let d) in devices {
            if case .string(let name)? = d["name"], case .string(let address)? = d["address"] { byName[name] = address }
        }
        return byName
    }

    /// The strap's latest stored heart rates, polled (up to 10 s) until `until` holds: the
    /// store is read up to its last sync, which may trail the live stream the page saw.
    static func storedHeartRates(_ web: WebHarness, address: String, until: ([Int]) -> Bool) async -> [Int] {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        var stored: [Int] = []
        for _ in 0..<50 {
            // 1000: every value of the harness's strapd's life (1 Hz), not only the last two
            // minutes: on a loaded machine the page's value can be minutes old by the time
            // the script has finished and this query runs.
            let result = try? await store.request("samples.query", ["types": .array([.string("heartRate")]), "limit": .int(1000),
                                                             "predicate": .object(["device": .object(["id": .string(address)])]),
                                                             "sort": .string("end"), "descending": .bool(true)])
            if case .array(let samples)? = result?["samples"] {
                // The page shows Math.round of the sample's value.
                stored = samples.compactMap { sample -> Int? in
                    guard case .object(let o) = sample else { return nil }
                    switch o["value"] { case .int(let i)?: return Int(i); case .double(let d)?: return Int(d.rounded()); default: return nil }
                }
            }
            if until(stored) { break }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return stored
    }
}

/// Runs `Tests/Fixtures/web/dashboard.py` and reads its JSON report.
enum Browser {
    enum Mode: String { case live, hostile, relayed, figures }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The repository's top, from this file's path: the venv and the artifacts live under its
    /// .build whichever scratch path (the ASan run's .build/asan) built the test.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let python = repository + "/.build/web-venv/bin/python"
    static let script = repository + "/Tests/Fixtures/web/dashboard.py"
    static let artifacts = repository + "/.build/artifacts/web"

    /// What must be installed, with how to install it: a missing browser fails the test.
    static func requireTools() throws {
        let needs = [("/usr/bin/chromium", "Debian's chromium: run scripts/deps.sh test"),
                     ("/usr/bin/chromedriver", "Debian's chromium-driver: run scripts/deps.sh test"),
                     (python, "the selenium venv: run scripts/pyvenv.sh .build/web-venv Tests/Fixtures/web/requirements.txt")]
        let missing = needs.filter { access($0.0, X_OK) != 0 }
        if !missing.isEmpty {
            throw Failure(description: "the browser tests cannot run; missing " + missing.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))
        }
    }

    /// The script's report; it is given 120 s (it polls the page for 30 s at most), then killed.
    /// The page's screenshot goes to `artifacts/screenshot`, replacing an older run's.
    static func run(_ mode: Mode, _ web: WebHarness, screenshot: String, _ arguments: [String]) async throws -> [String: Any] {
        try await run(script: script, web, screenshot: screenshot,
                      [mode.rawValue, "http://\(web.host)/?token=\(web.token)", artifacts + "/" + screenshot] + arguments)
    }

    /// A script of Tests/Fixtures/web with `arguments`: its JSON report.
    static func run(script: String, _ web: WebHarness, screenshot: String, _ arguments: [String]) async throws -> [String: Any] {
        try requireTools()
        try? FileManager.default.removeItem(atPath: artifacts + "/" + screenshot)
        let out = web.directory + "/browser.json", err = web.directory + "/browser.log"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let p = Process()
        // nice: Chromium is the heaviest thing the suite runs, and the machine is shared.
        p.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
        p.arguments = ["-n", "19", python, script] + arguments
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        try p.run()
        for _ in 0..<1200 where p.isRunning { try? await Task.sleep(for: .milliseconds(100)) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        let said = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        let data = FileManager.default.contents(atPath: out) ?? Data()
        guard p.terminationStatus == 0, let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: """
                \(URL(fileURLWithPath: script).lastPathComponent) \(arguments.first ?? "") exited \(p.terminationStatus) (\(p.terminationReason == .uncaughtSignal ? "killed after 120 s" : "exit"))
                stdout: \(String(decoding: data, as: UTF8.self))
                stderr: \(said.suffix(4000))
                strapd-web: \(web.log("web"))
                """)
        }
        return report
    }

    /// name → heart-rate text of the tiles in a report.
    static func tiles(_ value: Any?) -> [String: String] {
        var byName: [String: String] = [:]
        for tile in value as? [[String: Any]] ?? [] {
            if let name = tile["name"] as? String { byName[name] = tile["hr"] as? String ?? "" }
        }
        return byName
    }

    /// The screenshot the script saved (this run's: run removed the last one) is a PNG.
    static func expectScreenshot(_ report: [String: Any], _ name: String) {
        #expect(report["screenshot"] as? Bool == true, "selenium could not save \(name)")
        let bytes = FileManager.default.contents(atPath: artifacts + "/" + name) ?? Data()
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "no PNG screenshot at \(artifacts)/\(name)")
    }
}
