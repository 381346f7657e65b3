import Foundation
@testable import StrapControl
import StrapExport
import StrapModel
import StrapWire
import Synchronization
import Testing
import ThirdPartyReaders
@testable import StrapDaemon

/// `strapctl workout export`, `workout hrv` and `workout show`'s chart against a real front end:
/// the 60 s simulated ride of WorkoutExportProtocolTests (lap at 20 s, pause 30–40 s) on the
/// test clock, strapctl in process.
@Suite struct StrapctlExportTests {
    typealias Clock = WorkoutProtocolTests.TestClock

    func strapctl(_ h: RouterHarness, _ args: String..., environment: [String: String] = [:]) -> CommandOutput {
        Strapctl.run(["--socket", h.socketPath] + args, environment: environment)
    }

    /// A harness with the profile set (so zones are known) and the ride saved; its workout object.
    func savedRide() throws -> (RouterHarness, JSONObject, String) {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        #expect(strapctl(h, "profile", "set", "weight=72.5", "dateOfBirth=1990-04-01", "biologicalSex=female").exitCode == 0)
        let w = try WorkoutExportProtocolTests().savedWorkout(h, clock, try h.client())
        return (h, w, try #require(w.string("uuid")))
    }

    func files(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }

    func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    @Test func exportWritesExactlyTheStreamedFileAndReadersAcceptIt() throws {
        let (h, w, uuid) = try savedRide()
        defer { h.close() }
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ride.fit").path
        let out = strapctl(h, "workout", "export", uuid, "-o", path)
        #expect(out.exitCode == 0 && out.stderr.isEmpty, "\(out.stderr)")
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(out.stdout == "wrote \(path) (\(written.count) bytes, FIT)\n")
        // The very bytes workout.export streams, reassembled by the protocol test's reader.
        let streamed = try WorkoutExportProtocolTests().export(try h.client(), uuid, "fit")
        #expect(streamed.announced == Int64(written.count) && streamed.bytes == written)
        #expect(files(dir) == ["ride.fit"], "no temporary file is left beside it")
        let read = try ThirdPartyReaders.verifyFIT(URL(fileURLWithPath: path),
                                                   expect: ["session": ["sport": "cycling", "num_laps": 2, "timer": 50.0, "elapsed": 60.0]])
        #expect(!read.isEmpty)

        // A directory gets the default name: the start (UTC) and the activity. By the session's
        // id too, with the format's extension.
        #expect(w.string("start") == "2023-11-14T22:13:20.000Z")
        let session = try #require(w.string("sessionID"))
        let tcx = strapctl(h, "workout", "export", session, "--format", "tcx", "-o", dir.path)
        #expect(tcx.exitCode == 0, "\(tcx.stderr)")
        let named = dir.appendingPathComponent("20231114-221320-cycling.tcx").path
        #expect(tcx.stdout == "wrote \(named) (\(try Data(contentsOf: URL(fileURLWithPath: named)).count) bytes, TCX)\n")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: named))) == WorkoutExportProtocolTests().export(try h.client(), uuid, "tcx").bytes)
        // Exporting again replaces the file whole.
        #expect(strapctl(h, "workout", "export", String(uuid.prefix(8)), "-o", path).exitCode == 0)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == written)
    }

    /// One computation behind every figure: the FIT's session message (read by Garmin's SDK and
    /// fitdecode), the saved summary and `workout show` give the same heart rate, time in zones
    /// and duration for the same workout.
    @Test func theFITSessionTheSummaryAndWorkoutShowAgree() throws {
        let (h, w, uuid) = try savedRide()
        defer { h.close() }
        guard case .object(let summary)? = w["summary"] else { Issue.record("no summary: \(w)"); return }
        func figure(_ key: String) throws -> Double {
            switch summary[key] {
            case .double(let d)?: return d
            case .int(let i)?: return Double(i)
            default: throw ClientError.closed
            }
        }
        let average = try figure("heartRateAverage"), maximum = try figure("heartRateMaximum")
        let duration = try figure("elapsedTime")
        let zones = try (["timeBelowZone1"] + (1...5).map { "timeInZone\($0)" }).map(figure)
        #expect(zones.reduce(0, +) > 0)

        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ride.fit").path
        #expect(strapctl(h, "workout", "export", uuid, "-o", path).exitCode == 0)
        try ThirdPartyReaders.verifyFIT(URL(fileURLWithPath: path), expect: ["session": [
            "avg_hr": Int(average.rounded()), "max_hr": Int(maximum.rounded()), "timer": duration, "zones": zones,
        ]])

        let shown = lines(strapctl(h, "workout", "show", uuid, "--chart", "none").stdout)
        #expect(shown.contains("  duration    \(TextFormat.duration(duration)) (excluding pauses)"), "\(shown)")
        #expect(shown.contains { $0.hasPrefix("  heart rate  avg \(Int(average.rounded())) bpm, max \(Int(maximum.rounded())) bpm") }, "\(shown)")
        // The zones table: below zone 1, then zones 1-5, each with its time.
        let header = try #require(shown.firstIndex { $0.hasPrefix("  ZONE ") })
        let times = shown[(header + 1)...(header + 6)].map { $0.split(separator: " ").dropLast().last.map(String.init) }
        #expect(times == zones.map { TextFormat.duration($0) }, "\(shown)")
    }

    @Test func exportToStandardOutputWritesTheBytesAlone() throws {
        let (h, _, uuid) = try savedRide()
        defer { h.close() }
        let bytes = Mutex<[UInt8]>([]), text = Collector(), errors = Collector()
        let sink = OutputSink(stdout: { text.append($0) }, stderr: { errors.append($0) }, stdoutBytes: { b in bytes.withLock { $0 += b } })
        let code = Strapctl.run(["--socket", h.socketPath, "workout", "export", uuid, "--format", "csv", "-o", "-"], environment: [:], sink: sink)
        #expect(code == 0 && errors.text.isEmpty && text.text.isEmpty, "\(errors.text)")
        let csv = bytes.withLock { $0 }
        #expect(csv == (try WorkoutExportProtocolTests().export(try h.client(), uuid, "csv").bytes))
        #expect(String(decoding: csv, as: UTF8.self).hasPrefix("time,elapsed_s,lap,paused,heart_rate_bpm,"))
    }

    @Test func aFailedOrInterruptedExportLeavesNoFile() throws {
        let (h, _, uuid) = try savedRide()
        defer { h.close() }
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("x.fit").path

        let unknown = UUID().uuidString
        let missing = strapctl(h, "workout", "export", unknown, "-o", path)
        #expect(missing.exitCode == ExitCode.daemonError && missing.stderr == "strapctl: no saved workout \(unknown) (notFound)\n")
        #expect(files(dir).isEmpty, "the temporary file made before asking is removed")

        #expect(try h.client().call(#"{"id":1,"op":"workout.start","activityType":"running","devices":[]}"#).isOK)
        let open = try openSession(h)
        let notEnded = strapctl(h, "workout", "export", open, "-o", path)
        #expect(notEnded.exitCode == ExitCode.daemonError && notEnded.stderr.hasSuffix("can be exported (invalidOption)\n"), "\(notEnded.stderr)")
        #expect(files(dir).isEmpty)

        // Ctrl-C (here: the interrupt descriptor already readable) cancels the stream.
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var byte: UInt8 = 3
        #expect(write(fds[1], &byte, 1) == 1)
        let collected = Collector()
        let sink = OutputSink(stdout: { collected.append($0) }, stderr: { collected.append($0) })
        let code = Strapctl.run(["--socket", h.socketPath, "workout", "export", uuid, "-o", path], environment: [:], sink: sink,
                                interrupts: .descriptor(fds[0]))
        #expect(code == ExitCode.interrupted && collected.text == "strapctl: export interrupted; nothing written\n")
        #expect(files(dir).isEmpty)

        let nowhere = strapctl(h, "workout", "export", uuid, "-o", dir.path + "/no/such/dir/x.fit")
        #expect(nowhere.exitCode == ExitCode.daemonError && nowhere.stderr.hasPrefix("strapctl: cannot create a file next to \(dir.path)/no/such/dir/x.fit: "))
    }

    @Test func hrvPrintsTheDaemonsReport() throws {
        let (h, w, uuid) = try savedRide()
        defer { h.close() }
        let report = try h.client().call(#"{"id":1,"op":"workout.hrv","workout":"\#(uuid)"}"#).result
        let out = strapctl(h, "workout", "hrv", uuid)
        #expect(out.exitCode == 0, "\(out.stderr)")
        let text = lines(out.stdout)
        let device = try #require(report.string("deviceID"))
        #expect(text[0] == "HRV of workout \(uuid), beats from \(device)")
        let n = { (key: String) in Int(report.int(key) ?? -1) }
        let (intervals, paused) = (n("intervals"), n("excludedPaused"))
        #expect(intervals > 20 && paused > 0, "the ride has RR intervals, some in its pause")
        #expect(text.contains("  analysed    \(intervals - paused) of \(intervals) RR intervals, \(n("normal")) normal"))
        #expect(text.contains("  excluded    \(n("excludedOutOfRange") + n("excludedEctopic") + paused): \(n("excludedOutOfRange")) out of range, "
                              + "\(n("excludedEctopic")) ectopic, \(paused) in pauses"))
        #expect(text.contains("  runs        \(n("runs")) (\(n("successiveDifferences")) successive differences, NN50 \(n("nn50")))"))
        #expect(text.contains("  method      \(report.string("method") ?? "?")"))
        for label in ["mean NN", "SDNN", "RMSSD"] {
            #expect(text.contains { $0.hasPrefix("  " + label.padding(toLength: 12, withPad: " ", startingAt: 0)) && $0.hasSuffix(" ms") })
        }
        // The saved summary carries the same figures: `show` prints them.
        if case .object(let summary)? = w["summary"], case .double(let rmssd)? = summary["hrvRMSSD"] {
            #expect(report["rmssd"] == .double(rmssd))
        }

        let json = strapctl(h, "--json", "workout", "hrv", uuid)
        guard case .object(let reply) = try JSONParser.parse(Array(json.stdout.utf8)) else { Issue.record("not JSON: \(json.stdout)"); return }
        #expect(reply.result == report)

        // A time range: the beats of one strap from the start to 25 s (before the pause).
        let from = "2023-11-14T22:13:20Z", to = "2023-11-14T22:13:45Z"
        let range = try h.client().call(#"{"id":1,"op":"workout.hrv","from":"\#(from)","to":"\#(to)","device":"\#(device)"}"#).result
        let ranged = lines(strapctl(h, "workout", "hrv", "--from", from, "--to", to, "--device", device).stdout)
        #expect(ranged.first == "HRV of 2023-11-14 22:13:20 to 2023-11-14 22:13:45 UTC, beats from \(device)")
        #expect(ranged.contains("  excluded    \(Int(range.int("excludedOutOfRange") ?? 0) + Int(range.int("excludedEctopic") ?? 0)): "
                                + "\(range.int("excludedOutOfRange") ?? -1) out of range, \(range.int("excludedEctopic") ?? -1) ectopic, 0 in pauses"))
        let empty = strapctl(h, "workout", "hrv", "--from", "2020-01-01T00:00:00Z", "--to", "2020-01-01T01:00:00Z")
        #expect(empty.exitCode == ExitCode.noData && empty.stderr == "strapctl: no RR intervals in 2020-01-01 00:00:00 to 2020-01-01 01:00:00 UTC (noData)\n")
    }

    @Test func showDrawsTheHeartRateChartZoneBarsAndHRV() throws {
        let (h, w, uuid) = try savedRide()
        defer { h.close() }
        let out = strapctl(h, "workout", "show", uuid, environment: ["COLUMNS": "100", "LANG": "en_US.UTF-8"])
        #expect(out.exitCode == 0, "\(out.stderr)")
        let text = lines(out.stdout)
        // Not a terminal: ASCII, COLUMNS wide.
        let title = try #require(text.firstIndex { $0.hasPrefix("heart rate (bpm)  min ") })
        let stored = try #require(try h.store.workout(UUID(uuidString: uuid)!))
        let rates = try h.store.samples(matching: .and([.workout(stored.uuid), .types([.heartRate])]))
            .filter { $0.start >= stored.start && $0.start < stored.end && $0.value > 0 }.map(\.value)
        #expect(text[title] == "heart rate (bpm)  min \(Int(rates.min()!.rounded()))  max \(Int(rates.max()!.rounded()))")
        let plot = Array(text[(title + 1)...(title + 10)])
        #expect(plot.allSatisfy { $0.hasPrefix("    |") || $0.dropFirst(3).hasPrefix(" +") }, "\(plot)")
        // 1 Hz readings held up to 5 s: every one of the 95 columns has its point.
        for column in 5..<100 {
            #expect(plot.contains { Array($0).count > column && Array($0)[column] == "*" }, "column \(column)")
        }
        // The axis marks lap 2 at 20 of 60 s; the pause 30–40 s is shaded under it.
        let axis = Array(text[title + 11]), marks = Array(text[title + 12])
        #expect(axis.count == 100 && String(axis.prefix(5)) == "    +" && axis[5 + 95 * 20 / 60] == "+")
        #expect(axis.dropFirst(5).filter { $0 == "+" }.count == 1)
        #expect(marks[5] == "1" && marks[5 + 95 * 20 / 60] == "2")
        let shaded = marks.indices.filter { marks[$0] == "=" }.map { $0 - 5 }
        #expect(shaded.first == 95 * 30 / 60 && shaded.last == 95 * 40 / 60 - 1 && shaded.count == shaded.last! - shaded.first! + 1, "\(shaded)")
        #expect(text[title + 13].hasPrefix("     0:00 "))
        #expect(text.firstIndex { $0.hasPrefix("LAP ") }! > title + 13, "the chart is above the laps table")

        // A bar per zone from the summary's bounds and times.
        guard case .object(let summary)? = w["summary"] else { Issue.record("no summary"); return }
        func number(_ key: String) -> Double? {
            switch summary[key] { case .int(let i)?: Double(i); case .double(let d)?: d; default: nil }
        }
        let heading = try #require(text.firstIndex { $0.hasPrefix("heart-rate zones: percentMaxHR, default scheme, maximum ") })
        let bars = Array(text[(heading + 1)...(heading + 6)])
        let seconds = ["timeBelowZone1", "timeInZone1", "timeInZone2", "timeInZone3", "timeInZone4", "timeInZone5"].map { number($0) ?? -1 }
        let bounds = (0...5).map { Int((number("heartRateZoneBound\($0)") ?? -1).rounded()) }
        let names = ["below Z1", "Z1", "Z2", "Z3", "Z4", "Z5"]
        let ranges = ["<\(bounds[0])"] + (1...4).map { "\(bounds[$0 - 1])-\(bounds[$0])" } + [">=\(bounds[4])"]
        for (k, bar) in bars.enumerated() {
            #expect(bar.hasPrefix("  " + names[k].padding(toLength: 10, withPad: " ", startingAt: 0) + ranges[k] + " "), "\(bar)")
            let s = Int(seconds[k].rounded())
            #expect(bar.contains(String(format: "  0:%02d:%02d ", s / 60, s % 60)), "\(bar)")
            #expect(bar.contains("#") == (seconds[k] > 0), "\(bar)")
            #expect(bar.count <= 100)
        }
        let longest = seconds.indices.max { seconds[$0] < seconds[$1] }!
        #expect(bars.map { $0.filter { $0 == "#" }.count }.max() == bars[longest].filter { $0 == "#" }.count)
        #expect(seconds.reduce(0, +) > 0)

        // The saved HRV figures.
        let intervals = Int(number("hrvIntervals") ?? 0), normal = Int(number("hrvNormalIntervals") ?? 0)
        #expect(text.contains { $0.hasPrefix("  HRV         RMSSD ") && $0.hasSuffix(" % (\(normal) of \(intervals) RR intervals normal)") })

        // --chart none: the table of before, no curve.
        let plain = lines(strapctl(h, "workout", "show", uuid, "--chart", "none").stdout)
        #expect(!plain.contains { $0.hasPrefix("heart rate (bpm)") } && plain.contains { $0.hasPrefix("  ZONE ") })
    }

    @Test func showOfAnOpenSessionChartsWhatIsStoredSoFar() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        #expect(strapctl(h, "profile", "set", "maximumHeartRate=190").exitCode == 0)
        #expect(strapctl(h, "workout", "start", "--activity", "cycling", "--device", h.identities[0].address).exitCode == 0)
        let feed = WorkoutProtocolTests.Feed(seconds: 30)
        try feed.submit(until: 24, to: h); clock.set(seconds: 24)
        let out = strapctl(h, "workout", "show", try openSession(h))
        #expect(out.exitCode == 0, "\(out.stderr)")
        let text = lines(out.stdout)
        #expect(text[0].hasPrefix("session ") && text[0].hasSuffix(" (running)"))
        let title = try #require(text.firstIndex { $0.hasPrefix("heart rate (bpm)  min ") })
        // 80 columns by default; the span so far is 24 s: the labels end before it.
        #expect(text[title + 11].count == 80)
        #expect(text[title + 13].hasPrefix("     0:00 ") && !text[title + 13].contains("0:30"))
        // HRV is the saved workout's: `workout hrv` computes it for an open session.
        #expect(!text.contains { $0.hasPrefix("  HRV ") })
        let heading = try #require(text.firstIndex { $0 == "heart-rate zones: percentMaxHR, default scheme, maximum 190 bpm" })
        #expect(text[heading + 1].hasPrefix("  below Z1  <95 ") && text[heading + 6].hasPrefix("  Z5        >=171 "))
    }

    /// When a chart column stands for a minute or more, strapctl reads per-minute averages
    /// (statistics.collection) instead of every sample: the picture is the one StrapExport
    /// draws from all the samples. 10 minutes in 10 ASCII columns (COLUMNS=15).
    @Test func aLongWorkoutIsChartedFromPerMinuteAverages() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        #expect(strapctl(h, "workout", "start", "--activity", "running", "--device", h.identities[0].address).exitCode == 0)
        let session = try openSession(h)
        let feed = WorkoutProtocolTests.Feed(seconds: 610)
        try feed.submit(until: 600, to: h); clock.set(seconds: 600)
        #expect(strapctl(h, "workout", "end").exitCode == 0)
        let out = strapctl(h, "workout", "show", session, environment: ["COLUMNS": "15"])
        #expect(out.exitCode == 0, "\(out.stderr)")
        let text = lines(out.stdout)
        let title = try #require(text.firstIndex { $0.hasPrefix("heart rate (bpm)") })

        let saved = try h.client().call(#"{"id":2,"op":"samples.anchored","types":["workout"]}"#).result.objects("added")
        let uuid = try #require(UUID(uuidString: saved.first?.string("uuid") ?? ""))
        let workout = try #require(try h.store.workout(uuid))
        let samples = try h.store.samples(matching: .and([.workout(workout.uuid), .types([.heartRate])]))
        #expect(samples.count > 500)
        let expected = try WorkoutChart(width: 15, height: 10, style: .ascii).heartRate(workout: workout, samples: samples)
            .split(separator: "\n").map { String($0).replacingOccurrences(of: " +$", with: "", options: .regularExpression) }
        #expect(Array(text[title..<(title + expected.count)]) == expected)

        // Narrower columns read the samples themselves, a page at a time: every one, once.
        let ctx = CommandContext(socket: h.socketPath, json: false, sink: OutputSink(stdout: { _ in }, stderr: { _ in }))
        let span = try #require(HeartRateSpan(WorkoutBrowse.details(try ctx.call("workout.get", ["session": .string(session)])), now: nil))
        let paged = try WorkoutCharts.fetch(span, bins: 1000, pageSize: 50, ctx)
        let direct = samples.filter { $0.value > 0 && $0.start >= workout.start && $0.start < workout.end }
        #expect(paged.count == direct.count && paged.map(\.0) == direct.map(\.start) && paged.map(\.1) == direct.map(\.value))
    }

    func openSession(_ h: RouterHarness) throws -> String {
        let list = try h.client().call(#"{"id":1,"op":"workout.list"}"#)
        let session = list.result.objects("sessions").first.flatMap { info -> String? in
            if case .object(let s)? = info["session"] { return s.string("session") } else { return nil }
        }
        return try #require(session)
    }
}
