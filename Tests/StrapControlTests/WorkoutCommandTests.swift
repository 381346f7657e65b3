import Foundation
import Testing
import StrapWire
@testable import StrapControl

/// `strapctl workout` and `strapctl profile` without a daemon: argument handling, the profile
/// patch, and how workouts, sessions and their live events read as text.
@Suite struct WorkoutCommandTests {
    let missing = "/tmp/strapctl-test-\(UUID().uuidString.prefix(8))/none.sock"

    func object(_ json: String) -> JSONObject {
        guard case .object(let o) = try! JSONParser.parse(Array(json.utf8)) else { fatalError("not an object: \(json)") }
        return o
    }

    @Test(arguments: [["workout"], ["workout", "frobnicate"], ["workout", "send"], ["workout", "send", "not json"],
                      ["workout", "send", "A", "{}", "extra"], ["workout", "lap", "--meta", "novalue"], ["workout", "marker", "--meta", "=v"],
                      ["workout", "start", "ABCD", "--activity", "cycling"], ["workout", "start", "A", "B"], ["workout", "show"],
                      ["workout", "pause", "A", "B"], ["workout", "pause", "xyz!"], ["workout", "list", "--limit", "0"],
                      ["workout", "list", "--from", "yesterday"], ["workout", "follow", "--color"], ["workout", "start", "--prepare=yes"]])
    func workoutUsageErrorsAreExitTwoWithTheWorkoutUsage(_ args: [String]) {
        let out = Strapctl.run(["--socket", missing] + args)
        #expect(out.exitCode == ExitCode.usage, "\(args)")
        #expect(out.stderr.contains("usage: strapctl [--socket PATH] [--json] workout COMMAND"), "\(args)")
    }

    @Test(arguments: [["profile", "set"], ["profile", "set", "weight"], ["profile", "set", "weight=abc"], ["profile", "set", "=3"],
                      ["profile", "set", "weight=1", "weight=2"], ["profile", "set", "device.AA:BB.colour=red"],
                      ["profile", "set", "device.AA:BB.cadenceIsStepsPerMinute=yes"], ["profile", "set", "device.AA:BB=2"],
                      ["profile", "set", "devices=x"], ["profile", "set", "devices=", "device.AA.wheelCircumference=2"],
                      ["profile", "set", "zones=percentMaxHR:50,sixty"], ["profile", "get"], ["profile", "get", "a", "b"], ["profile", "frob"]])
    func profileUsageErrorsAreExitTwoWithTheProfileUsage(_ args: [String]) {
        let out = Strapctl.run(["--socket", missing] + args)
        #expect(out.exitCode == ExitCode.usage, "\(args)")
        #expect(out.stderr.contains("usage: strapctl [--socket PATH] [--json] profile"), "\(args)")
    }

