import Foundation
import StrapControl
import StrapModel
import StrapWire
import Synchronization
import Testing
@testable import StrapDaemon

/// `strapctl workout …` and `strapctl profile …` against a real front end with workouts on a
/// test clock: the simulator's packets go through the pipeline as the clock moves
/// (WorkoutProtocolTests' clock and feed), strapctl runs in process.
@Suite struct StrapctlWorkoutTests {
    typealias Clock = WorkoutProtocolTests.TestClock
    typealias Feed = WorkoutProtocolTests.Feed

    func strapctl(_ h: RouterHarness, _ args: String...) -> CommandOutput {
        Strapctl.run(["--socket", h.socketPath] + args)
    }

    /// Runs a streaming strapctl command on a thread; `wait()` returns its exit code.
    final class Running: Sendable {
        let output = Collector()
        private let code = Mutex<Int32?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ h: RouterHarness, _ args: [String], interrupts: Interrupts = .none) {
            let sink = OutputSink(stdout: { [output] in output.append($0) }, stderr: { [output] in output.append($0) })
            let socket = h.socketPath
            Thread { [self] in
                let c = Strapctl.run(["--socket", socket] + args, environment: [:], sink: sink, interrupts: interrupts)
                code.withLock { $0 = c }
                done.signal()
            }.start()
        }

