import Testing
import StrapKit
import StrapModel
@testable import StrapWeb
import StrapWire

/// The figures strapd-web adds to live samples for the dashboard's tiles (docs/web.md, "The
/// dashboard's tiles"): each checked against a value worked out here by hand, not by the
/// code under test.
@Suite struct LiveFiguresTests {
    static let origin: Millis = 1_796_000_000_000
    static let strap: JSONObject = ["id": .string("5E:1A:00:00:48:00"), "address": .string("5E:1A:00:00:48:00"), "name": .string("Sim HR 0")]

    static func sample(_ type: String, value: Double? = nil, start: Millis, end: Millis? = nil, beats: [Double]? = nil,
                       metadata: JSONObject = [:], device: JSONObject = strap) -> JSONObject {
        var o: JSONObject = ["type": .string(type), "start": .string(RFC3339.string(start)),
                             "end": .string(RFC3339.string(end ?? start)), "device": .object(device), "metadata": .object(metadata)]
        if let value { o["value"] = .double(value) }
        if let beats { o["beats"] = .array(beats.map { .double($0) }) }
        return o
    }

    static func double(_ value: JSONValue?) -> Double? {
        switch value {
        case .double(let d)?: d
        case .int(let i)?: Double(i)
        default: nil
        }
    }

    /// Rule: a heart rate's zone is the one the athlete's zones (`HeartRateZones`, bounds in
    /// bpm) give it; without zones there is none; a non-reading (0, `quality=noReading`, or
    /// sent without skin contact: `Sample.isHeartRateReading`) has no zone and is said to be
    /// none (`reading: false`), with zones or without, so no page shows it as a heart rate.
    @Test func aHeartRateGetsTheZoneOfTheAthletesZones() throws {
        let zones = try HeartRateZones(bpm: [100, 120, 140, 160, 180, 200])
        var figures = LiveFigures(zones: zones)
        for (bpm, zone) in [(95.0, 0), (100, 1), (139, 2), (150, 3), (165, 4), (199, 5), (230, 5)] {
            let f = figures.figures(for: Self.sample("heartRate", value: bpm, start: Self.origin))
            #expect(f?["zone"] == .int(Int64(zone)), "\(bpm) bpm: \(String(describing: f))")
        }
        var withoutZones = LiveFigures()
        #expect(withoutZones.figures(for: Self.sample("heartRate", value: 150, start: Self.origin)) == nil)
        let nonReadings = [
            Self.sample("heartRate", value: 0, start: Self.origin, metadata: ["quality": .string("noReading")]),
            Self.sample("heartRate", value: 0, start: Self.origin),
            Self.sample("heartRate", value: 82, start: Self.origin, metadata: ["contact": .string("notDetected")]),
        ]
        for sample in nonReadings {
            #expect(figures.figures(for: sample) == ["reading": .bool(false)], "\(sample)")
            #expect(withoutZones.figures(for: sample) == ["reading": .bool(false)], "\(sample)")
        }
    }