    @Test func wellFormedCommandsReachForTheDaemon() {
        for args in [["workout", "pause"], ["workout", "send", #"{"a":1}"#], ["workout", "start", "--activity", "cycling"],
                     ["workout", "list"], ["profile"], ["profile", "set", "weight=70"], ["profile", "get", "weight"]] {
            let out = Strapctl.run(["--socket", missing] + args)
            #expect(out.exitCode == ExitCode.unreachable, "\(args)")
        }
        #expect(Strapctl.run(["workout", "help"]).stdout.hasPrefix("usage: strapctl [--socket PATH] [--json] workout"))
        #expect(Strapctl.run(["help"]).stdout.contains("profile get [--athlete NAME] FIELD            one field (exit 6 when unset)"))
    }

    @Test func sessionIDsAndMetadata() throws {
        #expect(WorkoutCommands.isUUID("281019D0-FFC9-4A5E-8349-C0AF310A8F88"))
        #expect(WorkoutCommands.isUUID("281019d0-ffc9-4a5e-8349-c0af310a8f88"))
        #expect(!WorkoutCommands.isUUID("281019D0"))
        #expect(!WorkoutCommands.isUUID("281019D0-FFC9-4A5E-8349-C0AF310A8F8G"))
        let a = try Arguments(["--meta", "note=a=b", "--meta", "split="], options: ["meta"], flags: [])
        #expect(try WorkoutCommands.metadata(a) == ["note": .string("a=b"), "split": .string("")])
    }

    @Test func profilePatchFromAssignments() throws {
        let patch = try ProfilePatch(["weight=72.5", "dateOfBirth=1990-04-01", "biologicalSex=female", "vo2Max=", "zones=percentLTHR:50,68,83,94,105,120"])
        #expect(!patch.needsCurrentDevices)
        #expect(JSONWriter.string(.object(patch.json(currentDevices: JSONObject()))) ==
                #"{"weight":72.5,"dateOfBirth":"1990-04-01","biologicalSex":"female","vo2Max":null,"heartRateZones":{"method":"percentLTHR","bounds":[50,68,83,94,105,120]}}"#)
        #expect(JSONWriter.string(.object(try ProfilePatch(["heartRateZones="]).json(currentDevices: JSONObject()))) ==
                #"{"heartRateZones":null}"#)
        #expect(JSONWriter.string(.object(try ProfilePatch(["zones=heartRateReserve"]).json(currentDevices: JSONObject()))) ==
                #"{"heartRateZones":{"method":"heartRateReserve"}}"#)
        // An unknown name goes to the daemon, which refuses it with the list of fields.
        #expect(try ProfilePatch(["wieght=70"]).json(currentDevices: JSONObject())["wieght"] == .string("70"))
        #expect(JSONWriter.string(.object(try ProfilePatch(["devices="]).json(currentDevices: JSONObject()))) == #"{"devices":null}"#)
    }

    @Test func workoutShowHasThePowerFiguresAndLapPowerColumns() {
        let summary: [String: Double] = ["powerAverage": 201.6, "powerMaximum": 540, "powerNormalized": 231.2, "powerWork": 725.8,
                                         "functionalThresholdPower": 250, "powerIntensityFactor": 0.9248, "powerTrainingStressScore": 85.5,
                                         "powerBest5s": 540, "powerBest60s": 402.4,
                                         "timeInPowerZone1": 60, "timeInPowerZone2": 600, "timeInPowerZone3": 1_200, "timeInPowerZone4": 900,
                                         "timeInPowerZone5": 600, "timeInPowerZone6": 120, "timeInPowerZone7": 20]
        let rows = WorkoutReport.power(summary).map { $0.0.padding(12) + $0.1 }
        #expect(rows == ["power       avg 202 W, max 540 W, NP 231 W, work 726 kJ",
                         "            FTP 250 W: IF 0.92, TSS 86",
                         "            P1 1:00 · P2 10:00 · P3 20:00 · P4 15:00 · P5 10:00 · P6 2:00 · P7 0:20",
                         "best power  5 s 540 W · 1 min 402 W"], "\(rows)")
        #expect(WorkoutReport.power(["powerAverage": 150]).map(\.1) == ["avg 150 W", "IF, TSS, power zones: no functionalThresholdPower in the profile when it started"])
        #expect(WorkoutReport.power(["heartRateAverage": 150]).isEmpty)
        var d = WorkoutDetails(saved: JSONObject())
        d.laps = [.init(index: 1, start: nil, end: nil, figures: ["powerAverage": 199.5, "powerNormalized": 210]),
                  .init(index: 2, start: nil, end: nil, figures: [:])]
        let table = WorkoutReport.laps(d)
        let cells = table.map { $0.split(separator: " ").suffix(2).joined(separator: " ") }
        #expect(table[0].contains("AVG W") && cells == ["W NP", "200 210", "- -"], "\(table)")
    }

    @Test func ftpIsSetAsTheFunctionalThresholdPowerAndShownWithItsPowerZones() throws {
        #expect(JSONWriter.string(.object(try ProfilePatch(["ftp=250"]).json(currentDevices: JSONObject()))) ==
                #"{"functionalThresholdPower":250}"#)
        #expect(throws: UsageError.self) { try ProfilePatch(["ftp=fast"]) }
        let shown = ProfileCommands.showLines(object(#"{"athlete":"default","profile":{"functionalThresholdPower":250}}"#))
        #expect(shown.contains { $0.contains("functionalThresholdPower") && $0.hasSuffix("250 W (power zones 1–6 up to 138, 188, 225, 263, 300, 375 W)") },
                "\(shown)")
    }

    /// `profile.set` replaces a sensor's settings whole, so the patch carries the merge.
    @Test func deviceSettingsMergeIntoWhatIsSet() throws {
        let current = object(#"{"AA:01":{"wheelCircumference":2.1,"cadenceIsStepsPerMinute":true},"AA:02":{"wheelCircumference":2.0}}"#)
        let patch = try ProfilePatch(["device.AA:01.wheelCircumference=2.105", "device.AA:02.wheelCircumference=", "device.AA:03.cadenceIsStepsPerMinute=false"])
        #expect(patch.needsCurrentDevices)
        #expect(JSONWriter.string(.object(patch.json(currentDevices: current))) ==
                #"{"devices":{"AA:01":{"wheelCircumference":2.105,"cadenceIsStepsPerMinute":true},"AA:02":null,"AA:03":{"cadenceIsStepsPerMinute":false}}}"#)
        let forget = try ProfilePatch(["device.AA:01=", "weight="])
        #expect(JSONWriter.string(.object(forget.json(currentDevices: current))) == #"{"weight":null,"devices":{"AA:01":null}}"#)
    }

    static let saved = #"""
        {"uuid":"6F1C2D3E-0000-4000-8000-00000000002A","anchor":42,"type":"workout","activityType":"cycling","locationType":"indoor",
         "start":"2026-12-01T16:00:00.000Z","end":"2026-12-01T16:31:05.000Z","deviceIDs":["AA:01","AA:02"],
         "events":[{"kind":"lap","time":"2026-12-01T16:10:00.000Z","metadata":{"split":"1"}},{"kind":"pause","time":"2026-12-01T16:20:00.000Z","metadata":{}},
                   {"kind":"resume","time":"2026-12-01T16:21:00.000Z","metadata":{}}],
         "laps":[{"start":"2026-12-01T16:00:00.000Z","end":"2026-12-01T16:10:00.000Z","summary":{"elapsedTime":600,"heartRateAverage":131.6,
                  "heartRateMaximum":150,"activeEnergy":101.25,"distance":5012,"speedAverage":8.35}},
                 {"start":"2026-12-01T16:10:00.000Z","end":"2026-12-01T16:31:05.000Z","summary":{"elapsedTime":1205,"heartRateAverage":142,
                  "heartRateMaximum":171,"activeEnergy":240,"distance":10100.4,"speedAverage":8.38}}],
         "summary":{"elapsedTime":1805,"heartRateAverage":138.5,"heartRateMinimum":92,"heartRateMaximum":171,"activeEnergy":341.25,
                    "distance":15112.4,"speedAverage":8.37,"speedMaximum":12.5,"cadenceAverage":88.4,"cadenceMaximum":101,
                    "timeBelowZone1":60,"timeInZone1":300,"timeInZone2":600,"timeInZone3":545,"timeInZone4":240,"timeInZone5":60,
                    "heartRateZoneBound0":95,"heartRateZoneBound1":114,"heartRateZoneBound2":133,"heartRateZoneBound3":152,
                    "heartRateZoneBound4":171,"heartRateZoneBound5":190,"maximumHeartRate":190},
         "metadata":{"route":"trainer"},"sessionID":"281019D0-FFC9-4A5E-8349-C0AF310A8F88","athlete":"ana",
         "info":{"activeEnergySource":"keytel","heartRateZoneMethod":"percentMaxHR","heartRateZoneScheme":"profile","maximumHeartRateSource":"tanaka2001"}}
        """#

    @Test func aSavedWorkoutAsEndPrintsIt() {
        var d = WorkoutDetails(saved: object(Self.saved))
        d.state = "ended"
        #expect(WorkoutReport.endLines(d) == [
            "workout 6F1C2D3E-0000-4000-8000-00000000002A (session 281019D0-FFC9-4A5E-8349-C0AF310A8F88)",
            "  activity    cycling, indoor, athlete ana",
            "  time        2026-12-01 16:00:00 UTC → 16:31:05",
            "  duration    30:05 (excluding pauses)",
            "  distance    15.11 km",
            "  heart rate  avg 139 bpm, max 171 bpm, min 92 bpm",
            "  energy      341.3 kcal (Keytel 2005 estimate from heart rate)",
            "  speed       avg 30.1 km/h, max 45.0 km/h",
            "  cadence     avg 88 rpm, max 101 rpm",
            "  zones       below 1:00 · Z1 5:00 · Z2 10:00 · Z3 9:05 · Z4 4:00 · Z5 1:00  (percentMaxHR, profile scheme, maximum 190 bpm estimated (Tanaka 2001))",
            "  devices     AA:01, AA:02",
            "  metadata    route=trainer",
            "",
            "LAP  START     TIME   DISTANCE  AVG HR  MAX HR  ENERGY      AVG SPEED",
            "1    16:00:00  10:00  5.01 km   132     150     101.3 kcal  30.1 km/h",
            "2    16:10:00  20:05  10.10 km  142     171     240.0 kcal  30.2 km/h",
        ])
    }

    @Test func showPutsAChartBetweenTheSummaryAndTheTables() {
        let lines = WorkoutBrowse.showLines(object(#"{"workout":\#(Self.saved)}"#), chart: ["<chart>"])
        let chart = lines.firstIndex(of: "<chart>"), laps = lines.firstIndex { $0.hasPrefix("LAP ") }
        #expect(chart != nil && laps != nil && chart! < laps! && lines[chart! - 1] == "")
        #expect(!lines.contains { $0.hasPrefix("  zones ") }, "show has the zone table instead")
        let tail = Array(lines.drop { $0 != "events" })
        #expect(tail == [
            "events",
            "  16:10:00  lap     split=1",
            "  16:20:00  pause",
            "  16:21:00  resume",
            "",
            "heart-rate zones: percentMaxHR, profile scheme, maximum 190 bpm estimated (Tanaka 2001)",
            "  ZONE     BPM      TIME   SHARE",
            "  below 1  < 95     1:00   3%",
            "  1        95–113   5:00   17%",
            "  2        114–132  10:00  33%",
            "  3        133–151  9:05   30%",
            "  4        152–170  4:00   13%",
            "  5        ≥ 171    1:00   3%",
        ])
    }

    static let session = #"""
        {"session":{"session":"281019D0-FFC9-4A5E-8349-C0AF310A8F88","configuration":{"activityType":"running","athlete":"bob","deviceIDs":[],
                    "locationType":"outdoor","metadata":{}},"created":"2026-12-01T16:00:00.000Z","state":"paused","deviceIDs":["AA:03"],
                    "start":"2026-12-01T16:00:00.000Z","events":[{"kind":"pause","time":"2026-12-01T16:01:15.400Z","metadata":{}}]},
         "statistics":{"session":"281019D0-FFC9-4A5E-8349-C0AF310A8F88","state":"paused","time":"2026-12-01T16:01:20.000Z",
                       "start":"2026-12-01T16:00:00.000Z","elapsedTime":75.4,"heartRateSamples":70,"heartRateMostRecent":151,
                       "heartRateAverage":140.2,"heartRateMinimum":120,"heartRateMaximum":155,
                       "activeEnergyReason":"no energy expended from the heart-rate sensor, and the Keytel estimate needs weight in the profile",
                       "cadenceMostRecent":170,"cadenceAverage":168,"cadenceMaximum":171,"timeInZones":[0,10,20,30,10.4,5],
                       "heartRateZones":{"scheme":{"method":"percentMaxHR","bounds":[50,60,70,80,90,100]},"isDefaultScheme":true,
                                         "bpm":[95,114,133,152,171,190],"maximumHeartRate":{"value":190,"estimated":false}},
                       "laps":[{"index":1,"start":"2026-12-01T16:00:00.000Z","elapsedTime":75.4,"heartRateAverage":140.2,"cadenceAverage":168}]}}
        """#

    @Test func aSessionReadsFromItsStatistics() {
        let d = WorkoutDetails(sessionInfo: object(Self.session))
        #expect(d.state == "paused" && d.workoutUUID == nil && d.deviceIDs == ["AA:03"])
        #expect(d.timeInZones == [0, 10, 20, 30, 10.4, 5])
        #expect(d.zone(of: 151) == 3 && d.zone(of: 94) == 0 && d.zone(of: 250) == 5 && d.zone(of: 95) == 1)
        let lines = WorkoutReport.lines(d)
        #expect(lines[0] == "session 281019D0-FFC9-4A5E-8349-C0AF310A8F88 (paused)")
        #expect(lines.contains("  time        2026-12-01 16:00:00 UTC → now"))
        #expect(lines.contains("  duration    1:15 (excluding pauses)"))
        #expect(lines.contains("  energy      unknown: no energy expended from the heart-rate sensor, and the Keytel estimate needs weight in the profile"))
        #expect(lines.contains("  cadence     avg 168 /min, max 171 /min"))
        #expect(lines.contains("1*   16:00:00  1:15  -         140     -       -       168 /min"))
        #expect(lines.contains("heart-rate zones: percentMaxHR, default scheme, maximum 190 bpm"))
        let noZones = WorkoutDetails(statistics: object(#"{"elapsedTime":3,"heartRateZonesReason":"lactate-threshold zones need lactateThresholdHeartRate in the profile"}"#))
        #expect(WorkoutReport.zones(noZones) == ["heart-rate zones unknown: lactate-threshold zones need lactateThresholdHeartRate in the profile"])
        #expect(WorkoutReport.inlineZones(noZones) == "unknown: lactate-threshold zones need lactateThresholdHeartRate in the profile")
    }

    @Test func followLinesAndTheStatusBlock() {
        var view = WorkoutFollowView(object(Self.session))
        #expect(view.headline == "following 281019D0-FFC9-4A5E-8349-C0AF310A8F88: running, outdoor, athlete bob, paused")
        #expect(view.apply("state", object(#"{"from":"paused","to":"running","time":"2026-12-01T16:01:30.000Z"}"#)) == ["16:01:30 paused → running"])
        #expect(view.apply("event", object(#"{"kind":"marker","time":"2026-12-01T16:01:31.000Z","metadata":{"note":"sprint"}}"#)) == ["16:01:31 marker note=sprint"])
        #expect(view.apply("event", object(#"{"kind":"lap","time":"2026-12-01T16:01:32.000Z","metadata":{}}"#)) == ["16:01:32 lap (lap 2 begins)"])
        #expect(view.apply("message", object(#"{"payload":{"pace":"up"},"time":"2026-12-01T16:01:33.000Z"}"#)) == [#"16:01:33 message {"pace":"up"}"#])
        let stats = object(Self.session).object("statistics")!
        var running = stats
        running["state"] = .string("running")
        #expect(view.apply("statistics", running) == ["1:15  running  HR 151 (avg 140, max 155) bpm  zone 3  170 /min  lap 1"])
        #expect(view.render() == [
            "running, outdoor · athlete bob · session 281019D0 · running",
            "  elapsed 1:15  HR 151 bpm  avg 140  max 155  zone 3",
            "  energy unknown  cadence 170 /min",
            "  lap 1: 1:15, avg HR 140 bpm",
        ])
        #expect(view.apply("dropped", object(#"{"count":4}"#)) == ["(4 statistics updates missed: output too slow)"])
        #expect(view.apply("saved", object(#"{"workout":\#(Self.saved)}"#)) == ["saved as workout 6F1C2D3E-0000-4000-8000-00000000002A"])
        #expect(view.saved?.figures["elapsedTime"] == 1805)
    }

    /// Protocol 1.1's `failed` (docs/protocol-workouts.md#failures): printed like any other
    /// event, and the session goes on in the state it names.
    @Test func followPrintsAFailedCommand() {
        var view = WorkoutFollowView(object(Self.session))
        let failed = object(#"{"code":"unavailable","message":"session journal: fdatasync x.journal: Input/output error","#
                            + #""operation":"pause","session":"281019D0-FFC9-4A5E-8349-C0AF310A8F88","state":"running","#
                            + #""time":"2026-12-01T16:01:34.000Z"}"#)
        #expect(view.apply("failed", failed) == [
            "16:01:34 pause failed: unavailable: session journal: fdatasync x.journal: Input/output error (the session goes on, running)",
        ])
        #expect(view.render().first == "running, outdoor · athlete bob · session 281019D0 · running")
        #expect(view.saved == nil)
    }

    @Test func followRedrawPrintsEventLinesAboveTheBlock() {
        let (sink, collected) = OutputSink.collecting(isTerminal: true)
        var drawn = WorkoutFollow.redraw(above: [], block: ["a", "b", "c"], previous: 0, sink)
        drawn = WorkoutFollow.redraw(above: ["event"], block: ["x"], previous: drawn, sink)
        #expect(drawn == 2)
        #expect(collected().0 == "\u{1B}[2Ka\n\u{1B}[2Kb\n\u{1B}[2Kc\n" + "\u{1B}[3F\u{1B}[2Kevent\n\u{1B}[2Kx\n\u{1B}[2K\n")
    }

    @Test func liveShowsTheSessionUnderItsDevice() {
        var view = LiveView()
        #expect(view.followWorkout(object(Self.session)) == "workout 281019D0 running paused on AA:03")
        let sample = object(#"{"type":"heartRate","value":151,"unit":"count/min","start":"2026-12-01T16:01:20.000Z","device":{"id":"AA:03","address":"AA:03","name":"Pod"}}"#)
        _ = view.apply("sample", sample)
        _ = view.apply("sample", object(#"{"type":"heartRate","value":90,"unit":"count/min","start":"2026-12-01T16:01:20.000Z","device":{"id":"AA:04","address":"AA:04","name":"Other"}}"#))
        let frame = view.render()
        #expect(frame[0] == "Pod [AA:03]")
        #expect(frame[1] == "  workout 281019D0 running paused  1:15  zone 3  avg HR 140 bpm")
        #expect(frame.filter { $0.contains("workout") }.count == 1, "only the session's device carries it")
        let line = view.applyWorkout("281019D0-FFC9-4A5E-8349-C0AF310A8F88", "state", object(#"{"from":"paused","to":"running","time":"2026-12-01T16:01:30.000Z"}"#))
        #expect(line == "workout 281019D0 16:01:30 paused → running")
        #expect(view.render()[1].hasPrefix("  workout 281019D0 running running  1:15"))
        #expect(view.applyWorkout("281019D0-FFC9-4A5E-8349-C0AF310A8F88", "finished", JSONObject()) == "workout 281019D0 finished")
        #expect(!view.render().contains { $0.contains("workout") })
    }

    @Test func figuresAsText() {
        #expect(TextFormat.duration(0) == "0:00" && TextFormat.duration(59.6) == "1:00" && TextFormat.duration(3725) == "1:02:05")
        #expect(TextFormat.distance(999.4) == "999 m" && TextFormat.distance(1000) == "1.00 km" && TextFormat.distance(12346) == "12.35 km")
        #expect(TextFormat.fixed(0.05, 1) == "0.1" && TextFormat.fixed(-1.25, 1) == "-1.3" && TextFormat.fixed(7, 0) == "7")
        #expect(TextFormat.speed(10) == "36.0 km/h" && TextFormat.kcal(0) == "0.0 kcal")
        #expect(TextFormat.clock("2026-12-01T16:00:05.250+01:00") == "15:00:05" && TextFormat.clock(nil) == "-")
    }
}
