import Foundation
import Testing
import ThirdPartyReaders
import StrapModel
@testable import StrapExport

/// The terminal pictures against golden files (Tests/Fixtures/export/chart-*.txt); regenerate
/// a golden file only after looking at the new picture: STRAPD_WRITE_GOLDEN=1 swift test --filter WorkoutChartTests.
@Suite struct WorkoutChartTests {
    static let t0: Millis = 1_700_000_000_000

    /// Ten minutes: a slow wave with a ripple, no data from 4:10 to 4:40, a pause from 5:00
    /// to 6:00, laps at 0:00, 3:20 and 7:00.
    static var points: [(Millis, Double)] {
        (0..<600).compactMap { i in
            (250..<280).contains(i) ? nil : (t0 + Millis(i) * 1000, 120 + 35 * sin(Double(i) / 60) + Double(i % 7))
        }
    }

    static func picture(_ style: ChartStyle) throws -> String {
        let chart = WorkoutChart(width: 60, height: 8, style: style)
        let curve = try chart.heartRate(points, start: t0, end: t0 + 600_000, pauses: [t0 + 300_000 ..< t0 + 360_000],
                                        lapStarts: [t0, t0 + 200_000, t0 + 420_000])
        let zones = try chart.zones(HeartRateZones(bpm: [95, 114, 133, 152, 171, 190]), seconds: [95, 1260.4, 600, 30, 0, 12])
        return curve + "\n" + zones
    }

    @Test(arguments: ChartStyle.allCases)
    func matchesTheGoldenPicture(style: ChartStyle) throws {
        let url = ThirdPartyReaders.fixtures.appendingPathComponent("chart-\(style.rawValue).txt")
        let picture = try Self.picture(style)
        if ProcessInfo.processInfo.environment["STRAPD_WRITE_GOLDEN"] == "1" {
            try picture.write(to: url, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(picture == golden)
        if style == .ascii { #expect(picture.unicodeScalars.allSatisfy { $0.isASCII }) }
        // Every line fits the width (one column per character: braille, box and block glyphs).
        #expect(picture.split(separator: "\n").allSatisfy { $0.count <= 60 })
    }

    @Test func aWorkoutsCurveMarksItsLapsAndPauses() throws {
        let scenario = ExportScenario(start: 1_704_103_200_000, seconds: 600, hr: { 100 + Double($0 / 10) },
                                      pauses: [300..<360], lapStarts: [0, 200, 400])
        let w = scenario.synthetic
        let text = try WorkoutChart(width: 45, height: 6, style: .ascii).heartRate(workout: w.workout, samples: w.samples)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "heart rate (bpm)  min 100  max 159")
        // 40 columns of 15 s: laps at columns 13 and 26, the pause over columns 20-23.
        #expect(lines[7] == "    +-------------+------------+-------------")
        #expect(lines[8] == "     1            2      ====  3")
        #expect(lines[9].hasPrefix("     0:00"))
    }

    @Test func badInputIsATypedError() throws {
        #expect(throws: StrapError.self) { _ = try HeartRateZones(bpm: [100]) }
        #expect(throws: StrapError.self) { _ = try HeartRateZones(bpm: [100, 90, 110, 120, 130, 140]) }
        let zones = try HeartRateZones(bpm: [95, 114, 133, 152, 171, 190])
        #expect(throws: ChartError.self) { _ = try WorkoutChart().zones(zones, seconds: [1, 2]) }
        #expect(throws: ChartError.self) { _ = try WorkoutChart().zones(zones, seconds: [1, 2, 3, 4, 5, -6]) }
        #expect(throws: ChartError.self) { _ = try WorkoutChart(width: 8).heartRate(Self.points, start: Self.t0, end: Self.t0 + 1) }
        #expect(try WorkoutChart().heartRate([(Millis, Double)](), start: Self.t0, end: Self.t0 + 1_000) == "heart rate: no data\n")
    }
}
