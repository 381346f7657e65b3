import ProtocolDriver
import Foundation
import StrapControl
import StrapIngest
import StrapModel
import StrapStore
import StrapWire
import StrapWorkout
import Synchronization
import Testing
@testable import StrapDaemon

/// `workout.*` and `profile.*` over the socket against a real front end: the simulator's
/// packets go through the pipeline, the engine counts them, the workout is saved in the store.
/// Time is a test clock aligned with the simulated packets' receive times.
@Suite struct WorkoutProtocolTests {
    static let origin: Millis = 1_700_000_000_000

    /// A clock the test moves; the engine reads it for every command.
    final class TestClock: Sendable {
        private let t = Mutex<Millis>(WorkoutProtocolTests.origin)
        var now: @Sendable () -> Millis { { [self] in t.withLock { $0 } } }
        func set(seconds: Double) { t.withLock { $0 = WorkoutProtocolTests.origin + Millis(seconds * 1000) } }
    }

    /// One continuous simulation, submitted in slices as the clock moves.
    final class Feed {
        let events: [SensorEvent]
        var next = 0
        init(seconds: Double) { events = simulatedEvents(count: 3, seconds: seconds) }
        func submit(until seconds: Double, to h: RouterHarness) throws {
            let limit = WorkoutProtocolTests.origin + Millis(seconds * 1000)
            var slice: [SensorEvent] = []
            while next < events.count, events[next].time.wall <= limit { slice.append(events[next]); next += 1 }
            h.pipeline.submit(contentsOf: slice)
            h.pipeline.drain()
            try h.pipeline.storeStage.flushAndSync()
        }
    }

