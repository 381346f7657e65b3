import Foundation
import Testing
import ThirdPartyReaders
import StrapGATT
import StrapIngest
import StrapModel
import StrapSimulator
@testable import StrapExport

/// Every FIT export read by Garmin's SDK, fitdecode and gpsbabel; every TCX export by
/// tcxreader, the XML parser and gpsbabel; each compared with what the test expects
/// (Tests/Fixtures/export/check_*.py, pinned in requirements.txt, installed by scripts/pyvenv.sh).
@Suite struct ThirdPartyReaderTests {
    /// 10 minutes of running: 2 laps, a minute's pause, a marker, a 16 s hole in the heart
    /// rate (held 5 s, then none), RR beats, speed/cadence/distance, energy every 10 s.
    static let full = ExportScenario(
        start: 1_704_103_200_000, seconds: 600,
        hr: { (100..<116).contains($0) ? nil : 110 + Double($0 % 40) },
        rr: { $0 % 3 == 0 ? [600, 610] : [605] },
        speed: { 2.5 + Double($0 % 10) / 10 }, energyEvery: 10,
        pauses: [200..<260], lapStarts: [0, 300], markers: [400])

    @Test func fullWorkoutFIT() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try Self.full.synthetic.write(.fit, in: dir)
        var expect = Self.full.fitExpectation()
        expect["sensors"] = 2
        let read = try ThirdPartyReaders.verifyFIT(file, expect: expect)
        #expect(read["records"] as? Int == Self.full.pointSeconds.count)
    }

    @Test func fullWorkoutTCX() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var synthetic = Self.full.synthetic
        synthetic.workout.metadata["notes"] = "Intervals <5×3'> & \"hills\" \u{1}"
        let file = try synthetic.write(.tcx, in: dir)
        var expect = Self.full.tcxExpectation()
        expect["notes"] = "Intervals <5×3'> & \"hills\" "
        try ThirdPartyReaders.verifyTCX(file, expect: expect)
    }

    /// A foot pod alone: records without heart rate, laps and session without averages.
    @Test func workoutWithoutHeartRate() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scenario = ExportScenario(start: 1_704_103_200_000, seconds: 300, speed: { 3 + Double($0 % 5) / 10 },
                                      lapStarts: [0, 120])
        let fit = try scenario.synthetic.write(.fit, in: dir)
        var expect = scenario.fitExpectation()
        expect["sensors"] = 1
        try ThirdPartyReaders.verifyFIT(fit, expect: expect)
        try ThirdPartyReaders.verifyTCX(try scenario.synthetic.write(.tcx, in: dir), expect: scenario.tcxExpectation())
    }

    /// A workout whose sensors delivered nothing: valid files with laps and a session, no records.
    @Test func workoutWithoutSamples() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scenario = ExportScenario(start: 1_704_103_200_000, seconds: 60, lapStarts: [0, 30])
        #expect(scenario.synthetic.samples.isEmpty)
        try ThirdPartyReaders.verifyFIT(try scenario.synthetic.write(.fit, in: dir), expect: scenario.fitExpectation())
        try ThirdPartyReaders.verifyTCX(try scenario.synthetic.write(.tcx, in: dir), expect: scenario.tcxExpectation())
        let csv = String(decoding: try scenario.synthetic.export(.csv), as: UTF8.self).split(separator: "\n")
        #expect(csv.count == 61 && csv[1] == "2024-01-01T10:00:00.000Z,0,1,0,,,,,,,,,,,,")
        try ThirdPartyReaders.verifyCSV(try scenario.synthetic.write(.csv, in: dir),
                                        expect: ["rows": 60, "laps": [1, 2], "paused": 0, "hr_rows": 0])
    }

    /// 10 minutes, two hours of nothing (the strap out of range), 10 minutes: no records in
    /// the gap beyond the 5 s hold; the timer runs through it (it was not a pause).
    @Test func workoutWithATwoHourGap() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gap = 600..<7_800
        let scenario = ExportScenario(start: 1_704_103_200_000, seconds: 8_400,
                                      hr: { gap.contains($0) ? nil : 90 + Double($0 % 30) },
                                      rr: { gap.contains($0) ? [] : [700] }, lapStarts: [0, 4_200])
        #expect(scenario.pointSeconds.count == 1_200 + 5)
        try ThirdPartyReaders.verifyFIT(try scenario.synthetic.write(.fit, in: dir), expect: scenario.fitExpectation())
        try ThirdPartyReaders.verifyTCX(try scenario.synthetic.write(.tcx, in: dir), expect: scenario.tcxExpectation())
    }

    /// 2024-03-30T23:30Z to 2024-03-31T01:30Z: across midnight UTC and the EU's DST change
    /// (01:00Z). FIT and TCX times are UTC and simply continue; the local offset only moves
    /// activity.local_timestamp.
    @Test func workoutAcrossMidnightAndADSTChange() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scenario = ExportScenario(start: 1_711_841_400_000, seconds: 7_200, hr: { 120 + Double($0 % 20) },
                                      rr: { _ in [512] }, speed: { _ in 3 }, lapStarts: [0, 1_800, 5_400])
        let workout = scenario.synthetic
        let fit = dir.appendingPathComponent("dst.fit")
        try Data(try workout.export(.fit, options: ExportOptions(utcOffsetSeconds: 7_200))).write(to: fit)
        var expect = scenario.fitExpectation()
        expect["local_offset"] = 7_200
        try ThirdPartyReaders.verifyFIT(fit, expect: expect)
        try ThirdPartyReaders.verifyTCX(try workout.write(.tcx, in: dir), expect: scenario.tcxExpectation())

        let csv = String(decoding: try workout.export(.csv), as: UTF8.self).split(separator: "\n")
        #expect(csv.count == 1 + 7_200)
        #expect(csv[1_800].hasPrefix("2024-03-30T23:59:59.000Z,1799,1,0,"))
        #expect(csv[1_801].hasPrefix("2024-03-31T00:00:00.000Z,1800,2,0,"))
        #expect(csv[5_401].hasPrefix("2024-03-31T01:00:00.000Z,5400,3,0,"))
        try ThirdPartyReaders.verifyCSV(try workout.write(.csv, in: dir),
                                        expect: ["rows": 7_200, "laps": [1, 2, 3], "paused": 0, "hr_rows": 7_200])
    }

    /// Samples made the way the daemon makes them: simulated sensors' real GATT packets
    /// through `DeviceIngest` (a chest strap with contact losses and a speed/cadence sensor),
    /// a 15-minute ride with three laps and a pause.
    @Test func gattDerivedRide() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let t0: Millis = 1_717_236_000_000          // 2024-06-01T10:00:00Z
        let samples = GATTDerived.samples(kinds: [.hr, .csc], seed: 11, seconds: 900, t0: t0)
        let s = { (i: Int) in t0 + Millis(i) * 1000 }
        var workout = Workout(activityType: "cycling", locationType: .outdoor, start: t0, end: s(900),
                              deviceIDs: Array(Set(samples.map(\.device.id))).sorted(),
                              events: [.init(kind: "pause", time: s(400)), .init(kind: "resume", time: s(460))],
                              laps: [.init(start: t0, end: s(300)), .init(start: s(300), end: s(600)), .init(start: s(600), end: s(900))])
        workout.uuid = UUID()
        let paused = { (i: Int) in (400..<460).contains(i) }

        // Expected, from the samples by the documented rules.
        var hrBySecond: [Int: [Double]] = [:], speedBySecond: [Int: [Double]] = [:]
        var moved = Set<Int>()
        for x in samples {
            let i = Int(x.start.floorDiv(1000) - t0 / 1000)
            switch x.type {
            case .heartRate where x.value > 0: hrBySecond[i, default: []].append(x.value)
            case .cyclingSpeed: speedBySecond[i, default: []].append(x.value)
            case .cyclingCadence where speedBySecond[i] == nil: speedBySecond[i] = []
            case .cyclingDistance:
                for k in Int(x.start.floorDiv(1000) - t0 / 1000)...Int((x.end - 1).floorDiv(1000) - t0 / 1000)
                where max(x.start, s(k)) < min(x.end, s(k + 1)) { moved.insert(k) }
            default: break
            }
        }
        let hr = Expected.perSecond(hrBySecond, seconds: 900)
        let speed = Expected.perSecond(speedBySecond.filter { !$0.value.isEmpty }, seconds: 900)
        let cadenceSeconds = Set(samples.filter { $0.type == .cyclingCadence }.map { Int($0.start.floorDiv(1000) - t0 / 1000) })
        let cadence = Expected.perSecond(Dictionary(uniqueKeysWithValues: cadenceSeconds.map { ($0, [0.0]) }), seconds: 900)
        let points = (0..<900).filter { !paused($0) && (hr[$0] != nil || speed[$0] != nil || cadence[$0] != nil || moved.contains($0)) }
        let unix0 = Expected.unixSeconds(t0)
        var rr: [Int] = []
        for x in samples where x.type == .heartbeatSeries {
            var previous = 0.0
            let raw = x.metadata["adjusted"] == "true" ? x.metadata["rr"]?.split(separator: ",").compactMap { Double($0) } : nil
            for (k, offset) in x.beats.enumerated() {
                let ms = raw.map { $0[k] * 1000 / 1024 } ?? (offset - previous) * 1000
                previous = offset
                let i = Int((x.start + Millis((offset * 1000).rounded())).floorDiv(1000) - t0 / 1000)
                if (0..<900).contains(i) && !paused(i) { rr.append(Int(ms.rounded())) }
            }
        }
        func lapHR(_ r: Range<Int>) -> [String: Any] {
            let v = r.filter { !paused($0) }.compactMap { hr[$0] }
            return ["avg_hr": Int((v.reduce(0, +) / Double(v.count)).rounded()), "max_hr": Int(v.max()!.rounded()),
                    "timer": Double(r.filter { !paused($0) }.count)]
        }
        let expect: [String: Any] = [
            "records": points.map { [unix0 + $0, hr[$0].map { Int($0.rounded()) } as Any? ?? NSNull()] },
            "laps": [lapHR(0..<300), lapHR(300..<600), lapHR(600..<900)],
            "session": ["sport": "cycling", "sub_sport": "generic", "num_laps": 3, "elapsed": 900.0, "timer": 840.0],
            "hrv_ms": rr, "sensors": 2,
        ]
        #expect(rr.count > 800 && hr.compactMap { $0 }.count > 800)
        try ThirdPartyReaders.verifyFIT(try SyntheticWorkout(workout: workout, samples: samples).write(.fit, in: dir), expect: expect)
        let tcx = try SyntheticWorkout(workout: workout, samples: samples).write(.tcx, in: dir)
        try ThirdPartyReaders.verifyTCX(tcx, expect: ["sport": "Biking", "trackpoint_count": points.count,
                                                  "hr_max": Int(points.compactMap { hr[$0] }.max()!.rounded())])
        try ThirdPartyReaders.verifyCSV(try SyntheticWorkout(workout: workout, samples: samples).write(.csv, in: dir),
                                        expect: ["rows": 900, "laps": [1, 2, 3], "paused": 60, "hr_rows": hr.compactMap { $0 }.count])
    }
}

/// Samples from simulated sensors' GATT packets through `DeviceIngest`, as the daemon makes them.
enum GATTDerived {
    static func samples(kinds: [Simulation.Kind], seed: UInt64, seconds: Double, t0: Millis) -> [Sample] {
        var simulation = Simulation(kinds: kinds, seed: seed, dropouts: .none)
        var ingests: [String: DeviceIngest] = [:]
        var samples: [Sample] = []
        for (time, identity, event) in simulation.advance(to: seconds) {
            let wall = t0 + Millis((time * 1000).rounded())
            if ingests[identity.address] == nil {
                ingests[identity.address] = DeviceIngest(device: Device(id: identity.address, address: identity.address,
                                                                        name: identity.name))
            }
            switch event {
            case let .notification(characteristic, value), let .read(characteristic, value):
                samples += ingests[identity.address]!.ingest(characteristic, value, wall: wall, monotonic: time).samples
            case .connected:
                ingests[identity.address]!.linkRestarted()
            case .disconnected:
                break
            }
        }
        // The store's order: by start, then by when they were added.
        return samples.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
    }
}