    /// Rule: the overlay's cut sample says a non-reading as the dashboard's figure does (it
    /// carries no metadata of its own), and a reading goes without the key.
    @Test func theOverlaysSampleSaysANonReading() throws {
        let data = Self.sample("heartRate", value: 0, start: Self.origin, metadata: ["quality": .string("noReading")])
        let event = RawEvent(kind: "sample", data: data)
        let cut = try #require(LiveRelay.overlaySample(event, figures: ["reading": .bool(false)]))
        #expect(cut["reading"] == .bool(false))
        #expect(cut["metadata"] == nil)
        let reading = try #require(LiveRelay.overlaySample(RawEvent(kind: "sample", data: Self.sample("heartRate", value: 120, start: Self.origin)),
                                                           figures: ["zone": .int(2)]))
        #expect(reading["reading"] == nil && reading["value"] == .double(120))
    }

    /// Rule: a heartbeat series gives its last RR interval and the RMSSD of the strap's
    /// intervals of the last minute, pairs only of adjacent intervals; series older than the
    /// window drop out. Beats in 1/8 s steps, so every interval is exact.
    @Test func aHeartbeatSeriesGivesTheLastRRAndTheRMSSDOfTheWindow() throws {
        var figures = LiveFigures()
        // RR 1000, 1125, 1000 ms: differences +125, −125.
        let first = figures.figures(for: Self.sample("heartbeatSeries", start: Self.origin, end: Self.origin + 3125, beats: [1.0, 2.125, 3.125]))
        #expect(Self.double(first?["lastRR"]) == 1000)
        #expect(Self.double(first?["rmssd"]) == 125)
        #expect(first?["rmssdDifferences"] == .int(2))
        // It continues the first series (starts at its end): RR 1000, difference 0.
        let second = figures.figures(for: Self.sample("heartbeatSeries", start: Self.origin + 3125, end: Self.origin + 4125, beats: [1.0]))
        #expect(Self.double(second?["lastRR"]) == 1000)
        let expected = ((125.0 * 125 + 125 * 125 + 0) / 3).squareRoot()
        #expect(abs((Self.double(second?["rmssd"]) ?? 0) - expected) < 1e-9, "\(String(describing: second))")
        // Two minutes on: the earlier beats are out of the window; RR 800, 850: difference 50.
        let later = Self.origin + 120_000
        let third = figures.figures(for: Self.sample("heartbeatSeries", start: later, end: later + 1650, beats: [0.8, 1.65],
                                                     metadata: ["gapBefore": .string("true")]))
        #expect(abs((Self.double(third?["lastRR"]) ?? 0) - 850) < 1e-9)
        #expect(abs((Self.double(third?["rmssd"]) ?? 0) - 50) < 1e-9, "\(String(describing: third))")
        #expect(third?["rmssdDifferences"] == .int(1))
    }

    /// Rule: one strap's beats never pair with another's.
    @Test func eachStrapHasAWindowOfItsOwn() throws {
        var figures = LiveFigures()
        let other: JSONObject = ["id": .string("5E:1A:00:00:48:03"), "address": .string("5E:1A:00:00:48:03"), "name": .string("Sim HR 3")]
        _ = figures.figures(for: Self.sample("heartbeatSeries", start: Self.origin, end: Self.origin + 2000, beats: [1.0, 2.0]))
        let f = figures.figures(for: Self.sample("heartbeatSeries", start: Self.origin + 2000, end: Self.origin + 2500, beats: [0.5],
                                                 device: other))
        #expect(Self.double(f?["lastRR"]) == 500)
        #expect(f?["rmssd"] == nil, "one interval of its own has no difference: \(String(describing: f))")
    }

    /// The default athlete's zones as percentages of a 200 bpm maximum, through strapd.
    static func setZones(_ web: WebHarness, percentOf200 bounds: [Int]) async throws {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        _ = try await store.request("profile.set", ["profile": .object([
            "maximumHeartRate": .int(200),
            "heartRateZones": .object(["method": .string("percentMaxHR"), "bounds": .array(bounds.map { .int(Int64($0)) })]),
        ])])
    }

    /// Rule: strapd-web's /events carries strapd's samples with the figures added, through a
    /// real strapd --simulate=3 (HR, CSC, RSC): a heart rate's zone is the one the default
    /// athlete's zones (set here: 50…90 % of 200 bpm) give its value (a non-reading is said to
    /// be none), a heartbeat series' last
    /// RR is its last two beats' difference, a speed's km/h is 3.6 × its value and a running
    /// speed's pace 1000 / its value; cadences carry none.
    @Test func theRelayedSamplesCarryTheFigures() async throws {
        // The demo scenario rides the bike from the start: the default one may stop it for
        // 30–60 s, and then no cyclingSpeed comes within the 30 s this test reads.
        let web = try WebHarness(sensors: 3, strapdArguments: ["--simulate-scenario", "demo"])
        defer { web.stop() }
        try await Self.setZones(web, percentOf200: [50, 60, 70, 80, 90, 100])
        let (port, host, bearer) = (web.port, web.host, web.bearer)
        let wanted: Set<String> = ["heartRate", "heartbeatSeries", "cyclingSpeed", "runningSpeed"]
        // Read until every wanted type has come with figures: the zones reach the relay within its 5 s refresh.
        let events = try await WorkoutAPITests.onThread {
            try RawHTTP.exchange(port: port, path: "/events", host: host, headers: [bearer], timeout: 30) { body in
                Set(Self.withFigures(body).map(\.type)).isSuperset(of: wanted)
            }
        }
        let samples = Self.withFigures(events.body)
        #expect(Set(samples.map(\.type)).isSuperset(of: wanted), "types with figures: \(Set(samples.map(\.type)))")
        for (type, sample, f) in samples {
            let value = Self.double(sample["value"]) ?? .nan
            switch type {
            case "heartRate":
                // The simulated strap loses skin contact now and then: such a sample is said to
                // be no reading, not given a zone.
                guard case .object(let metadata)? = sample["metadata"] ?? .object([:]) else { Issue.record("metadata: \(sample)"); continue }
                let noReading = !(value > 0) || metadata["contact"] == .string("notDetected") || metadata["quality"] == .string("noReading")
                let zone = [100.0, 120, 140, 160, 180].filter { value >= $0 }.count
                #expect(f == (noReading ? ["reading": .bool(false)] : ["zone": .int(Int64(zone))]), "\(value) bpm, \(metadata): \(f)")
            case "heartbeatSeries":
                guard case .array(let beats)? = sample["beats"] else { Issue.record("a series without beats"); continue }
                let seconds = beats.compactMap { Self.double($0) }
                let last = ((seconds.last ?? 0) - (seconds.count > 1 ? seconds[seconds.count - 2] : 0)) * 1000
                #expect(abs((Self.double(f["lastRR"]) ?? .nan) - last) < 1e-6, "beats \(seconds): \(f)")
                if let rmssd = Self.double(f["rmssd"]) { #expect(rmssd >= 0 && rmssd.isFinite) }
            case "cyclingSpeed", "runningSpeed":
                #expect(abs((Self.double(f["kilometresPerHour"]) ?? .nan) - value * 3.6) < 1e-9, "\(value) m/s: \(f)")
                if type == "runningSpeed" && value > 0 {
                    #expect(abs((Self.double(f["secondsPerKilometre"]) ?? .nan) - 1000 / value) < 1e-9, "\(value) m/s: \(f)")
                } else {
                    #expect(f["secondsPerKilometre"] == nil, "\(type) \(value) m/s: \(f)")
                }
            default:
                Issue.record("\(type) carries figures: \(f)")
            }
        }
    }

    /// The `sample` frames of an /events body that carry figures.
    static func withFigures(_ body: String) -> [(type: String, sample: JSONObject, figures: JSONObject)] {
        OverlayTests.frames(body).compactMap { frame in
            guard frame.event == "sample", case .object(let o)? = try? JSONParser.parse(Array(frame.data.utf8)),
                  let type = WorkoutAPITests.string(o["type"]), let f = WorkoutAPITests.object(o["figures"]) else { return nil }
            return (type, o, f)
        }
    }

    /// Rule: a speed is also given in km/h; a running speed above 0 also as a pace in seconds
    /// per kilometre; cadence and other types get no figures (the value is shown as sent).
    @Test func speedsGetKilometresPerHourAndRunningAPace() {
        var figures = LiveFigures()
        let cycling = figures.figures(for: Self.sample("cyclingSpeed", value: 5, start: Self.origin))
        #expect(Self.double(cycling?["kilometresPerHour"]) == 18)
        #expect(cycling?["secondsPerKilometre"] == nil, "no pace for cycling")
        let running = figures.figures(for: Self.sample("runningSpeed", value: 4, start: Self.origin))
        #expect(abs((Self.double(running?["kilometresPerHour"]) ?? 0) - 14.4) < 1e-9)
        #expect(Self.double(running?["secondsPerKilometre"]) == 250)
        let standing = figures.figures(for: Self.sample("runningSpeed", value: 0, start: Self.origin))
        #expect(Self.double(standing?["kilometresPerHour"]) == 0)
        #expect(standing?["secondsPerKilometre"] == nil, "no pace standing still")
        #expect(figures.figures(for: Self.sample("cyclingCadence", value: 90, start: Self.origin)) == nil)
        #expect(figures.figures(for: ["type": .string("heartRate")]) == nil, "not a sample")
    }
    /// The relay hands strapd's own text on (StrapKit's `keepingJSON`) and appends the figures
    /// as its last member; the result is the JSON of the data with the figures added, as when
    /// the parsed object is written out (events strapd-web makes itself).
    @Test func theRelayAppendsTheFiguresToStrapdsOwnText() throws {
        let text = Array(#"{"type":"heartRate","value":150,"device":{"address":"AA:BB","name":"<b>"},"unit":"count/min"}"#.utf8)
        guard case .object(let data) = try JSONParser.parse(text) else { Issue.record("not an object"); return }
        let figures: JSONObject = ["zone": .int(4)]
        let kept = RawEvent(kind: "sample", data: data, dataJSON: text[...])
        let relayed = LiveRelay.relayedData(kept, figures: figures)
        #expect(String(decoding: relayed, as: UTF8.self) == String(decoding: text.dropLast(), as: UTF8.self) + #","figures":{"zone":4}}"#)
        var withFigures = data
        withFigures["figures"] = .object(figures)
        #expect(try JSONParser.parse(relayed) == .object(withFigures))
        // Without figures the text goes as it came; without text the object is written out.
        #expect(LiveRelay.relayedData(kept, figures: nil) == text)
        #expect(LiveRelay.relayedData(RawEvent(kind: "sample", data: data), figures: figures) == JSONWriter.bytes(.object(withFigures)))
        // An empty object gets no stray comma.
        let empty = RawEvent(kind: "sample", data: [:], dataJSON: Array("{}".utf8)[...])
        #expect(String(decoding: LiveRelay.relayedData(empty, figures: figures), as: UTF8.self) == #"{"figures":{"zone":4}}"#)
    }
}
