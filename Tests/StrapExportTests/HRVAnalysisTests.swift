import Foundation
import Testing
import ThirdPartyReaders
import StrapModel
@testable import StrapExport

/// HRV: the artifact filter and the time-domain figures, by hand and against hrv-analysis.
@Suite struct HRVAnalysisTests {
    func rr(_ ms: Double, at i: Int, breakBefore: Bool = false) -> RRInterval {
        RRInterval(time: 1_700_000_000_000 + Millis(i) * 1000, milliseconds: ms, breakBefore: breakBefore)
    }

    @Test func handComputedSeries() {
        var a = HRVAnalysis()
        let input: [Double] = [800, 810, 790, 1200, 805, 150, 800, 860]
        let classes = input.enumerated().map { a.add(rr($0.element, at: $0.offset, breakBefore: $0.offset == 0)) }
        #expect(classes == [.normal, .normal, .normal, .ectopic, .normal, .outOfRange, .normal, .normal])
        let r = a.report
        #expect(r.intervals == 8 && r.normal == 6 && r.excludedEctopic == 1 && r.excludedOutOfRange == 1)
        #expect(r.runs == 1 && r.slots == 8)
        // NN 800 810 790 805 800 860; pairs only where adjacent: 10, -20, 60.
        #expect(r.successiveDifferences == 3 && r.nn50 == 1)
        #expect(abs(r.meanNN! - 4865.0 / 6) < 1e-9)
        #expect(abs(r.sdnn! - 24.983327774070986) < 1e-9)            // ddof = 1
        #expect(abs(r.rmssd! - (4100.0 / 3).squareRoot()) < 1e-9)
        #expect(abs(r.pnn50! - 100.0 / 7) < 1e-9)                     // NN50 / (slots - 1)
    }

    @Test func breaksAndPausesAreNeverPaired() {
        var a = HRVAnalysis()
        a.add(rr(800, at: 0))
        a.add(rr(900, at: 1))                                         // +100: counted
        a.add(rr(820, at: 2, breakBefore: true))                      // a gap: not paired with 900
        a.add(rr(830, at: 3))                                         // +10
        #expect(a.add(rr(700, at: 4), paused: true) == .paused)
        a.add(rr(840, at: 5))                                         // after a pause: not paired with 830
        a.add(rr(845, at: 6))                                         // +5
        let r = a.report
        #expect(r.runs == 3 && r.excludedPaused == 1 && r.normal == 6)
        #expect(r.successiveDifferences == 3 && r.nn50 == 1)
        #expect(r.slots == 6 + 2)                                     // six intervals, two run breaks
        #expect(abs(r.rmssd! - ((10_000.0 + 100 + 25) / 3).squareRoot()) < 1e-9)
    }

    @Test func aWrongReferenceIsReseededAfterFiveRejections() {
        var a = HRVAnalysis()
        let classes = [500, 1000, 1000, 1000, 1000, 1000, 1000, 1010].enumerated().map { a.add(rr(Double($0.element), at: $0.offset)) }
        #expect(classes == [.normal, .ectopic, .ectopic, .ectopic, .ectopic, .ectopic, .normal, .normal])
        #expect(a.report.successiveDifferences == 1)
    }

    @Test func emptyAndTinyInputsGiveNoFigures() {
        #expect(HRVAnalysis().report.meanNN == nil)
        var one = HRVAnalysis()
        one.add(rr(800, at: 0))
        #expect(one.report.meanNN == 800 && one.report.sdnn == nil && one.report.rmssd == nil && one.report.pnn50 == nil)
    }

    /// A workout's paused beats are excluded and counted, its other devices ignored.
    @Test func workoutAnalysisExcludesPauses() {
        let scenario = ExportScenario(start: 1_704_103_200_000, seconds: 120, hr: { _ in 100 }, rr: { _ in [800] },
                                      pauses: [30..<50])
        let w = scenario.synthetic
        let r = HRVAnalysis.analyze(workout: w.workout, samples: w.samples)
        #expect(r.excludedPaused == 20)
        #expect(r.normal == 100 && r.runs == 2 && r.deviceID == SyntheticWorkout.strap.id)
        #expect(r.rmssd == 0 && r.meanNN == 800 * 1000 / 1024)
    }

    /// A real RR recording with artifacts (Tests/Fixtures/export/real_rri.txt) through the
    /// ingest's sample shape: hrv-analysis's figures on the same NN series agree within 0.1 ms,
    /// and its physiological-range filter rejects the same intervals.
    @Test func realRecordingAgreesWithHRVAnalysis() throws {
        let text = try String(contentsOf: ThirdPartyReaders.fixtures.appendingPathComponent("real_rri.txt"), encoding: .utf8)
        let recorded = text.split(whereSeparator: \.isNewline).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(recorded.count == 772)
        let samples = Self.heartbeatSeries(recorded.map { UInt16((Double($0) * 1024 / 1000).rounded()) }, start: 1_700_000_000_000)

        let intervals = HRVAnalysis.intervals(of: samples)
        #expect(intervals.count == recorded.count)
        var analysis = HRVAnalysis()
        var series: [Any] = []
        for interval in intervals {
            if interval.breakBefore && !series.isEmpty { series.append(NSNull()) }
            series.append(analysis.add(interval) == .normal ? interval.milliseconds as Any : NSNull())
        }
        let r = analysis.report
        let range = samples.first!.start..<(samples.last!.end + 1)
        #expect(HRVAnalysis.analyze(samples: samples, range: range) == Self.withDevice(r, samples.first!.device.id))
        #expect(r.excludedOutOfRange == 1 && r.excludedEctopic >= 10 && r.normal > 700)
        #expect(series.count == r.slots)

        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("hrv.json")
        try ThirdPartyReaders.writeJSON([
            "series": series, "raw": intervals.map(\.milliseconds),
            "ours": ["mean_nni": r.meanNN!, "sdnn": r.sdnn!, "rmssd": r.rmssd!, "nni_50": r.nn50, "pnni_50": r.pnn50!,
                     "out_of_range": r.excludedOutOfRange],
        ], to: input)
        let reference = try ThirdPartyReaders.check("check_hrv.py", [input.path])
        #expect(reference["sdnn"] != nil)
    }

    /// RR values (1/1024 s) as the ingest stores them: a series about every second, starting
    /// at the beat before its first interval.
    static func heartbeatSeries(_ raw: [UInt16], start: Millis) -> [Sample] {
        let device = Device(id: "RR", address: "RR", name: "RR")
        var samples: [Sample] = [], seriesStart = 0.0, offsets: [Double] = [], sum = 0
        for value in raw {
            sum += Int(value)
            offsets.append(Double(sum) / 1024)
            if sum >= 1024 {
                let ms = { (s: Double) in start + Millis((s * 1000).rounded()) }
                samples.append(Sample(type: .heartbeatSeries, value: Double(offsets.count), start: ms(seriesStart),
                                      end: ms(seriesStart + Double(sum) / 1024), device: device, beats: offsets))
                seriesStart += Double(sum) / 1024
                offsets = []
                sum = 0
            }
        }
        if !offsets.isEmpty {
            samples.append(Sample(type: .heartbeatSeries, value: Double(offsets.count), start: start + Millis((seriesStart * 1000).rounded()),
                                  device: device, beats: offsets))
        }
        return samples
    }

    static func withDevice(_ r: HRVReport, _ id: String) -> HRVReport {
        var r = r
        r.deviceID = id
        return r
    }
}
