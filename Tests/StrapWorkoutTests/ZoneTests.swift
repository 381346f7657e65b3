import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// Zone schemes in bpm, classification, and time in zone with pauses and laps.
@Suite struct ZoneTests {
    static let day = CalendarDate(year: 2026, month: 1, day: 1)!
    static let dob = CalendarDate(year: 1990, month: 6, day: 15)!  // 35 on `day`

    func close(_ a: [Double], _ b: [Double]) -> Bool { a.count == b.count && zip(a, b).allSatisfy { $0.isClose(to: $1, within: 1e-9) } }

    @Test func percentOfMaximum() throws {
        let z = try HeartRateZones(profile: AthleteProfile(maximumHeartRate: 190), on: Self.day)
        #expect(z.isDefaultScheme)
        #expect(close(z.bpm, [95, 114, 133, 152, 171, 190]))
        #expect(z.zone(of: 94.9) == 0)
        #expect(z.zone(of: 95) == 1)
        #expect(z.zone(of: 151.9) == 3)
        #expect(z.zone(of: 152) == 4)
        #expect(z.zone(of: 205) == 5, "zone 5 is open upwards")
    }

    @Test func estimatedMaximumIsSaidToBeEstimated() throws {
        // Tanaka: 208 − 0.7 × 35 = 183.5
        let z = try HeartRateZones(profile: AthleteProfile(dateOfBirth: Self.dob), on: Self.day)
        #expect(z.maximumHeartRate == MaximumHeartRate(value: 183.5, estimated: true, formula: "tanaka2001"))
        #expect(close(z.bpm, [91.75, 110.1, 128.45, 146.8, 165.15, 183.5]))
    }

    @Test func heartRateReserve() throws {
        // 50 + p × (190 − 50)
        let p = AthleteProfile(restingHeartRate: 50, maximumHeartRate: 190,
                               heartRateZones: HeartRateZoneScheme(method: .heartRateReserve))
        let z = try HeartRateZones(profile: p, on: Self.day)
        #expect(!z.isDefaultScheme)
        #expect(close(z.bpm, [120, 134, 148, 162, 176, 190]))
    }

    @Test func percentOfLactateThreshold() throws {
        // Defaults 50/68/83/94/105/120 % of 170
        let p = AthleteProfile(lactateThresholdHeartRate: 170, heartRateZones: HeartRateZoneScheme(method: .percentLTHR))
        let z = try HeartRateZones(profile: p, on: Self.day)
        #expect(close(z.bpm, [85, 115.6, 141.1, 159.8, 178.5, 204]))
        let custom = AthleteProfile(lactateThresholdHeartRate: 160,
                                    heartRateZones: HeartRateZoneScheme(method: .percentLTHR, bounds: [60, 70, 80, 90, 100, 110]))
        #expect(close(try HeartRateZones(profile: custom, on: Self.day).bpm, [96, 112, 128, 144, 160, 176]))
    }

    @Test func missingInputsAreTheReason() {
        #expect(throws: StrapError.noData("percentMaxHR zones need maximumHeartRate or dateOfBirth (to estimate it) in the profile")) {
            try HeartRateZones(profile: nil, on: Self.day)
        }
        #expect(throws: StrapError.noData("heart-rate reserve zones need restingHeartRate in the profile")) {
            try HeartRateZones(profile: AthleteProfile(maximumHeartRate: 190, heartRateZones: HeartRateZoneScheme(method: .heartRateReserve)),
                               on: Self.day)
        }
        #expect(throws: StrapError.noData("lactate-threshold zones need lactateThresholdHeartRate in the profile")) {
            try HeartRateZones(profile: AthleteProfile(maximumHeartRate: 190, heartRateZones: HeartRateZoneScheme(method: .percentLTHR)),
                               on: Self.day)
        }
    }

    @Test func timeInZoneLeavesOutPausesAndSplitsLaps() {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: ["dev-h10"], profile: AthleteProfile(maximumHeartRate: 190)))
        // 0…10 s at 100 bpm (zone 1): ten 1 s spans (the one at 0 s does not count). Paused 10…20 s: samples at 160 ignored.
        // 21…30 s at 160 (zone 4): the first spans 10 → 11 s of active time, then nine more.
        for s in W.steadyHR(100, from: W.t0, to: W.t0 + 10_000) { b.add(s) }
        b.apply(.paused(time: W.t0 + 10_000))
        for s in W.steadyHR(160, from: W.t0 + 11_000, to: W.t0 + 19_000) { let counted1 = b.add(s); #expect(!counted1) }
        b.apply(.resumed(time: W.t0 + 20_000))
        b.apply(.lap(time: W.t0 + 25_500, metadata: [:]))
        for s in W.steadyHR(160, from: W.t0 + 21_000, to: W.t0 + 30_000) { b.add(s) }
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 30_000)
        #expect(st.totals.timeInZones == [0, 10, 0, 0, 10, 0])
        #expect(st.totals.elapsedTime == 20)
        // Lap 1 ends at 25.5 s wall = 15.5 s active: zone 4 gets active 10…15.5 = 5.5 s there
        // (the 26 s sample's span 15…16 is split), lap 2 the other 4.5 s.
        #expect(st.laps[0].figures.timeInZones == [0, 10, 0, 0, 5.5, 0])
        #expect(st.laps[1].figures.timeInZones == [0, 0, 0, 0, 4.5, 0])
        #expect(st.heartRateZones?.scheme.method == .percentMaxHR)
    }

    @Test func zonesAbsentWithReason() {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: [], profile: nil))
        b.add(W.hr(120, W.t0 + 1000))
        b.add(W.hr(120, W.t0 + 2000))
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 2000)
        #expect(st.totals.timeInZones == nil)
        #expect(st.heartRateZonesReason?.contains("maximumHeartRate or dateOfBirth") == true)
        #expect(st.totals.heartRateAverage == 120)
    }
}