        func wait() -> Int32? {
            done.wait()
            return code.withLock { $0 }
        }
    }

    func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// The one open session's id, read back from the daemon (not from strapctl's output).
    func openSessions(_ h: RouterHarness) throws -> [String] {
        let list = try h.client().call(#"{"id":1,"op":"workout.list"}"#)
        return list.result.objects("sessions").compactMap { info -> String? in
            guard case .object(let s)? = info["session"], s.string("state") != "ended" else { return nil }
            return s.string("session")
        }
    }

    @Test func startLapPauseResumeEndPrintTheSessionAndTheSavedWorkout() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let (hrm, csc) = (h.identities[0].address, h.identities[1].address)
        let feed = Feed(seconds: 40)
        #expect(strapctl(h, "profile", "set", "weight=72.5", "dateOfBirth=1990-04-01", "biologicalSex=female").exitCode == 0)

        let start = strapctl(h, "workout", "start", "--activity", "cycling", "--location", "indoor", "--device", hrm, "--device", csc,
                             "--meta", "route=trainer")
        let id = try #require(try openSessions(h).first)
        #expect(start.exitCode == 0 && start.stderr.isEmpty)
        #expect(lines(start.stdout) == [id, "running: cycling, indoor, athlete default, devices \(hrm), \(csc)", ""])

        try feed.submit(until: 10, to: h); clock.set(seconds: 10)
        let lap = strapctl(h, "workout", "lap", "--meta", "split=1")
        #expect(lap.exitCode == 0)
        #expect(lap.stdout.hasPrefix("lap 1: 0:10, ") && lap.stdout.hasSuffix(" (split=1); lap 2 begins at 0:10\n"), "\(lap.stdout)")
        try feed.submit(until: 20, to: h); clock.set(seconds: 20)
        #expect(strapctl(h, "workout", "pause").stdout == "paused \(id), elapsed 0:20\n")
        try feed.submit(until: 25, to: h); clock.set(seconds: 25)
        #expect(strapctl(h, "workout", "resume", String(id.prefix(6))).stdout == "running \(id), elapsed 0:20\n")
        try feed.submit(until: 30, to: h); clock.set(seconds: 30)

        let end = strapctl(h, "workout", "end")
        #expect(end.exitCode == 0, "\(end.stderr)")
        let out = lines(end.stdout)
        let saved = try h.client().call(#"{"id":2,"op":"samples.anchored","types":["workout"]}"#).result.objects("added")
        let uuid = try #require(saved.first?.string("uuid"))
        #expect(out.first == "workout \(uuid) (session \(id))")
        #expect(out.contains("  activity    cycling, indoor, athlete default"))
        #expect(out.contains("  duration    0:25 (excluding pauses)"))
        // The average over exactly the counted heart rates: (0, 20] and (25, 30] s.
        let counted = try h.store.samples(matching: .types([.heartRate])).filter { s in
            let t = s.start - WorkoutProtocolTests.origin
            return s.value > 0 && ((t > 0 && t <= 20_000) || (t > 25_000 && t <= 30_000))
        }
        let average = Int((counted.map(\.value).reduce(0, +) / Double(counted.count)).rounded())
        let maximum = Int(counted.map(\.value).max() ?? 0)
        #expect(out.contains { $0.hasPrefix("  heart rate  avg \(average) bpm, max \(maximum) bpm, min ") }, "\(end.stdout)")
        #expect(out.contains { $0.hasPrefix("  distance    ") })
        // The simulated strap sends Energy Expended, so the sensor is the source.
        #expect(out.contains { $0.hasPrefix("  energy      ") && $0.hasSuffix(" kcal (from the strap's Energy Expended)") }, "\(end.stdout)")
        // The profile sets no zones: the default scheme with the estimated maximum.
        let zones = try #require(out.first { $0.hasPrefix("  zones       below ") })
        #expect(zones.contains(" · Z5 ") && zones.hasSuffix("(percentMaxHR, default scheme, maximum \(estimatedMaximum()) bpm estimated (Tanaka 2001))"))
        #expect(out.contains("  metadata    route=trainer"))
        let table = out.drop { !$0.hasPrefix("LAP ") }
        #expect(table.first?.hasPrefix("LAP  START     TIME  DISTANCE  AVG HR  MAX HR  ENERGY") == true)
        #expect(table.dropFirst().filter { !$0.isEmpty }.map { String($0.prefix(2)) } == ["1 ", "2 "])
        #expect(table.dropFirst(2).first?.contains("  0:15  ") == true, "lap 2 ran 0:10 → 0:30 less the 5 s pause")
        #expect(try openSessions(h).isEmpty)
    }

    /// Tanaka 2001 for 1990-04-01 on the session's start day (the test clock's), rounded as shown.
    func estimatedMaximum() -> Int {
        let age = CalendarDate(parsing: "1990-04-01")!.age(on: CalendarDate(utcMillis: WorkoutProtocolTests.origin))
        return Int((208 - 0.7 * Double(age)).rounded())
    }

    @Test func listAndShowASessionAndTheSavedWorkout() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let feed = Feed(seconds: 30)
        #expect(strapctl(h, "workout", "start", "--activity", "cycling", "--athlete", "ana", "--device", h.identities[0].address).exitCode == 0)
        let id = try #require(try openSessions(h).first)
        try feed.submit(until: 6, to: h); clock.set(seconds: 6)
        #expect(strapctl(h, "workout", "marker", "--meta", "note=sprint").exitCode == 0)
        try feed.submit(until: 12, to: h); clock.set(seconds: 12)

        let list = lines(strapctl(h, "workout", "list").stdout)
        #expect(list[0] == "open sessions")
        #expect(list[1].hasPrefix("  SESSION ") && list[1].contains("ATHLETE  ACTIVITY  STATE    ELAPSED  DEVICES"))
        #expect(list[2].hasPrefix("  \(id)  ana      cycling   running  0:12     \(h.identities[0].address)"), "\(list)")
        #expect(list.contains("saved workouts: none"))

        let open = lines(strapctl(h, "workout", "show", String(id.prefix(8))).stdout)
        #expect(open[0] == "session \(id) (running)")
        #expect(open.contains { $0.hasPrefix("  time        ") && $0.hasSuffix(" UTC → now") })
        #expect(open.contains { $0.hasPrefix("1*  ") }, "the lap in progress is marked")
        #expect(open.contains { $0.hasSuffix("  marker  note=sprint") })
        // No profile for ana: energy and zones are unknown, with the daemon's reasons.
        #expect(open.contains { $0.hasPrefix("  energy      unknown: ") && $0.contains("Keytel estimate needs") } ||
                open.contains { $0.hasPrefix("  energy      ") && $0.hasSuffix("(from the strap's Energy Expended)") })
        #expect(open.contains("heart-rate zones unknown: percentMaxHR zones need maximumHeartRate or dateOfBirth (to estimate it) in the profile"))

        #expect(strapctl(h, "workout", "end", id).exitCode == 0)
        let saved = try h.client().call(#"{"id":2,"op":"samples.anchored","types":["workout"]}"#).result.objects("added")
        let uuid = try #require(saved.first?.string("uuid"))
        let afterwards = lines(strapctl(h, "workout", "list").stdout)
        #expect(afterwards.first == "open sessions: none")
        let row = try #require(afterwards.first { $0.hasPrefix("  \(uuid)  ") })
        #expect(row.contains("  0:12      cycling   ana  "), "\(row)")

        let show = strapctl(h, "workout", "show", uuid)
        let text = lines(show.stdout)
        #expect(show.exitCode == 0 && text[0] == "workout \(uuid) (session \(id))")
        #expect(text.contains("events"))
        #expect(text.contains { $0.hasSuffix("  marker  note=sprint") })
        #expect(text.contains { $0.hasPrefix("1   ") }, "one lap, no longer in progress")
        // By the session's id too: the same workout.
        #expect(lines(strapctl(h, "workout", "show", id).stdout)[0] == text[0])
        let json = strapctl(h, "--json", "workout", "show", uuid)
        #expect(json.stdout.hasPrefix(#"{"id":1,"ok":true,"result":{"workout":{"#) && json.stdout.contains(uuid))
        let unknown = strapctl(h, "workout", "show", "00000000")
        #expect(unknown.exitCode == ExitCode.daemonError)
        #expect(unknown.stderr == "strapctl: no workout session or saved workout whose id begins with 00000000 (notFound)\n")
    }

    @Test func startAndShowSayWhichDevicesStrapdHasNeverSeen() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let typo = "AA:BB:CC:DD:EE:01"
        let started = strapctl(h, "workout", "start", "--activity", "running", "--device", h.identities[0].address, "--device", typo)
        #expect(started.exitCode == 0)
        let note = "never seen by strapd: \(typo) (nothing counts from it unless it connects)"
        #expect(lines(started.stdout).contains(note), "\(started.stdout)")
        let id = try #require(try openSessions(h).first)
        #expect(lines(strapctl(h, "workout", "show", id).stdout).contains("              " + note))
        #expect(strapctl(h, "workout", "end", id).exitCode == 0)
        // The saved workout still says so while the device stays unseen.
        #expect(lines(strapctl(h, "workout", "show", id).stdout).contains("              " + note))
    }

    @Test func theOneOpenSessionIsTheDefaultAndSeveralAreAClearError() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let none = strapctl(h, "workout", "pause")
        #expect(none.exitCode == ExitCode.usage)
        #expect(none.stderr == "strapctl: no workout session is open (start one with: strapctl workout start)\n")

        #expect(strapctl(h, "workout", "start", "--activity", "running", "--device", h.identities[0].address).exitCode == 0)
        let first = try #require(try openSessions(h).first)
        let marker = strapctl(h, "workout", "marker", "--meta", "note=x")
        #expect(marker.stdout == "marker at 0:00 in \(first) (note=x)\n")

        #expect(strapctl(h, "workout", "start", "--activity", "cycling", "--athlete", "bob", "--device", h.identities[1].address).exitCode == 0)
        let second = try #require(try openSessions(h).first { $0 != first })
        let several = strapctl(h, "workout", "pause")
        #expect(several.exitCode == ExitCode.usage)
        #expect(several.stderr.hasPrefix("strapctl: 2 workout sessions are open; name one (its id or first characters):\n"))
        #expect(several.stderr.contains("  \(first)  default  running  running"))
        #expect(several.stderr.contains("  \(second)  bob      cycling  running"))
        #expect(!several.stderr.contains("usage:"))
        // Nothing was paused.
        #expect(strapctl(h, "workout", "pause", second).stdout.hasPrefix("paused \(second)"))
        #expect(strapctl(h, "workout", "pause", first).stdout.hasPrefix("paused \(first)"))

        // The daemon's refusals come through with its message.
        let again = strapctl(h, "workout", "pause", first)
        #expect(again.exitCode == ExitCode.daemonError && again.stderr.contains("is paused: pause is allowed only when running (invalidTransition)"))
        let busy = strapctl(h, "workout", "start", "--device", h.identities[0].address)
        #expect(busy.exitCode == ExitCode.daemonError && busy.stderr.contains(first) && busy.stderr.hasSuffix("(busy)\n"))
        let activity = strapctl(h, "workout", "start", "--activity", "juggling")
        #expect(activity.exitCode == ExitCode.daemonError && activity.stderr.hasPrefix("strapctl: unknown activityType 'juggling'; known: running,"))

        let discard = strapctl(h, "workout", "discard", second)
        #expect(discard.stdout == "discarded \(second) (nothing saved)\n")
        #expect(try openSessions(h) == [first])
        #expect(strapctl(h, "workout", "send", #"{"to":"all"}"#).stdout == "sent to the followers of \(first)\n")
    }

    @Test func profileSetGetNoDataAndTheDaemonsMessages() throws {
        let h = try RouterHarness(workoutClock: Clock().now)
        defer { h.close() }
        let none = strapctl(h, "profile")
        #expect(none.exitCode == ExitCode.noData && none.stderr == "strapctl: no profile for athlete \"default\" (noData)\n")

        let set = strapctl(h, "profile", "set", "--athlete", "ana", "weight=61.5", "dateOfBirth=1994-03-02", "biologicalSex=female",
                           "restingHeartRate=48", "zones=heartRateReserve")
        #expect(set.exitCode == 0, "\(set.stderr)")
        let shown = lines(set.stdout)
        #expect(shown[0] == "athlete ana")
        #expect(shown.contains("  weight                     61.5 kg"))
        #expect(shown.contains { $0.hasPrefix("  dateOfBirth                1994-03-02 (age ") })
        #expect(shown.contains { $0.hasPrefix("  maximumHeartRate           ") && $0.hasSuffix(" bpm estimated (Tanaka 2001)") })
        #expect(shown.contains("  heartRateZones             heartRateReserve:50,60,70,80,90,100 %"))
        #expect(shown.contains("  vo2Max                     not set"))
        #expect(strapctl(h, "profile", "--athlete", "ana").stdout == set.stdout)

        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "weight").stdout == "61.5\n")
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "zones").stdout == "heartRateReserve:50,60,70,80,90,100\n")
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "maximumHeartRate").stdout.hasSuffix(" estimated (Tanaka 2001)\n"))
        let unset = strapctl(h, "profile", "get", "--athlete", "ana", "vo2Max")
        #expect(unset.exitCode == ExitCode.noData && unset.stderr == "strapctl: vo2Max is not set in the profile (noData)\n")

        // The FTP through the socket: set as ftp=, read back by either name, refused out of range.
        let ftp = strapctl(h, "profile", "set", "--athlete", "ana", "ftp=250")
        #expect(ftp.exitCode == 0 && ftp.stdout.contains("  functionalThresholdPower   250 W (power zones 1–6 up to 138, 188, 225, 263, 300, 375 W)\n"),
                "\(ftp.stdout)")
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "ftp").stdout == "250\n")
        #expect(strapctl(h, "--json", "profile", "get", "--athlete", "ana", "functionalThresholdPower").stdout ==
                #"{"id":1,"ok":true,"result":{"athlete":"ana","functionalThresholdPower":250}}"# + "\n")
        let strong = strapctl(h, "profile", "set", "--athlete", "ana", "ftp=2500")
        #expect(strong.exitCode == ExitCode.daemonError
                && strong.stderr == "strapctl: functionalThresholdPower must be from 30 to 2000 W, got 2500 (invalidOption)\n")
        #expect(strapctl(h, "profile", "set", "--athlete", "ana", "ftp=").exitCode == 0)
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "ftp").exitCode == ExitCode.noData)

        // A sensor's settings are merged field by field, then cleared.
        let csc = "5E:1A:00:00:5B:00"
        #expect(strapctl(h, "profile", "set", "--athlete", "ana", "device.\(csc).wheelCircumference=2.105").exitCode == 0)
        #expect(strapctl(h, "profile", "set", "--athlete", "ana", "device.\(csc).cadenceIsStepsPerMinute=true").exitCode == 0)
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "devices").stdout == "\(csc) cadenceIsStepsPerMinute=true wheelCircumference=2.105\n")
        #expect(strapctl(h, "profile", "set", "--athlete", "ana", "device.\(csc).wheelCircumference=").exitCode == 0)
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "devices").stdout == "\(csc) cadenceIsStepsPerMinute=true\n")
        #expect(strapctl(h, "profile", "set", "--athlete", "ana", "device.\(csc)=", "weight=").exitCode == 0)
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "devices").exitCode == ExitCode.noData)
        #expect(strapctl(h, "profile", "get", "--athlete", "ana", "weight").exitCode == ExitCode.noData)

        let invalid = strapctl(h, "profile", "set", "--athlete", "ana", "maximumHeartRate=40")
        #expect(invalid.exitCode == ExitCode.daemonError)
        #expect(invalid.stderr == "strapctl: maximumHeartRate must be from 60 to 250 bpm, got 40 (invalidOption)\n")
        let misspelt = strapctl(h, "profile", "set", "wieght=70")
        #expect(misspelt.exitCode == ExitCode.daemonError && misspelt.stderr.hasPrefix("strapctl: unknown profile field 'wieght'; fields are "))
        let bounds = strapctl(h, "profile", "set", "zones=percentLTHR:50,60,70")
        #expect(bounds.exitCode == ExitCode.daemonError && bounds.stderr.contains("5 zones need 6 bounds, got 3"))
        #expect(strapctl(h, "--json", "profile", "get", "--athlete", "ana", "restingHeartRate").stdout ==
                #"{"id":1,"ok":true,"result":{"athlete":"ana","restingHeartRate":48}}"# + "\n")
    }

    @Test func followPrintsAMarkerFromAnotherClientAndEndsWithTheSavedSummary() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let feed = Feed(seconds: 20)
        #expect(strapctl(h, "workout", "start", "--activity", "cycling", "--device", h.identities[0].address,
                         "--device", h.identities[1].address).exitCode == 0)
        let id = try #require(try openSessions(h).first)
        let follow = Running(h, ["workout", "follow"])
        #expect(try waitFor { follow.output.text.contains("following \(id): cycling, unknown, athlete default, running\n") })
        try feed.submit(until: 4, to: h); clock.set(seconds: 4)
        // Another client (the test, not strapctl) sets the marker.
        #expect(try h.client().call(#"{"id":1,"op":"workout.marker","session":"\#(id)","metadata":{"note":"sprint"}}"#).isOK)
        #expect(try waitFor { follow.output.text.contains(" marker note=sprint\n") })
        #expect(strapctl(h, "workout", "lap").exitCode == 0)
        #expect(try waitFor { follow.output.text.contains(" lap (lap 2 begins)\n") })
        try feed.submit(until: 8, to: h); clock.set(seconds: 8)
        // Statistics lines: elapsed, state, heart rate and the lap.
        #expect(try waitFor { lines(follow.output.text).contains { $0.hasPrefix("0:0") && $0.contains("  running  HR ") && $0.hasSuffix("  lap 2") } })
        #expect(strapctl(h, "workout", "end").exitCode == 0)
        #expect(follow.wait() == 0)
        let text = follow.output.text
        #expect(text.contains(" running → ended\n"))
        let uuid = try #require(try h.client().call(#"{"id":2,"op":"samples.anchored","types":["workout"]}"#).result.objects("added").first?.string("uuid"))
        #expect(text.contains("saved as workout \(uuid)\n\nworkout \(uuid) (session \(id))\n"))
        #expect(text.contains("  duration    0:08 (excluding pauses)\n"))
    }

    @Test func followStopsOnInterruptAndTheSessionGoesOn() throws {
        let h = try RouterHarness(workoutClock: Clock().now)
        defer { h.close() }
        #expect(strapctl(h, "workout", "start", "--activity", "rowing", "--device", h.identities[0].address).exitCode == 0)
        let id = try #require(try openSessions(h).first)
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let follow = Running(h, ["workout", "follow", id], interrupts: .descriptor(fds[0]))
        #expect(try waitFor { follow.output.text.contains("following \(id)") })
        var byte: UInt8 = 3
        #expect(write(fds[1], &byte, 1) == 1)
        #expect(follow.wait() == 0)
        #expect(follow.output.text.hasSuffix("stopped following \(id) (the session goes on)\n"))
        #expect(try openSessions(h) == [id])
    }

    @Test func liveShowsTheWorkoutNextToItsDevices() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        let feed = Feed(seconds: 20)
        let hrm = h.identities[0].address
        #expect(strapctl(h, "workout", "start", "--activity", "cycling", "--device", hrm).exitCode == 0)
        let id = try #require(try openSessions(h).first)
        let live = Running(h, ["live"])
        #expect(try waitFor { live.output.text.contains("workout \(id.prefix(8)) cycling running on \(hrm)\n") })
        #expect(try waitFor { h.router.liveSubscriberCount == 1 })
        try feed.submit(until: 5, to: h); clock.set(seconds: 5)
        #expect(try waitFor { lines(live.output.text).contains { $0.hasPrefix("workout \(id.prefix(8)) 0:0") && $0.contains("  running  HR ") } })
        #expect(strapctl(h, "workout", "pause").exitCode == 0)
        #expect(try waitFor { live.output.text.contains("workout \(id.prefix(8)) ") && live.output.text.contains(" running → paused\n") })
        h.close()
        #expect(live.wait() == ExitCode.unreachable)
    }
}
