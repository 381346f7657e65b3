import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// Keytel et al. 2005 as used: hand-computed values, the clamp at 0, per-sample integration
/// with the 5 s gap cap, and the reason when the profile lacks a field.
@Suite struct KeytelTests {
    static let day = CalendarDate(year: 2026, month: 1, day: 1)!
    static func profile(_ sex: BiologicalSex, weight: Double, vo2: Double? = nil) -> AthleteProfile {
        // Born 1990-06-15: 35 on 2026-01-01.
        AthleteProfile(dateOfBirth: CalendarDate(year: 1990, month: 6, day: 15), biologicalSex: sex, weight: weight, vo2Max: vo2)
    }

    @Test func maleWithoutVO2max() throws {
        // −55.0969 + 0.6309·150 + 0.1988·80 + 0.2017·35
        //   = −55.0969 + 94.635 + 15.904 + 7.0595 = 62.5016 kJ/min; / 4.184 = 14.93824 kcal/min
        let k = try KeytelEnergy(profile: Self.profile(.male, weight: 80), on: Self.day)
        #expect(k.variant == .keytel)
        #expect(k.kilocaloriesPerMinute(heartRate: 150).isClose(to: 14.93824, within: 1e-5))
    }

    @Test func femaleWithoutVO2max() throws {
        // −20.4022 + 0.4472·150 − 0.1263·60 + 0.074·35
        //   = −20.4022 + 67.08 − 7.578 + 2.59 = 41.6898 kJ/min; / 4.184 = 9.96410 kcal/min
        let k = try KeytelEnergy(profile: Self.profile(.female, weight: 60), on: Self.day)
        #expect(k.kilocaloriesPerMinute(heartRate: 150).isClose(to: 9.96410, within: 1e-5))
    }

    @Test func maleWithVO2max() throws {
        // −59.3954 + (−36.3781 + 0.271·35 + 0.394·80 + 0.404·50 + 0.634·150)
        //   = −59.3954 + (−36.3781 + 9.485 + 31.52 + 20.2 + 95.1) = 60.5315 kJ/min → 14.46738
        let k = try KeytelEnergy(profile: Self.profile(.male, weight: 80, vo2: 50), on: Self.day)
        #expect(k.variant == .keytelVO2max)
        #expect(k.kilocaloriesPerMinute(heartRate: 150).isClose(to: 14.46738, within: 1e-5))
    }

    @Test func femaleWithVO2max() throws {
        // −59.3954 + 0.274·35 + 0.103·60 + 0.380·45 + 0.450·150
        //   = −59.3954 + 9.59 + 6.18 + 17.1 + 67.5 = 40.9746 kJ/min → 9.79316 kcal/min
        let k = try KeytelEnergy(profile: Self.profile(.female, weight: 60, vo2: 45), on: Self.day)
        #expect(k.kilocaloriesPerMinute(heartRate: 150).isClose(to: 9.79316, within: 1e-5))
    }

    @Test func clampedAtZeroAtLowHeartRate() throws {
        // Male 80 kg, 35 y at 50 bpm: −55.0969 + 31.545 + 15.904 + 7.0595 = −0.5884 kJ/min → 0
        let k = try KeytelEnergy(profile: Self.profile(.male, weight: 80), on: Self.day)
        #expect(k.kilocaloriesPerMinute(heartRate: 50) == 0)
        #expect(k.kilocaloriesPerMinute(heartRate: 60) > 0)  // 5.7206 kJ/min
    }

    @Test func missingFieldsAreTheReason() {
        #expect(throws: StrapError.noData("the Keytel estimate needs biologicalSex, weight, dateOfBirth in the profile")) {
            try KeytelEnergy(profile: nil, on: Self.day)
        }
        #expect(throws: StrapError.noData("the Keytel estimate needs weight in the profile")) {
            try KeytelEnergy(profile: AthleteProfile(dateOfBirth: CalendarDate(year: 1990, month: 1, day: 1), biologicalSex: .male),
                             on: Self.day)
        }
        #expect(throws: StrapError.noData("the Keytel estimate has coefficients for biologicalSex male and female only")) {
            try KeytelEnergy(profile: Self.profile(.other, weight: 70), on: Self.day)
        }
    }

    static func builder(_ profile: AthleteProfile?) -> LiveWorkoutBuilder {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: ["dev-h10"], profile: profile))
        return b
    }

    @Test func integratedPerSampleOverTenMinutes() {
        var b = Self.builder(W.male35)
        // Samples at 150 bpm, one a second: the one stamped at the start does not count, each
        // of the 600 after it stands for one second = 10 min × 14.93824 kcal/min = 149.3824 kcal.
        for s in W.steadyHR(150, from: W.t0, to: W.t0 + 600_000) { b.add(s) }
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 600_000)
        #expect(st.activeEnergySource == "keytel")
        #expect(st.totals.activeEnergy!.isClose(to: 149.3824, within: 1e-3))
    }

    @Test func dropoutGapCountsAtMostFiveSeconds() {
        var b = Self.builder(W.male35)
        // Samples at 0 (the start: not counted), 1, 2 s, a 60 s dropout, then 62 s:
        // spans 1 + 1 + min(60, 5) = 7 s.
        for t in [0, 1000, 2000, 62_000] as [Millis] { b.add(W.hr(150, W.t0 + t)) }
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 62_000)
        #expect(st.totals.activeEnergy!.isClose(to: 7.0 / 60 * 14.93824, within: 1e-5))
        #expect(st.totals.timeInZones!.reduce(0, +) == 7)
        #expect(st.totals.elapsedTime == 62, "a dropout is a gap, not an end")
    }

    @Test func noReadingAndNoContactSamplesAreIgnored() {
        var b = Self.builder(W.male35)
        b.add(W.hr(150, W.t0 + 500))
        let counted1 = b.add(W.hr(0, W.t0 + 1000, metadata: ["quality": "noReading"]))
        #expect(!counted1)
        let counted2 = b.add(W.hr(90, W.t0 + 2000, metadata: ["contact": "notDetected"]))
        #expect(!counted2)
        b.add(W.hr(150, W.t0 + 3000))
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 3000)
        #expect(st.totals.heartRateSamples == 2)
        #expect(st.totals.heartRateMinimum == 150)
        #expect(st.totals.activeEnergy!.isClose(to: 3.0 / 60 * 14.93824, within: 1e-5), "0 → 0.5 s, then 0.5 → 3 s")
    }

    @Test func absentWithReasonWithoutProfile() throws {
        var b = Self.builder(nil)
        for s in W.steadyHR(150, from: W.t0, to: W.t0 + 10_000) { b.add(s) }
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 10_000)
        #expect(st.totals.activeEnergy == nil)
        #expect(st.activeEnergySource == nil)
        #expect(st.activeEnergyReason == "no energy expended from the heart-rate sensor, and the Keytel estimate needs "
            + "biologicalSex, weight, dateOfBirth in the profile")
        let json = String(decoding: try JSONEncoder().encode(st), as: UTF8.self)
        #expect(!json.contains("\"activeEnergy\":"), "absent, not 0")
    }
}
