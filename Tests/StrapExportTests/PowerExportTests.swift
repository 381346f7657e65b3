import Foundation
import Testing
import ThirdPartyReaders
import StrapModel
@testable import StrapExport

/// Power in the exports and the saved workout's power figures (docs/export.md, docs/workouts.md
/// "Power figures"): a ride with a power meter read back by Garmin's FIT SDK, fitdecode,
/// tcxreader and Python's csv; every figure against `PowerAnalysis` over a per-second series
/// this test builds by the documented resampling rules, not by the timeline's code.
@Suite struct PowerExportTests {
    static let meter = Device(id: "AA:00:00:00:00:07", address: "AA:00:00:00:00:07", name: "Crank",
                              manufacturer: "4iiii Innovations", model: "Precision", serial: "77", firmware: "2.1")
    static let ftp = 250.0
    /// 20 minutes of cycling, two laps, a minute's pause, a 20 s dropout of the power meter
    /// (held 5 s, then no power: those seconds count 0 W and their records carry none).
    static let scenario = ExportScenario(start: 1_704_103_200_000, seconds: 1_200, hr: { 120 + Double($0 % 20) },
                                         pauses: [600..<660], lapStarts: [0, 400], activity: "cycling")
    static let dropout = 300..<320
    static func watts(_ i: Int) -> Double? { dropout.contains(i) ? nil : Double(100 + (i * 37) % 300) }
    static func leftShare(_ i: Int) -> Double { 45 + Double(i % 10) }

    /// The scenario's workout with a power meter's power and pedal balance every second, and
    /// the FTP the engine would have put in its summary.
    static var ride: SyntheticWorkout {
        var w = scenario.synthetic
        let t0 = scenario.start
        for i in 0..<scenario.seconds {
            guard let p = watts(i) else { continue }
            let t = t0 + Millis(i) * 1000 + 500
            w.samples.append(Sample(type: .cyclingPower, value: p, start: t, device: meter))
            w.samples.append(Sample(type: .cyclingPowerBalance, value: leftShare(i), start: t, device: meter))
        }
        w.samples.sort { $0.start < $1.start }
        w.workout.deviceIDs.append(meter.id)
        w.workout.summary["functionalThresholdPower"] = ftp
        return w
    }

    /// Each second's power by docs/export.md "Resampling" (held 5 s), nil when none.
    static var perSecond: [Double?] {
        Expected.perSecond(Dictionary(uniqueKeysWithValues: (0..<scenario.seconds).compactMap { i in watts(i).map { (i, [$0]) } }),
                           seconds: scenario.seconds)
    }

    /// The timer-running seconds of `range` as PowerAnalysis takes them: no power is 0 W.
    static func series(_ range: Range<Int>) -> [Double] {
        let p = perSecond
        return range.filter { !scenario.paused($0) }.map { p[$0] ?? 0 }
    }

    static let zones = try! PowerZones(functionalThresholdPower: ftp)

    @Test func savedFiguresAreThoseOfPowerAnalysisPerWorkoutAndLap() throws {
        let r = Self.ride
        let figures = try #require(try WorkoutPower.figures(r.workout, samples: r.samples))
        for (range, got) in [(0..<1_200, figures.session), (0..<400, figures.laps[0]!), (400..<1_200, figures.laps[1]!)] {
            let want = PowerAnalysis(watts: Self.series(range))
            #expect(got.average == want.averagePower && got.maximum == want.maximumPower)
            #expect(got.normalized == want.normalizedPower && got.work == want.work)
            #expect(got.intensityFactor == want.intensityFactor(Self.zones))
            #expect(got.trainingStressScore == want.trainingStressScore(Self.zones))
            #expect(got.timeInZones == want.timeInZones(Self.zones))
            #expect(got.meanMaximal == want.meanMaximalPower() && got.meanMaximal[300] != nil && got.meanMaximal[3_600] == nil)
        }
        // The export's lap and session power are the same figures.
        let export = try ExportStream(format: .fit, workout: r.workout, samples: r.source)
        #expect(export.summary.session.power == figures.session && export.summary.laps.map(\.power) == figures.laps)

        var saved = r.workout
        WorkoutPower.add(figures, to: &saved)
        #expect(saved.summary["powerNormalized"] == figures.session.normalized)
        #expect(saved.summary["powerBest1200s"] == figures.session.meanMaximal[1_200])
        #expect(saved.summary["timeInPowerZone7"] == figures.session.timeInZones?[6])
        #expect(saved.laps[1].summary["powerTrainingStressScore"] == figures.laps[1]?.trainingStressScore)
    }

