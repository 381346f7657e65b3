import Foundation
import Testing
import StrapControl
import StrapModel
import StrapWire
@testable import StrapDaemon

/// `plan.save/list/get/delete` over the socket (docs/protocol-workouts.md, "Plans"), and the
/// plan book on disk: kept across restarts, a damaged file moved aside, a newer one refused.
@Suite struct PlanProtocolTests {
    static let fixture: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/plans/threshold-3x8.json")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? "{}"
    }()

    @Test func aPlanIsSavedListedReadReplacedAndDeleted() throws {
        let h = try RouterHarness(workoutClock: { 1_767_225_600_000 })
        defer { h.close() }
        let c = try h.client()
        let saved = try c.call(#"{"id":1,"op":"plan.save","plan":\#(Self.fixture)}"#)
        let id = try #require(saved.result.string("uuid"))
        #expect(UUID(uuidString: id) != nil)
        let list = try c.call(#"{"id":2,"op":"plan.list"}"#).result.objects("plans")
        #expect(list.count == 1 && list[0].string("name") == "Threshold 3x8" && list[0].int("steps") == 9)
        #expect(list[0]["duration"] == nil || list[0]["duration"] == .null, "an open cool-down has no planned duration")
        let got = try c.call(#"{"id":3,"op":"plan.get","uuid":"\#(id)"}"#).result
        guard case .object(let plan)? = got["plan"] else { Issue.record("no plan in \(got)"); return }
        #expect(plan.string("activity") == "cycling" && plan.objects("blocks").count == 2)

        let short = #"{"name":"Sprints","activity":"cycling","blocks":[{"iterations":6,"steps":[{"purpose":"work","goal":{"time":15}},{"purpose":"recovery","goal":{"time":45}}]}]}"#
        #expect(try c.call(#"{"id":4,"op":"plan.save","uuid":"\#(id)","plan":\#(short)}"#).isOK)
        let replaced = try c.call(#"{"id":5,"op":"plan.list"}"#).result.objects("plans")
        #expect(replaced.count == 1 && replaced[0].string("name") == "Sprints" && replaced[0]["duration"] == .int(360))

        #expect(try c.call(#"{"id":6,"op":"plan.delete","uuid":"\#(id)"}"#).isOK)
        #expect(try c.call(#"{"id":7,"op":"plan.get","uuid":"\#(id)"}"#).errorCode == "notFound")
        #expect(try c.call(#"{"id":8,"op":"plan.delete","uuid":"\#(id)"}"#).errorCode == "notFound")
        #expect(try c.call(#"{"id":9,"op":"plan.list"}"#).result.objects("plans").isEmpty)
    }

    @Test func badPlansAreRefusedWithTheirReasonAndNothingIsSaved() throws {
        let h = try RouterHarness(workoutClock: { 1_767_225_600_000 })
        defer { h.close() }
        let c = try h.client()
        let cases: [(String, String, String)] = [
            (#""plan":[]"#, "badRequest", "must be an object"),
            (#""plan":{"name":"p","activity":"cycling"}"#, "badRequest", "missing \"blocks\""),
            (#""plan":{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","target":{"power":{"watts":[300,200]}}}]}]}"#,
             "badRequest", "low <= high"),
            (#""plan":{"name":"p","activity":"cycling","blocks":[{"iterations":0,"steps":[{"purpose":"work"}]}]}"#,
             "invalidOption", "blocks[0].iterations must be 1 to 100"),
            (#""plan":{"name":"p","activity":"cycling","blocks":[]},"uuid":"nope""#, "badRequest", "\"uuid\" must be a UUID"),
            (#""plan":{"name":"p","activity":"cycling","blocks":[]},"extra":1"#, "badRequest", "extra"),
        ]
        for (i, (params, code, why)) in cases.enumerated() {
            let r = try c.call(#"{"id":\#(i + 1),"op":"plan.save",\#(params)}"#)
            #expect(r.errorCode == code, "\(params): \(r)")
            #expect(r.errorMessage?.contains(why) == true, "\(params): \(r)")
        }
        #expect(try c.call(#"{"id":99,"op":"plan.list"}"#).result.objects("plans").isEmpty)
    }

    @Test func theBookIsKeptAcrossRestartsAndADamagedOneIsMovedAside() throws {
        let dir = temporaryDirectory()
        let plan = try JSONDecoder().decode(WorkoutPlan.self, from: Data(Self.fixture.utf8))
        let id: UUID
        do {
            let book = try PlanBook(directory: dir, load: DaemonFiles.read, persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
            id = try book.save(plan)
        }
        let again = try PlanBook(directory: dir, load: DaemonFiles.read, persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
        #expect(again.plan(id) == plan && again.loadProblem == nil)

        try Data("{\"version\":1,\"plans\":{\"x\":".utf8).write(to: URL(fileURLWithPath: dir + "/plans.json"))
        let damaged = try PlanBook(directory: dir, load: DaemonFiles.read, persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
        #expect(damaged.all.isEmpty && damaged.loadProblem?.contains("plans.json.corrupt") == true, "\(damaged.loadProblem ?? "")")
        #expect(FileManager.default.fileExists(atPath: dir + "/plans.json.corrupt"))

        let newer = #"{"version":2,"plans":{}}"#
        try Data(newer.utf8).write(to: URL(fileURLWithPath: dir + "/plans.json"))
        #expect(throws: StrapError.newerFormat(NewerFormat(file: dir + "/plans.json", kind: "plan book", version: 2, supported: 1))) {
            try PlanBook(directory: dir, load: DaemonFiles.read, persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
        }
        #expect(try String(contentsOfFile: dir + "/plans.json", encoding: .utf8) == newer)
    }

    @Test func strapctlSavesListsShowsAndDeletesAPlan() throws {
        let h = try RouterHarness(workoutClock: { 1_767_225_600_000 })
        defer { h.close() }
        func ctl(_ args: [String]) -> CommandOutput { Strapctl.run(["--socket", h.socketPath] + args) }
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/plans/threshold-3x8.json").path
        let saved = ctl(["plan", "save", file])
        #expect(saved.exitCode == 0, "\(saved.stderr)")
        let uuid = try #require(saved.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        let list = ctl(["plan", "list"])
        #expect(list.stdout.contains(uuid) && list.stdout.contains("9 steps") && list.stdout.contains("Threshold 3x8"), "\(list.stdout)")
        let show = ctl(["plan", "show", uuid])
        let lines = show.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Threshold 3x8 (cycling, open-ended)")
        #expect(lines.contains("1. warmup  10:00  power 50-65 % FTP"), "\(lines)")
        #expect(lines.contains("2. work (block 1, 1/3)  8:00  power 95-105 % FTP  \"Threshold\""), "\(lines)")
        #expect(lines.contains("3. recovery (block 1, 1/3)  4:00  heart rate zone 2"), "\(lines)")
        #expect(lines.contains("9. cooldown  until lap  cadence 80-95 rpm"), "\(lines)")

        let bad = temporaryDirectory() + "/bad.json"
        try Data(#"{"name":"p","activity":"cycling","blocks":[{"iterations":0,"steps":[{"purpose":"work"}]}]}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let refused = ctl(["plan", "save", bad])
        #expect(refused.exitCode != 0 && refused.stderr.contains("blocks[0].iterations must be 1 to 100"), "\(refused.stderr)")
        #expect(ctl(["plan", "save", "/nonexistent/plan.json"]).stderr.contains("cannot read /nonexistent/plan.json"))

        // As a FIT workout file and back (the file itself is checked by Garmin's SDK in
        // FITWorkoutFileTests): imported, it is the same plan under a new UUID.
        let fit = temporaryDirectory() + "/plan.fit"
        let exported = ctl(["plan", "export", uuid, fit])
        #expect(exported.exitCode == 0 && exported.stdout.contains("9 steps"), "\(exported.stderr)")
        let imported = ctl(["plan", "import", fit])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let second = try #require(imported.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(second != uuid)
        #expect(ctl(["plan", "show", second]).stdout == show.stdout)
        #expect(ctl(["plan", "import", bad]).stderr.contains("not a FIT file"))
        #expect(ctl(["plan", "delete", second]).exitCode == 0)

        #expect(ctl(["plan", "delete", uuid]).exitCode == 0)
        #expect(ctl(["plan", "list"]).stdout.contains("no saved plans"))
    }
}
