import Foundation
import Testing
import StrapWire
@testable import StrapControl

/// `strapctl workout export|hrv` and `show`'s pictures without a daemon: arguments, the checks
/// on an export stream, the temporary file, the chart's input and the zone bars.
@Suite struct WorkoutExportCommandTests {
    let missing = "/tmp/strapctl-test-\(UUID().uuidString.prefix(8))/none.sock"
    typealias Fixtures = WorkoutCommandTests

    func object(_ json: String) -> JSONObject {
        guard case .object(let o) = try! JSONParser.parse(Array(json.utf8)) else { fatalError("not an object: \(json)") }
        return o
    }

    func ms(_ rfc3339: String) -> Int64 { try! RFC3339Timestamp.parse(rfc3339) }

    @Test(arguments: [["workout", "export"], ["workout", "export", "A", "B"], ["workout", "export", "A", "--format", "gpx"],
                      ["workout", "export", "A", "-o"], ["workout", "export", "A", "-o", ""], ["--json", "workout", "export", "A", "-o", "-"],
                      ["workout", "export", "A", "--utc"], ["workout", "hrv", "--from", "-1h"], ["workout", "hrv", "--to", "now"],
                      ["workout", "hrv", "A", "--from", "-2h", "--to", "-1h"], ["workout", "hrv", "--from", "-1h", "--to", "-2h"],
                      ["workout", "hrv", "--device"], ["workout", "hrv", "A", "B"], ["workout", "show", "A", "--chart", "fancy"]])
    func argumentErrorsAreExitTwoWithTheWorkoutUsage(_ args: [String]) {
        let out = Strapctl.run(["--socket", missing] + args)
        #expect(out.exitCode == ExitCode.usage, "\(args): \(out.stderr)")
        #expect(out.stderr.contains("usage: strapctl [--socket PATH] [--json] workout COMMAND"), "\(args)")
        #expect(out.stderr.contains("export ID [--format fit|tcx|csv] [-o FILE|DIR|-]"))
    }