    @Test func withoutAnFTPTheFTPFiguresAreLeftOutAndWithoutPowerThereAreNone() throws {
        var r = Self.ride
        r.workout.summary["functionalThresholdPower"] = nil
        let figures = try #require(try WorkoutPower.figures(r.workout, samples: r.samples))
        #expect(figures.session.intensityFactor == nil && figures.session.timeInZones == nil)
        #expect(figures.session.summaryFigures["powerTrainingStressScore"] == nil && figures.session.summaryFigures["powerAverage"] != nil)
        #expect(try WorkoutPower.figures(Self.scenario.synthetic.workout, samples: Self.scenario.synthetic.samples) == nil)
    }

    @Test func fitRecordsLapsAndSessionCarryPowerForGarminsSDKAndFitdecode() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try Self.ride.write(.fit, in: dir)
        let s = Self.scenario
        var expect = s.fitExpectation()
        let p = Self.perSecond
        var accumulated = 0.0
        var records: [[Any]] = []
        for i in 0..<s.seconds where !s.paused(i) {
            accumulated += p[i] ?? 0
            guard s.pointSeconds.contains(i) else { continue }
            let balance = p[i] == nil ? nil : 0x80 | Int(100 - Self.leftShare(Self.lastPowerSecond(i)!))
            records.append([s.unix0 + i, p[i].map { Int($0.rounded()) } as Any? ?? NSNull(),
                            p[i] == nil ? NSNull() : Int(accumulated.rounded()), balance as Any? ?? NSNull()])
        }
        expect["record_power"] = records
        func power(_ range: Range<Int>, session: Bool) -> [String: Any] {
            let a = PowerAnalysis(watts: Self.series(range))
            var out: [String: Any] = ["avg_power": Int(a.averagePower!.rounded()), "max_power": Int(a.maximumPower!.rounded()),
                                      "np": Int(a.normalizedPower!.rounded()), "work": Int((a.work * 1000).rounded())]
            if session {
                out["tss"] = a.trainingStressScore(Self.zones)!
                out["if"] = a.intensityFactor(Self.zones)!
                out["ftp"] = Int(Self.ftp)
                out["power_zones"] = a.timeInZones(Self.zones)
            }
            return out
        }
        var session = expect["session"] as! [String: Any]
        session.merge(power(0..<1_200, session: true)) { $1 }
        expect["session"] = session
        var laps = expect["laps"] as! [[String: Any]]
        laps[0].merge(power(0..<400, session: false)) { $1 }
        laps[1].merge(power(400..<1_200, session: false)) { $1 }
        expect["laps"] = laps
        expect["sensors"] = 2
        let read = try ThirdPartyReaders.verifyFIT(file, expect: expect)
        #expect(read["records"] as? Int == s.pointSeconds.count)
    }

    /// The second whose balance sample a held second repeats (the hold carries the last value).
    static func lastPowerSecond(_ i: Int) -> Int? {
        (max(0, i - 5)...i).reversed().first { watts($0) != nil }
    }

    @Test func tcxTrackpointsCarryWattsAndLapsTheirAverageAndMaximum() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let s = Self.scenario
        var expect = s.tcxExpectation()
        let p = Self.perSecond
        expect["watts"] = s.pointSeconds.map { p[$0].map { Int($0.rounded()) } as Any? ?? NSNull() }
        expect["lap_watts"] = [0..<400, 400..<1_200].map { range -> [Int] in
            let a = PowerAnalysis(watts: Self.series(range))
            return [Int(a.averagePower!.rounded()), Int(a.maximumPower!.rounded())]
        }
        try ThirdPartyReaders.verifyTCX(try Self.ride.write(.tcx, in: dir), expect: expect)
    }

    @Test func csvHasThePowerAndTheLeftShare() throws {
        let rows = String(decoding: try Self.ride.export(.csv), as: UTF8.self)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let power = CSVEncoder.columns.firstIndex(of: "cycling_power_w")!, left = CSVEncoder.columns.firstIndex(of: "power_balance_left_pct")!
        #expect(rows[7][power] == "\(Int(Self.watts(7)!))" && rows[7][left] == "52")
        #expect(rows[304][power] == "\(Int(Self.watts(299)!))" && rows[305][power] == "")   // held 5 s, then none
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try ThirdPartyReaders.verifyCSV(try Self.ride.write(.csv, in: dir), expect: ["rows": 1_200, "laps": [1, 2]])
    }

    /// FIT's left_right_balance: bit 7 marks the right pedal's share; a left share is turned
    /// into the right one, a share of an unknown pedal goes unmarked.
    @Test func balanceIsWrittenAsTheRightShareOrUnmarked() {
        var s = ExportSecond()
        #expect(FITEncoder.balance(s) == 0xFF)
        s.values[Channel.powerBalanceUnknown.rawValue] = 48.4
        #expect(FITEncoder.balance(s) == 48)
        s.values[Channel.powerBalanceLeft.rawValue] = 47
        #expect(FITEncoder.balance(s) == 0x80 | 53)
    }
}
