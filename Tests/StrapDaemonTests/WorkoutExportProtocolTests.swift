import ProtocolDriver
import Foundation
import StrapControl
import StrapExport
import StrapModel
import StrapWire
import Testing
import ThirdPartyReaders
@testable import StrapDaemon

/// `workout.export` and `workout.hrv` over the socket: a simulated workout (pause, lap, RR) is
/// saved, streamed in chunks, reassembled and read by readers nobody here wrote.
@Suite struct WorkoutExportProtocolTests {
    /// Runs a 60 s simulated ride with a lap at 20 s and a pause 30–40 s; returns the saved workout.
    func savedWorkout(_ h: RouterHarness, _ clock: WorkoutProtocolTests.TestClock, _ c: RawProtocolDriver) throws -> JSONObject {
        let feed = WorkoutProtocolTests.Feed(seconds: 70)
        let devices = h.identities.map { "\"\($0.address)\"" }.joined(separator: ",")
        let started = try c.call(#"{"id":1,"op":"workout.start","activityType":"cycling","locationType":"indoor","devices":[\#(devices)]}"#)
        guard case .object(let s)? = started.result["session"], let id = s.string("session") else { throw ClientError.closed }
        for (t, op) in [(20.0, "lap"), (30, "pause"), (40, "resume"), (60, "end")] {
            try feed.submit(until: t, to: h)
            clock.set(seconds: t)
            let r = try c.call(#"{"id":2,"op":"workout.\#(op)","session":"\#(id)"}"#)
            #expect(r.isOK, "\(op): \(r)")
            if op == "end", case .object(let w)? = r.result["workout"] { return w }
        }
        throw ClientError.closed
    }

    /// Reads an export stream to its end; returns the announced size and the bytes.
    func export(_ c: RawProtocolDriver, _ uuid: String, _ format: String) throws -> (announced: Int64?, bytes: [UInt8], chunks: Int) {
        try c.send(#"{"id":"x","op":"workout.export","workout":"\#(uuid)","format":"\#(format)"}"#)
        var announced: Int64?
        var bytes: [UInt8] = []
        var chunks = 0
        while let m = try c.readMessage() {
            if m.isOK { announced = m.result.int("bytes"); continue }
            if m.errorCode != nil { Issue.record("export failed: \(m)"); break }
            switch m.event {
            case "chunk":
                #expect(m.data.int("offset") == Int64(bytes.count))
                bytes += [UInt8](Data(base64Encoded: m.data.string("data") ?? "") ?? Data())
                chunks += 1
            case "finished":
                #expect(m.data.int("bytes") == Int64(bytes.count))
                return (announced, bytes, chunks)
            default:
                Issue.record("unexpected \(m)")
                return (announced, bytes, chunks)
            }
        }
        throw ClientError.closed
    }

    @Test func exportsAreStreamedWholeAndReadByThirdPartyReaders() throws {
        let clock = WorkoutProtocolTests.TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let w = try savedWorkout(h, clock, c)
        guard let uuid = w.string("uuid"), case .object(let summary)? = w["summary"] else { Issue.record("\(w)"); return }
        // The saved workout carries its HRV.
        #expect(summary["hrvRMSSD"] != nil && summary["hrvNormalIntervals"] != nil, "\(summary)")

        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for format in ["fit", "tcx", "csv"] {
            let (announced, bytes, chunks) = try export(c, uuid, format)
            #expect(announced == Int64(bytes.count) && chunks >= 1, "\(format): announced \(announced ?? -1), got \(bytes.count)")
            // What went over the socket is exactly what the encoder makes of the stored workout.
            guard let stored = try h.store.workout(UUID(uuidString: uuid)!) else { Issue.record("not stored"); return }
            let direct = try ExportStream.data(format: ExportFormat(rawValue: format)!, workout: stored,
                                               samples: SampleSource(sequence: try WorkoutSamples.export(h.store, stored)))
            #expect(direct == bytes, "\(format): the streamed file differs from the encoder's")
            let file = dir.appendingPathComponent("ride.\(format)")
            try Data(bytes).write(to: file)
            switch format {
            case "fit":
                let read = try ThirdPartyReaders.verifyFIT(file, expect: ["session": ["sport": "cycling", "num_laps": 2, "timer": 50.0, "elapsed": 60.0]])
                #expect(!read.isEmpty)
            case "tcx":
                let read = try ThirdPartyReaders.verifyTCX(file, expect: ["sport": "Biking"])
                #expect(!read.isEmpty)
            default:
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(text.hasPrefix("time,elapsed_s,lap,paused,heart_rate_bpm"))
                #expect(text.split(separator: "\n").count > 50)
            }
        }
        // An unknown workout, an open session: clear errors.
        #expect(try c.call(#"{"id":3,"op":"workout.export","workout":"\#(UUID().uuidString)","format":"fit"}"#).errorCode == "notFound")
        #expect(try c.call(#"{"id":4,"op":"workout.export","workout":"\#(uuid)","format":"gpx"}"#).errorCode == "badRequest")
        let open = try c.call(#"{"id":5,"op":"workout.start","activityType":"running","devices":[]}"#)
        if case .object(let s)? = open.result["session"], let id = s.string("session") {
            #expect(try c.call(#"{"id":6,"op":"workout.export","workout":"\#(id)"}"#).errorCode == "invalidOption")
            #expect(try c.call(#"{"id":7,"op":"workout.discard","session":"\#(id)"}"#).isOK)
            #expect(try c.call(#"{"id":8,"op":"workout.export","workout":"\#(id)"}"#).errorCode == "notFound")
        }

        // workout.hrv of the saved workout agrees with its summary.
        let hrv = try c.call(#"{"id":9,"op":"workout.hrv","workout":"\#(uuid)"}"#)
        #expect(hrv.isOK, "\(hrv)")
        #expect(hrv.result["rmssd"] == summary["hrvRMSSD"])
        #expect(hrv.result["excludedPaused"] == summary["hrvExcludedPaused"])
    }

    /// Where to end so that beats before the end arrive after it: 1 ms before the last beat of
    /// one of the strap's series (its packet is received after that beat), found by running
    /// the same simulation into a scratch front end.
    static func endInsideABeatSeries(after seconds: Double) throws -> (end: Millis, device: String) {
        let probe = try RouterHarness()
        defer { probe.close() }
        try probe.ingest(seconds: seconds + 10)
        let after = WorkoutProtocolTests.origin + Millis(seconds * 1000)
        let series = try probe.store.samples(matching: .types([.heartbeatSeries]))
            .filter { $0.start >= after && $0.beats.count >= 3 }.sorted { $0.start < $1.start }
        let s = try #require(series.first)
        return (s.end - 1, s.device.id)
    }

    @Test func theSavedHRVCountsTheBeatsOfThePacketAfterTheEndAndAgreesEverywhere() throws {
        let (endAt, device) = try Self.endInsideABeatSeries(after: 30)
        let clock = WorkoutProtocolTests.TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client(), watcher = try h.client()
        let feed = WorkoutProtocolTests.Feed(seconds: 50)
        let started = try c.call(#"{"id":1,"op":"workout.start","activityType":"running","devices":["\#(device)"]}"#)
        guard case .object(let s)? = started.result["session"], let id = s.string("session") else { Issue.record("\(started)"); return }
        let endSeconds = Double(endAt - WorkoutProtocolTests.origin) / 1000
        try feed.submit(until: endSeconds, to: h)
        clock.set(seconds: endSeconds)
        let beforeEnd = try h.store.samples(matching: .types([.heartbeatSeries]))
        try #require(!beforeEnd.isEmpty && beforeEnd.allSatisfy { $0.end < endAt }, "the series closing the workout must come after its end")

        try c.send(#"{"id":2,"op":"workout.end","session":"\#(id)"}"#)
        // The end is under way (ended, not saved yet) when the strap's next packets come in.
        var ended = false
        for _ in 0..<2_000 where !ended {
            let info = try watcher.call(#"{"id":3,"op":"workout.get","session":"\#(id)"}"#)
            if case .object(let session)? = info.result["session"] { ended = session.string("state") == "ended" }
            if !ended { usleep(1_000) }
        }
        try feed.submit(until: endSeconds + 5, to: h)
        let reply = try c.read { $0["id"] == .int(2) }.match
        #expect(reply.isOK, "\(reply)")
        guard case .object(let w)? = reply.result["workout"], case .object(let summary)? = w["summary"],
              let uuid = w.string("uuid") else { Issue.record("no workout: \(reply)"); return }

        // The beats that came after the end count: without them there are fewer intervals.
        let stored = try #require(try h.store.workout(UUID(uuidString: uuid)!))
        let early = HRVAnalysis.analyze(workout: stored, samples: beforeEnd.sorted { $0.start < $1.start })
        guard case .int(let intervals)? = summary["hrvIntervals"] ?? .null else { Issue.record("no HRV: \(summary)"); return }
        #expect(Int(intervals) > early.intervals)
        // One answer: the saved summary, workout.hrv and workout.get (what `workout show` prints).
        let hrv = try c.call(#"{"id":4,"op":"workout.hrv","workout":"\#(uuid)"}"#)
        #expect(hrv.isOK, "\(hrv)")
        #expect(hrv.result["intervals"] == summary["hrvIntervals"])
        #expect(hrv.result["sdnn"] == summary["hrvSDNN"])
        #expect(hrv.result["rmssd"] == summary["hrvRMSSD"])
        let shown = try c.call(#"{"id":5,"op":"workout.get","session":"\#(id)"}"#)
        guard case .object(let info)? = shown.result["workout"], case .object(let shownSummary)? = info["summary"] else {
            Issue.record("\(shown)"); return
        }
        #expect(shownSummary == summary)
    }

    @Test func hrvAndExportAnswerWhenTheWallClockSteppedBackBehindTheStart() throws {
        let clock = WorkoutProtocolTests.TestClock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let feed = WorkoutProtocolTests.Feed(seconds: 30)
        try feed.submit(until: 10, to: h)
        clock.set(seconds: 10)
        let devices = h.identities.map { "\"\($0.address)\"" }.joined(separator: ",")
        let started = try c.call(#"{"id":1,"op":"workout.start","activityType":"cycling","devices":[\#(devices)]}"#)
        guard case .object(let s)? = started.result["session"], let id = s.string("session") else { Issue.record("\(started)"); return }
        try feed.submit(until: 20, to: h)
        clock.set(seconds: 20)
        // An NTP step puts the clock well behind the session's start.
        clock.set(seconds: 1)
        let open = try c.call(#"{"id":2,"op":"workout.hrv","workout":"\#(id)"}"#)
        #expect(open.isOK || open.errorCode == "noData", "\(open)")
        let ended = try c.call(#"{"id":3,"op":"workout.end","session":"\#(id)"}"#)
        #expect(ended.isOK, "\(ended)")
        guard case .object(let w)? = ended.result["workout"], let uuid = w.string("uuid") else { return }
        let saved = try c.call(#"{"id":4,"op":"workout.hrv","workout":"\#(uuid)"}"#)
        #expect(saved.isOK || saved.errorCode == "noData", "\(saved)")
        // A workout without duration has nothing to export: a clear error, not a trap.
        let export = try c.call(#"{"id":6,"op":"workout.export","workout":"\#(uuid)","format":"fit"}"#)
        #expect(export.errorCode == "noData", "\(export)")
        // The daemon is still there.
        #expect(try c.call(#"{"id":5,"op":"status"}"#).isOK)
    }
}
