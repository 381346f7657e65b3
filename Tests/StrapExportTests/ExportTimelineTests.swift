import Foundation
import Testing
import StrapModel
@testable import StrapExport

/// The per-second resampling every format shares (docs/export.md "Resampling").
@Suite struct ExportTimelineTests {
    let t0: Millis = 1_711_843_200_000          // 2024-03-31T00:00:00Z
    let dev = Device(id: "D1", address: "D1", name: "D1")

    func seconds(_ workout: Workout, _ samples: [Sample], hold: Int = 5) throws -> [ExportSecond] {
        let schedule = try ExportSchedule(workout)
        var timeline = ExportTimeline(schedule: schedule, workout: workout,
                                      samples: AnyIterator(samples.makeIterator()), holdSeconds: hold)
        var out: [ExportSecond] = []
        while try timeline.advance() { out.append(timeline.current) }
        return out
    }

    func hr(_ at: Millis, _ v: Double, _ meta: [String: String] = [:]) -> Sample {
        Sample(type: .heartRate, value: v, start: at, device: dev, metadata: meta)
    }

    @Test func levelsAreMeanedHeldFiveSecondsThenEmpty() throws {
        let w = Workout(activityType: "running", start: t0, end: t0 + 12_000, deviceIDs: [])
        let s = try seconds(w, [hr(t0 + 100, 100), hr(t0 + 900, 110), hr(t0 + 1_500, 0, ["quality": "noReading"]),
                                hr(t0 + 2_200, 120)])
        #expect(s.count == 12)
        #expect(s.map { $0.value(.heartRate) } == [105, 105, 120, 120, 120, 120, 120, 120, nil, nil, nil, nil])
    }

    @Test func theFirstAndLastSecondsTakeWhatFallsInStartToEnd() throws {
        // One rule for every type: [start, end). The workout runs from 0.4 s to 3.6 s.
        let w = Workout(activityType: "running", start: t0 + 400, end: t0 + 3_600, deviceIDs: [])
        let samples = [
            Sample(type: .heartbeatSeries, value: 3, start: t0 - 500, end: t0 + 3_800, device: dev, beats: [0.8, 1.5, 4.1]),
            Sample(type: .runningDistance, value: 8, start: t0, end: t0 + 4_000, device: dev),
            hr(t0 + 100, 190),                                                          // before the start: not carried in
            hr(t0 + 400, 100),                                                          // at the start: in
            hr(t0 + 3_500, 110),                                                        // before the end: in
            hr(t0 + 3_600, 200),                                                        // at the end: out
        ]
        let s = try seconds(w, samples, hold: 0)
        #expect(s.map { $0.value(.heartRate) } == [100, nil, nil, 110])
        // Beats at 0.3 s (before the start) and 3.6 s (the end) are out; 1.0 s is in.
        #expect(s.map(\.beats.count) == [0, 1, 0, 0])
        // 8 m over [0, 4 s): 2 m a second, of which [0.4, 3.6) counts: 6.4 m.
        #expect(abs((s.last?.totals[Amount.runningDistance.rawValue] ?? 0) - 6.4) < 1e-9)
    }

    @Test func aHeartRateWithoutSkinContactIsNoReadingAsInTheSummary() throws {
        // The rule the workout engine counts by (`Sample.isHeartRateReading`): a strap off the
        // chest sends noise, which neither records, totals nor the chart take.
        let w = Workout(activityType: "running", start: t0, end: t0 + 4_000, deviceIDs: [])
        let samples = [hr(t0 + 100, 100), hr(t0 + 1_100, 190, ["contact": "notDetected"]), hr(t0 + 2_100, 110, ["contact": "detected"])]
        #expect(try seconds(w, samples, hold: 0).map { $0.value(.heartRate) } == [100, nil, 110, nil])
        let session = try ExportStream(format: .fit, workout: w, samples: SampleSource(samples)).summary.session
        #expect(session.maximumHeartRate == 110 && session.averageHeartRate == 105)
        #expect(samples.map(\.isHeartRateReading) == [true, false, true])
        let chart = try WorkoutChart(width: 40, height: 4, style: .ascii).heartRate(workout: w, samples: samples)
        #expect(chart.hasPrefix("heart rate (bpm)  min 100  max 110"))
    }

