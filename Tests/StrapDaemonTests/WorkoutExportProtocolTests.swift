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
    func savedWorkout(_ h: RouterHarness, _ clock: WorkoutProtocolTests.TestClock, _ c: DaemonClient) throws -> JSONObject {
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
    func export(_ c: DaemonClient, _ uuid: String, _ format: String) throws -> (announced: Int64?, bytes: [UInt8], chunks: Int) {
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
}
