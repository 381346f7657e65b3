import Foundation
import StrapModel
import Testing
import ThirdPartyReaders

/// Power figures (issue 35 item 3): normalized power, IF, TSS, work, Coggan zones and the
/// mean-maximal curve, checked in closed form and against GoldenCheetah's sweatpy.
@Suite struct PowerAnalysisTests {
    /// An hour of riding an indoor cyclist would do: warm-up ramp, 5 × (3 min at 120 % FTP,
    /// 2 min easy), a steady block, a sprint, coasting (0 W), and what meters send that is not
    /// power (a negative reading, a NaN), which counts as 0 W.
    static func ride(ftp: Double) -> [Double] {
        var w: [Double] = []
        for s in 0..<600 { w.append(100 + Double(s) / 600 * 0.7 * ftp) }
        for _ in 0..<5 {
            for s in 0..<180 { w.append(1.2 * ftp + Double(s % 7) - 3) }
            for _ in 0..<120 { w.append(0.5 * ftp) }
        }
        for s in 0..<1_200 { w.append(0.88 * ftp + 10 * sin(Double(s) / 30)) }
        for s in 0..<12 { w.append(900 - Double(s) * 20) }
        w += [Double](repeating: 0, count: 90)
        w += [-12, .nan, .infinity]
        for s in 0..<(3_600 - w.count) { w.append(0.6 * ftp + Double(s % 11)) }
        return w
    }

    @Test func normalizedPowerOfASteadyHourInClosedForm() throws {
        let p = 250.0
        let a = PowerAnalysis(watts: [Double](repeating: p, count: 3_600))
        // The window starts with 29 zeros: second k (1…29) averages k/30 of P.
        var fourth = Double(3_600 - 29) * pow(p, 4)
        for k in 1...29 { fourth += pow(Double(k) / 30 * p, 4) }
        let expected = pow(fourth / 3_600, 0.25)
        #expect(abs(a.normalizedPower! - expected) < 1e-9)
        #expect(a.averagePower == p && a.maximumPower == p && abs(a.work - 900) < 1e-9)
        let zones = try PowerZones(functionalThresholdPower: p)
        // An hour just under FTP scores just under 100.
        let tss = try #require(a.trainingStressScore(zones))
        #expect(tss < 100 && tss > 99)
        #expect(abs(tss - pow(expected / p, 2) * 100) < 1e-9, "TSS = hours × IF² × 100")
        #expect(a.meanMaximalPower()[3_600] == p && a.meanMaximalPower()[5] == p)
    }

    @Test func zonesCountABoundInTheZoneBelowAndRefuseAnImpossibleFTP() throws {
        let z = try PowerZones(functionalThresholdPower: 200)
        #expect(z.upperBounds.map { $0.rounded() } == [110, 150, 180, 210, 240, 300])
        #expect([0, 110, 110.01, 150, 181, 210, 240, 300, 300.5, 2_000].map(z.zone(of:)) == [1, 1, 2, 2, 4, 4, 5, 6, 7, 7])
        for bad in [0, -5, .nan, .infinity, 2_600.0] {
            #expect(throws: StrapError.self) { try PowerZones(functionalThresholdPower: bad) }
        }
        let empty = PowerAnalysis(watts: [])
        #expect(empty.normalizedPower == nil && empty.trainingStressScore(z) == nil && empty.meanMaximalPower().isEmpty)
        #expect(PowerAnalysis(watts: [.nan, -3, 100]).watts == [0, 0, 100])
    }

    @Test func everyFigureAgreesWithGoldenCheetahsSweatpy() throws {
        let ftp = 265.0
        let a = PowerAnalysis(watts: Self.ride(ftp: ftp))
        let zones = try PowerZones(functionalThresholdPower: ftp)
        let curve = a.meanMaximalPower()
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("power.json")
        try ThirdPartyReaders.writeJSON([
            "watts": a.watts, "ftp": ftp,
            "ours": [
                "average": a.averagePower!, "maximum": a.maximumPower!, "np": a.normalizedPower!,
                "if": a.intensityFactor(zones)!, "tss": a.trainingStressScore(zones)!, "work_kj": a.work,
                "zones": a.timeInZones(zones),
                "curve": Dictionary(uniqueKeysWithValues: curve.map { (String($0.key), $0.value) }),
            ] as [String: Any],
        ], to: input)
        let reference = try ThirdPartyReaders.check("check_power.py", [input.path])
        #expect((reference["np"] as? Double).map { $0 > 0 } == true)
        #expect(a.timeInZones(zones).reduce(0, +) == 3_600 && a.timeInZones(zones).allSatisfy { $0 > 0 }, "every zone visited")
        #expect(curve.keys.sorted() == PowerAnalysis.curveDurations)
    }
}