    @Test func incrementsAreSpreadOverTheSecondsTheyCover() throws {
        let w = Workout(activityType: "running", start: t0, end: t0 + 4_000, deviceIDs: [])
        let s = try seconds(w, [Sample(type: .runningDistance, value: 4, start: t0 + 500, end: t0 + 2_500, device: dev),
                                Sample(type: .runningDistance, value: 2, start: t0 + 3_000, end: t0 + 3_000, device: dev)])
        #expect(s.map { $0.amounts[Amount.runningDistance.rawValue] } == [1, 2, 1, 2])
        #expect(s.map { $0.totals[Amount.runningDistance.rawValue] } == [1, 3, 4, 6])
        #expect(s.map { $0.distanceTotal(.foot) } == [1, 3, 4, 6])
        #expect(s.allSatisfy { $0.distanceTotal(.cycling) == nil })
    }

    @Test func pausesStopTotalsAndLapsFollowTheSecondsStart() throws {
        // Workout from 0.5 s; pause at 2.5 s, resume at 4.2 s; laps split at 3 s.
        var w = Workout(activityType: "cycling", start: t0 + 500, end: t0 + 6_000, deviceIDs: [])
        w.events = [.init(kind: "pause", time: t0 + 2_500), .init(kind: "resume", time: t0 + 4_200),
                    .init(kind: "resume", time: t0 + 5_000)]       // a stray resume changes nothing
        w.laps = [.init(start: t0 + 500, end: t0 + 3_000), .init(start: t0 + 3_000, end: t0 + 6_000)]
        let samples = (0..<6).map {
            Sample(type: .cyclingDistance, value: 10, start: t0 + Millis($0) * 1000, end: t0 + Millis($0 + 1) * 1000, device: dev)
        }
        let s = try seconds(w, samples)
        #expect(s.map(\.paused) == [false, false, false, true, true, false])
        #expect(s.map(\.lap) == [0, 0, 0, 1, 1, 1])
        #expect(s[0].instant == t0 + 500)
        // The first increment covers [0, 1 s): only its half inside the workout's [0.5 s, 6 s) counts.
        #expect(s.map { $0.totals[Amount.cyclingDistance.rawValue] } == [5, 15, 25, 25, 25, 35])
        let schedule = try ExportSchedule(w)
        #expect(schedule.pauses == [t0 + 2_500 ..< t0 + 4_200])
        #expect(schedule.timerMillis(in: schedule.laps[1]) == 3_000 - 1_200)
    }

    @Test func runningCadenceInStepsIsHalvedToStrides() throws {
        let w = Workout(activityType: "running", start: t0, end: t0 + 2_000, deviceIDs: [])
        let s = try seconds(w, [Sample(type: .runningCadence, value: 170, start: t0, device: dev, metadata: ["cadenceUnit": "steps"]),
                                Sample(type: .runningCadence, value: 86, start: t0 + 1_000, device: dev)])
        #expect(s.map { $0.cadence(.foot) } == [85, 86])
    }

    @Test func otherDevicesAreIgnoredWhenTheWorkoutNamesItsOwn() throws {
        let other = Device(id: "D2", address: "D2", name: "D2")
        let w = Workout(activityType: "running", start: t0, end: t0 + 1_000, deviceIDs: ["D1"])
        let s = try seconds(w, [hr(t0, 100), Sample(type: .heartRate, value: 200, start: t0 + 10, device: other)])
        #expect(s[0].value(.heartRate) == 100)
    }