    /// Runs `body` while a hook is held on `release`, then lets it go. A watchdog lets it go
    /// after 60 s so a regression (the body waiting on the held hook) fails instead of hanging;
    /// the answer is whether `body` finished without the watchdog.
    func whileHeld(_ release: DispatchSemaphore, _ body: () throws -> Void) throws -> Bool {
        let releasedByWatchdog = Atomic<Bool>(false)
        let watchdog = DispatchWorkItem { releasedByWatchdog.store(true, ordering: .relaxed); release.signal() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { release.signal() }
        try body()
        watchdog.cancel()
        return !releasedByWatchdog.load(ordering: .relaxed)
    }

    func start(_ c: RawProtocolDriver, _ devices: [String], activity: String = "cycling") throws -> String {
        let list = devices.map { "\"\($0)\"" }.joined(separator: ",")
        let r = try c.call(#"{"id":1,"op":"workout.start","activityType":"\#(activity)","devices":[\#(list)]}"#)
        #expect(r.isOK, "\(r)")
        guard case .object(let s)? = r.result["session"], let id = s.string("session") else { throw ClientError.closed }
        return id
    }

    @Test func aWorkoutRunsThroughTheSocketAndIsSaved() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let feed = Feed(seconds: 40)
        let id = try start(c, h.identities.map(\.address))
        try feed.submit(until: 10, to: h); clock.set(seconds: 10)
        #expect(try c.call(#"{"id":2,"op":"workout.lap","session":"\#(id)","metadata":{"split":"1"}}"#).isOK)
        try feed.submit(until: 20, to: h); clock.set(seconds: 20)
        #expect(try c.call(#"{"id":3,"op":"workout.pause","session":"\#(id)"}"#).isOK)
        try feed.submit(until: 25, to: h); clock.set(seconds: 25)
        let paused = try c.call(#"{"id":4,"op":"workout.get","session":"\#(id)"}"#)
        guard case .object(let stats)? = paused.result["statistics"] else { Issue.record("no statistics: \(paused)"); return }
        #expect(stats["elapsedTime"] == .int(20) || stats["elapsedTime"] == .double(20))
        #expect(try c.call(#"{"id":5,"op":"workout.resume","session":"\#(id)"}"#).isOK)
        try feed.submit(until: 30, to: h); clock.set(seconds: 30)
        let ended = try c.call(#"{"id":6,"op":"workout.end","session":"\#(id)"}"#)
        #expect(ended.isOK, "\(ended)")
        guard case .object(let w)? = ended.result["workout"], case .object(let summary)? = w["summary"],
              let uuid = w.string("uuid") else { Issue.record("no workout: \(ended)"); return }
        #expect(summary["elapsedTime"] == .int(25) || summary["elapsedTime"] == .double(25))
        #expect(w.objects("laps").count == 2)
        #expect(w.objects("events").compactMap { $0.string("kind") } == ["lap", "pause", "resume"])

        // The average counts exactly the heart rates stamped in (0, 20] and (25, 30].
        let hr = try h.store.samples(matching: .types([.heartRate])).filter { s in
            let t = s.start - Self.origin
            return (t > 0 && t <= 20_000) || (t > 25_000 && t <= 30_000)
        }.filter { $0.value > 0 }
        let expected = hr.map(\.value).reduce(0, +) / Double(hr.count)
        guard case .double(let average)? = summary["heartRateAverage"] ?? .null else { Issue.record("no heart rate average"); return }
        #expect(abs(average - expected) < 1e-9)

        // Anchored readers receive it; its samples answer the workout predicate; statistics
        // take it as their range.
        let anchored = try c.call(#"{"id":7,"op":"samples.anchored","types":["workout"]}"#)
        #expect(anchored.result.objects("added").compactMap { $0.string("uuid") } == [uuid])
        let samples = try c.call(#"{"id":8,"op":"samples.query","predicate":{"workout":"\#(uuid)"},"types":["heartRate"]}"#)
        #expect(!samples.result.objects("samples").isEmpty, "\(samples)")
        let byWorkout = try c.call(#"{"id":9,"op":"statistics.query","type":"heartRate","options":["maximum"],"workout":"\#(uuid)"}"#)
        #expect(byWorkout.isOK, "\(byWorkout)")
        // By session id too, and listed.
        let again = try c.call(#"{"id":10,"op":"workout.get","session":"\#(id)"}"#)
        #expect(again.isOK)
        let list = try c.call(#"{"id":11,"op":"workout.list"}"#)
        #expect(list.result.objects("workouts").compactMap { $0.string("uuid") } == [uuid])
    }

    @Test func twoFollowersSeeTheSameChangesAndAMarkerFromAnotherClient() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let control = try h.client()
        let feed = Feed(seconds: 20)
        let id = try start(control, h.identities.map(\.address))
        let a = try h.client(), b = try h.client()
        for f in [a, b] {
            let ok = try f.call(#"{"id":"live","op":"workout.live","session":"\#(id)"}"#)
            #expect(ok.isOK, "\(ok)")
        }
        try feed.submit(until: 5, to: h); clock.set(seconds: 5)
        #expect(try control.call(#"{"id":2,"op":"workout.marker","session":"\#(id)","metadata":{"note":"sprint"}}"#).isOK)
        // A follower's own message goes to the other followers, not back to itself.
        try a.send(#"{"id":"m","op":"workout.send","session":"\#(id)","payload":{"hello":[1,2]}}"#)
        #expect(try control.call(#"{"id":3,"op":"workout.pause","session":"\#(id)"}"#).isOK)
        clock.set(seconds: 8)
        #expect(try control.call(#"{"id":4,"op":"workout.resume","session":"\#(id)"}"#).isOK)
        try feed.submit(until: 12, to: h); clock.set(seconds: 12)
        #expect(try control.call(#"{"id":5,"op":"workout.end","session":"\#(id)"}"#).isOK)

        func changes(_ c: RawProtocolDriver) throws -> (kinds: [String], all: [JSONObject]) {
            let (finished, before) = try c.read { $0.event == "finished" }
            let events = (before + [finished]).filter { $0.string("id") == "live" && $0.event != nil }
            return (events.compactMap(\.event).filter { $0 != "statistics" }, events)
        }
        let seenA = try changes(a), seenB = try changes(b)
        #expect(seenA.kinds == ["event", "state", "state", "state", "saved", "finished"])
        #expect(seenB.kinds == ["event", "message", "state", "state", "state", "saved", "finished"])
        let strip: ([JSONObject]) -> [JSONObject] = { $0.filter { $0.event != "statistics" && $0.event != "message" } }
        #expect(strip(seenA.all) == strip(seenB.all))
        let marker = seenB.all.first { $0.event == "event" }?.data
        #expect(marker?.string("kind") == "marker")
        #expect(marker?["metadata"] == .object(["note": .string("sprint")]))
        let message = seenB.all.first { $0.event == "message" }?.data
        #expect(message?["payload"] == .object(["hello": .array([.int(1), .int(2)])]))
        // Statistics reached both; the last ones before the save agree.
        let lastStats: ([JSONObject]) -> JSONObject? = { $0.last { $0.event == "statistics" }?.data }
        #expect(lastStats(seenA.all) != nil)
        #expect(lastStats(seenA.all)?["elapsedTime"] == lastStats(seenB.all)?["elapsedTime"])
    }

    @Test func concurrentSessionsOnDisjointDevicesAndAConflictRefused() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let (hrm, csc) = (h.identities[0].address, h.identities[1].address)
        let first = try start(c, [hrm], activity: "running")
        let second = try start(c, [csc])
        #expect(first != second)
        let conflict = try c.call(#"{"id":9,"op":"workout.start","activityType":"rowing","devices":["\#(hrm)"]}"#)
        #expect(conflict.errorCode == "busy")
        #expect((conflict["error"].flatMap { if case .object(let e) = $0 { e.string("message") } else { nil } } ?? "").contains(first))
        let list = try c.call(#"{"id":10,"op":"workout.list"}"#)
        #expect(list.result.objects("sessions").count == 2)
    }

    @Test func badCommandsAreClearErrorsAndChangeNothing() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let prepared = try c.call(#"{"id":1,"op":"workout.prepare","activityType":"walking","devices":[]}"#)
        #expect(prepared.isOK, "\(prepared)")
        guard case .object(let s)? = prepared.result["session"], let id = s.string("session") else { return }
        #expect(try c.call(#"{"id":2,"op":"workout.pause","session":"\#(id)"}"#).errorCode == "invalidTransition")
        #expect(try c.call(#"{"id":3,"op":"workout.end","session":"\#(id)"}"#).errorCode == "invalidTransition")
        #expect(try c.call(#"{"id":4,"op":"workout.resume","session":"\#(UUID().uuidString)"}"#).errorCode == "notFound")
        #expect(try c.call(#"{"id":5,"op":"workout.get","session":"not-a-uuid"}"#).errorCode == "badRequest")
        #expect(try c.call(#"{"id":6,"op":"workout.start","activityType":"juggling"}"#).errorCode == "invalidOption")
        let keys = (0..<17).map { "\"k\($0)\":\"v\"" }.joined(separator: ",")
        #expect(try c.call(#"{"id":7,"op":"workout.start","session":"\#(id)"}"#).isOK)
        #expect(try c.call(#"{"id":8,"op":"workout.marker","session":"\#(id)","metadata":{\#(keys)}}"#).errorCode == "invalidOption")
        let big = String(repeating: "x", count: 5000)
        #expect(try c.call(#"{"id":9,"op":"workout.send","session":"\#(id)","payload":"\#(big)"}"#).errorCode == "invalidOption")
        let state = try c.call(#"{"id":10,"op":"workout.get","session":"\#(id)"}"#)
        guard case .object(let session)? = state.result["session"] else { return }
        #expect(session.string("state") == "running")
        #expect(session.objects("events").isEmpty)

        // Profile: nothing set is noData; bad values are invalidOption and change nothing.
        #expect(try c.call(#"{"id":20,"op":"profile.get"}"#).errorCode == "noData")
        #expect(try c.call(#"{"id":21,"op":"profile.set","profile":{"restingHeartRate":60,"weight":70}}"#).isOK)
        for bad in [#"{"weight":0}"#, #"{"dateOfBirth":"2999-01-01"}"#, #"{"maximumHeartRate":55}"#, #"{"wieght":70}"#,
                    #"{"heartRateZones":{"method":"percentMaxHR","bounds":[50,60,55,80,90,100]}}"#] {
            let r = try c.call(#"{"id":22,"op":"profile.set","profile":\#(bad)}"#)
            #expect(r.errorCode == "invalidOption", "\(bad): \(r)")
        }
        let profile = try c.call(#"{"id":23,"op":"profile.get"}"#)
        #expect(profile.result["profile"] == .object(["restingHeartRate": .int(60), "weight": .int(70)]))
        #expect(try c.call(#"{"id":24,"op":"profile.get","field":"vo2Max"}"#).errorCode == "noData")
        #expect(try c.call(#"{"id":25,"op":"profile.get","field":"maximumHeartRate"}"#).errorCode == "noData")
    }

    @Test func endSavesWhileSamplesKeepFlowing() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client(), other = try h.client()
        let feed = Feed(seconds: 30)
        let (hrm, csc) = (h.identities[0].address, h.identities[1].address)
        let ending = try start(c, [hrm], activity: "running")
        let going = try start(c, [csc])
        try feed.submit(until: 10, to: h); clock.set(seconds: 10)
        let workouts = try #require(h.frontEnd.context.workouts)
        let inSave = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        workouts.beforeSave = { inSave.signal(); release.wait() }
        try c.send(#"{"id":2,"op":"workout.end","session":"\#(ending)"}"#)
        try #require(inSave.wait(timeout: .now() + 60) == .success)

        // The save is held. Were it holding the engine lock, the ingest queue (which counts
        // every sample under it) would stop here until the watchdog lets the save go.
        var before, after: JSONValue?, busy: JSONObject?
        let flowed = try whileHeld(release) {
            before = try other.call(#"{"id":3,"op":"workout.get","session":"\#(going)"}"#).result["statistics"]
            try feed.submit(until: 20, to: h); clock.set(seconds: 20)
            after = try other.call(#"{"id":4,"op":"workout.get","session":"\#(going)"}"#).result["statistics"]
            // Meanwhile the ending session refuses other commands instead of waiting.
            busy = try other.call(#"{"id":5,"op":"workout.discard","session":"\#(ending)"}"#)
        }
        #expect(flowed)
        #expect(before != nil && before != after)
        #expect(busy?.errorCode == "busy", "\(String(describing: busy))")
        let saved = try c.read { $0["id"] == .int(2) }.match
        #expect(saved.isOK, "\(saved)")
        workouts.beforeSave = nil
    }

    /// Issue 32 item 6 on a slow disk: the `ended` entry's sync is outside the engine lock too.
    @Test func theEndEntrysSyncHoldsNeitherSamplesNorOtherSessions() throws {
        let clock = TestClock()
        let faults = WorkoutWatchTests.JournalFaults()
        let h = try RouterHarness(workoutClock: clock.now, syscalls: faults.syscalls)
        defer { h.close() }
        let c = try h.client(), other = try h.client()
        let feed = Feed(seconds: 30)
        let (hrm, csc) = (h.identities[0].address, h.identities[1].address)
        let ending = try start(c, [hrm], activity: "running")
        let going = try start(c, [csc])
        try feed.submit(until: 10, to: h); clock.set(seconds: 10)
        let inSync = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        // The first journal sync from now on is the end's: held like a disk that takes its time.
        let armed = Atomic<Bool>(true)
        faults.beforeSync = { if armed.exchange(false, ordering: .relaxed) { inSync.signal(); release.wait() } }
        try c.send(#"{"id":2,"op":"workout.end","session":"\#(ending)"}"#)
        try #require(inSync.wait(timeout: .now() + 60) == .success)

        var before, after: JSONValue?, lap: JSONObject?
        let flowed = try whileHeld(release) {
            before = try other.call(#"{"id":3,"op":"workout.get","session":"\#(going)"}"#).result["statistics"]
            try feed.submit(until: 20, to: h); clock.set(seconds: 20)
            after = try other.call(#"{"id":4,"op":"workout.get","session":"\#(going)"}"#).result["statistics"]
            // The other session's own commands journal and sync meanwhile.
            lap = try other.call(#"{"id":5,"op":"workout.lap","session":"\#(going)"}"#)
        }
        faults.beforeSync = nil
        #expect(flowed)
        #expect(before != nil && before != after)
        #expect(lap?.isOK == true, "\(String(describing: lap))")
        let saved = try c.read { $0["id"] == .int(2) }.match
        #expect(saved.isOK, "\(saved)")
    }

    @Test func aFailedPrepareLeavesNoSessionAndOpenSessionsAreBounded() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let hrm = h.identities[0].address
        let holder = try start(c, [hrm])
        let refused = try c.call(#"{"id":2,"op":"workout.prepare","activityType":"rowing","devices":["\#(hrm)"]}"#)
        #expect(refused.errorCode == "busy", "\(refused)")
        let journals = { () throws -> Int in
            try FileManager.default.contentsOfDirectory(atPath: h.directory + "/store/sessions").filter { $0.hasSuffix(".journal") }.count
        }
        let listed = try c.call(#"{"id":3,"op":"workout.list"}"#).result.objects("sessions").compactMap { info -> String? in
            if case .object(let s)? = info["session"] { s.string("session") } else { nil }
        }
        #expect(listed == [holder])
        #expect(try journals() == 1)

        // Up to the limit, then busy with the count; a discard makes room again.
        let limit = WorkoutEngine.defaultMaximumOpenSessions
        var last = ""
        // Each on a device of its own (the simulated sensors are connected and held).
        let address = { (i: Int) in String(format: "AA:BB:CC:00:%02X:%02X", i / 256, i % 256) }
        for i in 2...limit {
            let r = try c.call(#"{"id":\#(i + 10),"op":"workout.prepare","activityType":"walking","devices":["\#(address(i))"]}"#)
            #expect(r.isOK, "\(i): \(r)")
            if case .object(let s)? = r.result["session"], let id = s.string("session") { last = id }
        }
        let over = try c.call(#"{"id":4,"op":"workout.prepare","activityType":"walking","devices":["\#(address(limit + 1))"]}"#)
        #expect(over.errorCode == "busy")
        #expect(over.errorMessage?.contains("\(limit) workout sessions are open") == true, "\(over)")
        #expect(try journals() == limit)
        let discarded = try c.call(#"{"id":5,"op":"workout.discard","session":"\#(last.lowercased())"}"#)
        #expect(discarded.result.string("discarded") == last.uppercased())
        #expect(try c.call(#"{"id":6,"op":"workout.start","activityType":"walking","devices":["\#(address(limit + 1))"]}"#).isOK)
    }

    @Test func aSessionOnADeviceNeverSeenSaysSo() throws {
        let clock = TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let hrm = h.identities[0].address, typo = "AA:BB:CC:DD:EE:01"
        let started = try c.call(#"{"id":1,"op":"workout.start","activityType":"running","devices":["\#(hrm)","\#(typo)"]}"#)
        #expect(started.isOK, "\(started)")
        #expect(started.result["unknownDevices"] == .array([.string(typo)]))
        guard case .object(let s)? = started.result["session"], let id = s.string("session") else { return }
        let got = try c.call(#"{"id":2,"op":"workout.get","session":"\#(id)"}"#)
        #expect(got.result["unknownDevices"] == .array([.string(typo)]))
        // A session on known devices only has no such member.
        let known = try c.call(#"{"id":3,"op":"workout.prepare","activityType":"running","devices":["\#(h.identities[1].address)"]}"#)
        #expect(known.isOK && known.result["unknownDevices"] == nil, "\(known)")
    }
}