    @Test func anExportThatCannotReachStrapdLeavesNoFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strapctl-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let id = "6F1C2D3E-0000-4000-8000-00000000002A"
        let out = Strapctl.run(["--socket", missing, "workout", "export", id, "-o\(dir.path)/ride.fit"])
        #expect(out.exitCode == ExitCode.unreachable && out.stderr == "strapctl: strapd is not running (no socket at \(missing))\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        #expect(Strapctl.run(["--socket", missing, "workout", "hrv", "--from", "-1h", "--to", "now"]).exitCode == ExitCode.unreachable)
    }

    @Test func theStreamMustAddUpToTheAnnouncedSize() throws {
        func chunk(_ offset: Int, _ bytes: [UInt8]) -> JSONObject {
            ["offset": .int(Int64(offset)), "data": .string(Data(bytes).base64EncodedString())]
        }
        var a = try ExportAssembler(announced: 5)
        #expect(try a.accept(chunk(0, [1, 2, 3])) == [1, 2, 3])
        #expect(try a.accept(chunk(3, [4, 5])) == [4, 5])
        try a.finish(["bytes": .int(5), "chunks": .int(2)])
        #expect(a.received == 5 && a.chunks == 2)

        func failure(_ body: () throws -> Void) -> String {
            do { try body(); return "no error" } catch let e as ExportFailure { return e.description } catch { return "\(error)" }
        }
        var gap = try ExportAssembler(announced: 10)
        _ = try gap.accept(chunk(0, [1, 2]))
        #expect(failure { _ = try gap.accept(chunk(4, [3])) }
                == "export stream from strapd is broken: chunk 2 starts at byte 4, but 2 bytes had arrived (bytes missing); nothing written")
        #expect(failure { _ = try gap.accept(chunk(1, [3])) }.contains("chunk 2 starts at byte 1, but 2 bytes had arrived (bytes repeated)"))
        #expect(failure { _ = try gap.accept(["offset": .int(2), "data": .string("not base64!")]) }.contains("chunk 2 at byte 2 is not base64"))
        #expect(failure { _ = try gap.accept(chunk(2, [UInt8](repeating: 0, count: 9))) }.contains("runs to byte 11, past the 10 bytes announced"))
        #expect(failure { try gap.finish([:]) }.contains("it ended after 2 of the 10 bytes announced"))
        var whole = try ExportAssembler(announced: 1)
        _ = try whole.accept(chunk(0, [9]))
        #expect(failure { try whole.finish(["bytes": .int(2)]) }.contains("strapd says it sent 2 bytes, 1 arrived"))
        #expect(failure { _ = try ExportAssembler(announced: nil) }.contains("its ok reply gives no size"))
    }

    @Test func theTemporaryFileIsRenamedOverTheTargetOrRemoved() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strapctl-tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("a.csv").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let file = try TemporaryFile(replacing: target)
        #expect(file.temporaryPath.hasPrefix(dir.path + "/.a.csv.strapctl-"))
        try file.write(Array("new,".utf8))
        try file.write(Array("bytes".utf8))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "old", "the target is untouched until the end")
        try file.commit()
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new,bytes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["a.csv"])

        let abandoned = try TemporaryFile(replacing: dir.appendingPathComponent("b.fit").path)
        try abandoned.write([1, 2, 3])
        #expect(FileManager.default.fileExists(atPath: abandoned.temporaryPath))
        abandoned.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["a.csv"])
    }

    @Test func namesOptionsAndTheProgressBar() {
        #expect(WorkoutExport.expandingShortOptions(["X", "-o", "-", "-oa.fit", "--format", "csv"]) ==
                ["X", "--output", "-", "--output=a.fit", "--format", "csv"])
        #expect(WorkoutExport.defaultName(WorkoutDetails(saved: object(Fixtures.saved)), format: "fit") == "20261201-160000-cycling.fit")
        #expect(WorkoutExport.defaultName(WorkoutDetails(sessionInfo: object(Fixtures.session)), format: "csv") == "20261201-160000-running.csv")
        #expect(WorkoutExport.defaultName(WorkoutDetails(saved: object(#"{"activityType":"../x"}"#)), format: "tcx") == "workout-x.tcx")

        #expect(ProgressBar.line(label: "a.fit", done: 65536, total: 262144, width: 8) == "a.fit [##      ] 65536/262144 bytes 25%")
        var bar = ProgressBar(label: "a.fit", total: 1000)
        #expect(bar.update(1) == "\ra.fit [                        ] 1/1000 bytes 0%")
        #expect(bar.update(9) == nil, "redrawn only when the percentage changes")
        #expect(bar.update(500) == "\ra.fit [############            ] 500/1000 bytes 50%")
        #expect(bar.update(1000) == "\ra.fit [########################] 1000/1000 bytes 100%")
    }

    @Test func hrvReportAsText() {
        let r = object(#"""
            {"deviceID":"5E:1A:00:00:48:00","intervals":772,"normal":751,"excludedOutOfRange":1,"excludedEctopic":20,
             "excludedPaused":0,"runs":1,"successiveDifferences":729,"nn50":281,"slots":772,
             "meanNN":1185.77,"sdnn":73.9,"rmssd":64.9,"pnn50":38.52,"meanHeartRate":50.8,"method":"range 300-2000 ms"}
            """#)
        #expect(WorkoutHRV.lines(r, subject: "workout W") == [
            "HRV of workout W, beats from 5E:1A:00:00:48:00",
            "  mean NN     1185.8 ms",
            "  SDNN        73.9 ms",
            "  RMSSD       64.9 ms",
            "  pNN50       38.5 %",
            "  mean HR     50.8 bpm",
            "  analysed    772 of 772 RR intervals, 751 normal",
            "  excluded    21: 1 out of range, 20 ectopic, 0 in pauses",
            "  runs        1 (729 successive differences, NN50 281)",
            "  method      range 300-2000 ms",
        ])
        let few = WorkoutHRV.lines(object(#"{"intervals":3,"normal":1,"excludedOutOfRange":0,"excludedEctopic":0,"excludedPaused":2}"#), subject: "x")
        #expect(few.contains("  SDNN        - (too few normal intervals)") && few.contains("  analysed    1 of 3 RR intervals, 1 normal"))
        #expect(WorkoutHRV.summaryLine(["hrvIntervals": 772, "hrvNormalIntervals": 751, "hrvRMSSD": 64.9, "hrvSDNN": 73.9,
                                        "hrvMeanNN": 1185.77, "hrvPNN50": 38.52])
                == "RMSSD 64.9 ms, SDNN 73.9 ms, mean NN 1185.8 ms, pNN50 38.5 % (751 of 772 RR intervals normal)")
        #expect(WorkoutHRV.summaryLine([:]) == nil && WorkoutHRV.summaryLine(["hrvIntervals": 2, "hrvNormalIntervals": 1])
                == "too few normal intervals (1 of 2 RR intervals normal)")
        var d = WorkoutDetails(saved: object(#"{"summary":{"heartRateAverage":120},"info":{"hrvReason":"no RR intervals from the session's devices"}}"#))
        #expect(WorkoutReport.summary(d, zonesInline: false).contains("  HRV         unknown: no RR intervals from the session's devices"))
        d.figures["hrvIntervals"] = 2
        #expect(WorkoutReport.summary(d, zonesInline: false).contains("  HRV         too few normal intervals (0 of 2 RR intervals normal)"))
    }

    @Test func chartStyleAndWidthFollowTheTerminal() {
        let terminal = OutputSink(isTerminal: true, columns: 132, stdout: { _ in }, stderr: { _ in })
        let pipe = OutputSink(stdout: { _ in }, stderr: { _ in })
        #expect(ChartSettings(.auto, sink: terminal, environment: ["LANG": "de_DE.UTF-8"]).style == .unicode)
        #expect(ChartSettings(.auto, sink: terminal, environment: ["LANG": "de_DE.UTF-8", "LC_ALL": "C"]).style == .ascii)
        #expect(ChartSettings(.auto, sink: terminal, environment: ["LC_CTYPE": "en_US.utf8"]).style == .unicode)
        #expect(ChartSettings(.auto, sink: terminal, environment: [:]).style == .ascii)
        #expect(ChartSettings(.auto, sink: pipe, environment: ["LANG": "C.UTF-8"]).style == .ascii)
        #expect(ChartSettings(.unicode, sink: pipe, environment: [:]).style == .unicode)
        #expect(ChartSettings(.none, sink: terminal, environment: ["LANG": "C.UTF-8"]).style == nil)
        #expect(ChartSettings(.auto, sink: terminal, environment: ["COLUMNS": "90"]).width == 132)
        #expect(ChartSettings(.auto, sink: pipe, environment: ["COLUMNS": "90"]).width == 90)
        #expect(ChartSettings(.auto, sink: pipe, environment: ["COLUMNS": "wide"]).width == 80)
        #expect(ChartSettings(.unicode, sink: pipe, environment: [:]).bins == 150 && ChartSettings(.ascii, sink: pipe, environment: [:]).bins == 75)
    }

    @Test func theChartsSpanPausesLapsAndPredicate() throws {
        let saved = try #require(HeartRateSpan(WorkoutDetails(saved: object(Fixtures.saved)), now: nil))
        #expect(saved.start == ms("2026-12-01T16:00:00Z") && saved.end == ms("2026-12-01T16:31:05Z"))
        #expect(saved.pauses == [ms("2026-12-01T16:20:00Z")..<ms("2026-12-01T16:21:00Z")])
        #expect(saved.lapStarts == [ms("2026-12-01T16:00:00Z"), ms("2026-12-01T16:10:00Z")])
        #expect(saved.predicate == .object(["workout": .string("6F1C2D3E-0000-4000-8000-00000000002A")]))
        // An open session: up to its statistics' time, paused since 16:01:15.4, its one device.
        let open = try #require(HeartRateSpan(WorkoutDetails(sessionInfo: object(Fixtures.session)), now: ms("2026-12-01T16:01:20Z")))
        #expect(open.end == ms("2026-12-01T16:01:20Z") && open.pauses == [ms("2026-12-01T16:01:15.4Z")..<ms("2026-12-01T16:01:20Z")])
        #expect(open.predicate == .object(["device": .object(["id": .string("AA:03")])]))
        #expect(HeartRateSpan(WorkoutDetails(sessionInfo: object(Fixtures.session)), now: nil) == nil, "no end, no span")
    }

    @Test func readingsAreBinnedAndHeldFiveSeconds() {
        var span = HeartRateSpan(WorkoutDetails(saved: object(#"{"start":"2026-12-01T16:00:00Z","end":"2026-12-01T16:00:20Z"}"#)), now: nil)!
        span.pauses = []
        let t0 = span.start
        // Readings at 0, 1, 2 s (100, 110, 120) then none until 15 s (90): 20 bins of 1 s.
        let points: [(Int64, Double)] = [(t0, 100), (t0 + 1000, 110), (t0 + 1500, 130), (t0 + 2000, 120), (t0 + 9000, 0), (t0 + 15_000, 90)]
        let bins = WorkoutCharts.resample(points, span: span, bins: 20)
        #expect(bins.map { ($0.0 - t0) / 100 } == [5, 15, 25, 35, 45, 55, 65, 155, 165, 175, 185, 195])
        #expect(bins.map(\.1) == [100, 120, 120, 120, 120, 120, 120, 90, 90, 90, 90, 90],
                "bin 1 averages 110 and 130; the 120 of 2 s is held in bins whose middle is at most 5 s later; 0 is no reading")
    }

    @Test func zoneBarsFromTheSummary() throws {
        let d = WorkoutDetails(saved: object(Fixtures.saved))
        let ascii = try #require(WorkoutCharts.zoneBars(d, ChartSettings(style: .ascii, width: 60)))
        #expect(ascii == [
            "  below Z1  <95      ##                        0:01:00    3%",
            "  Z1        95-114   ############              0:05:00   17%",
            "  Z2        114-133  ########################  0:10:00   33%",
            "  Z3        133-152  ######################    0:09:05   30%",
            "  Z4        152-171  ##########                0:04:00   13%",
            "  Z5        >=171    ##                        0:01:00    3%",
        ])
        let unicode = try #require(WorkoutCharts.zoneBars(d, ChartSettings(style: .unicode, width: 60)))
        #expect(unicode[2].contains(" " + String(repeating: "█", count: 24) + " ") && unicode.allSatisfy { $0.count == 60 })
        #expect(unicode[3].contains(" " + String(repeating: "█", count: 21) + "▊ "), "545/600 of 24 cells: 21 and 6/8")
        #expect(WorkoutCharts.zoneBars(d, ChartSettings(style: nil, width: 60)) == nil)
        #expect(WorkoutCharts.zoneBars(d, ChartSettings(style: .ascii, width: 30)) == nil, "no room for bars")
        // In `show` the bars take the table's place under its heading.
        let lines = WorkoutBrowse.showLines(object(#"{"workout":\#(Fixtures.saved)}"#), chart: ["<chart>"], zoneBars: ascii)
        #expect(Array(lines.suffix(7)) == ["heart-rate zones: percentMaxHR, profile scheme, maximum 190 bpm estimated (Tanaka 2001)"] + ascii)
    }

    @Test func aUnicodeChartMarksLapsAndPauses() throws {
        let span = try #require(HeartRateSpan(WorkoutDetails(saved: object(Fixtures.saved)), now: nil))
        let points = stride(from: span.start, to: span.end, by: 1000).map { t in (t, 120 + 30 * sin(Double(t - span.start) / 300_000)) }
        let lines = try WorkoutCharts.render(points, span, ChartSettings(style: .unicode, width: 60))
        #expect(lines[0] == "heart rate (bpm)  min 90  max 150")
        #expect(lines[1...10].allSatisfy { $0.hasPrefix("    │") || $0.dropFirst(3).hasPrefix(" ┤") })
        #expect(lines[1...10].joined().unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) }, "braille dots")
        let axis = Array(lines[11]), marks = Array(lines[12])
        #expect(axis.count == 60 && axis[5 + 55 * 600 / 1865] == "┴")
        #expect(marks[5] == "1" && marks[5 + 55 * 600 / 1865] == "2" && marks.contains("░"))
    }
}