    @Test func samplesGoingBackInTimeAreATypedError() throws {
        let w = Workout(activityType: "running", start: t0, end: t0 + 5_000, deviceIDs: [])
        #expect(throws: ExportError.samplesOutOfOrder(previousStart: t0 + 3_000, start: t0 + 1_000)) {
            _ = try seconds(w, [hr(t0 + 3_000, 100), hr(t0 + 1_000, 100)])
        }
    }

    /// A stored lap that ends before it starts (strapd saved one for a lap taken while paused,
    /// then ended, until the engine clamped it) is left out of the laps, not a trap.
    @Test func aReversedLapIsTidiedAway() throws {
        var w = Workout(activityType: "cycling", start: t0, end: t0 + 10_000, deviceIDs: [])
        w.sessionID = UUID()
        w.laps = [Workout.Lap(start: t0, end: t0 + 6_000, summary: [:]), Workout.Lap(start: t0 + 8_000, end: t0 + 6_000, summary: [:])]
        let schedule = try ExportSchedule(w)
        #expect(schedule.laps == [t0..<t0 + 6_000])
        #expect(schedule.engineLaps == nil, "the laps are not the engine's any more: the export sums its own")
        #expect(try seconds(w, [hr(t0 + 1_000, 100)]).count == 10)
    }

    @Test func badWorkoutsAndOptionsAreTypedErrors() {
        let empty = Workout(activityType: "running", start: t0, end: t0, deviceIDs: [])
        #expect(throws: ExportError.self) { _ = try ExportStream(format: .fit, workout: empty, samples: SampleSource([])) }
        let before1990 = Workout(activityType: "running", start: 0, end: 1_000, deviceIDs: [])
        #expect(throws: ExportError.self) { _ = try ExportStream(format: .fit, workout: before1990, samples: SampleSource([])) }
        let ok = Workout(activityType: "running", start: t0, end: t0 + 1_000, deviceIDs: [])
        #expect(throws: ExportError.invalidOptions("chunk size 10 is below 256")) {
            _ = try ExportStream(format: .csv, workout: ok, samples: SampleSource([]), options: ExportOptions(chunkSize: 10))
        }
    }

    @Test func beatsBreakAtGapsAndDiscontinuitiesAndUseRawValuesWhenAdjusted() {
        // Series 1 ends at t0 + 1000; series 2 continues it; series 3 says gapBefore; series 4
        // starts 5 s after series 3 ended (a reconnect: no flag); series 5 was adjusted.
        let s1 = Sample(type: .heartbeatSeries, value: 2, start: t0, end: t0 + 1_000, device: dev, beats: [0.5, 1.0])
        let s2 = Sample(type: .heartbeatSeries, value: 1, start: t0 + 1_000, end: t0 + 1_500, device: dev, beats: [0.5])
        let s3 = Sample(type: .heartbeatSeries, value: 1, start: t0 + 3_000, end: t0 + 3_500, device: dev,
                        metadata: ["gapBefore": "true"], beats: [0.5])
        let s4 = Sample(type: .heartbeatSeries, value: 1, start: t0 + 8_500, end: t0 + 9_000, device: dev, beats: [0.5])
        let s5 = Sample(type: .heartbeatSeries, value: 2, start: t0 + 9_000, end: t0 + 9_800, device: dev,
                        metadata: ["adjusted": "true", "rr": "512,300"], beats: [0.5, 0.8])
        let rr = HRVAnalysis.intervals(of: [s1, s2, s3, s4, s5])
        #expect(rr.map(\.breakBefore) == [true, false, false, true, true, false, false])
        #expect(rr.map(\.milliseconds) == [500, 500, 500, 500, 500, 500, 300 * 1000 / 1024])
        #expect(rr.map(\.time) == [t0 + 500, t0 + 1_000, t0 + 1_500, t0 + 3_500, t0 + 9_000, t0 + 9_500, t0 + 9_800])
    }

    @Test func activityMappingTable() {
        let cases: [(String, Workout.LocationType, UInt8, UInt8, ActivityMapping.TCXSport)] = [
            ("running", .outdoor, 1, 0, .running), ("running", .indoor, 1, 1, .running),
            ("cycling", .outdoor, 2, 0, .biking), ("cycling", .indoor, 2, 6, .biking),
            ("walking", .unknown, 11, 0, .other), ("hiking", .outdoor, 17, 0, .other),
            ("rowing", .indoor, 15, 14, .other), ("rowing", .outdoor, 15, 0, .other),
            ("yoga", .indoor, 10, 43, .other), ("other", .unknown, 0, 0, .other), ("kayakPolo", .unknown, 0, 0, .other),
        ]
        for (activity, location, sport, subSport, tcx) in cases {
            let m = ActivityMapping(activityType: activity, location: location)
            #expect(m.sport == sport && m.subSport == subSport && m.tcxSport == tcx, "\(activity) \(location)")
        }
    }
}
