import Foundation
import Testing
import StrapModel
@testable import StrapTrainer

/// The heart-rate-targeted step's controller (docs/trainer.md, "Holding a heart rate"), run
/// against a first-order model of a rider: the steady heart rate is 60 + 0.4 bpm per watt, and
/// the heart rate moves towards it with a 45 s time constant (a trained rider's order of magnitude).
@Suite struct HeartRateTargetTests {
    struct Rider {
        var heartRate: Double
        mutating func ride(_ watts: Double, seconds: Double = 1) {
            let steady = 60 + 0.4 * watts
            heartRate += (steady - heartRate) * (1 - exp(-seconds / 45))
        }
    }

    struct Run {
        var powers: [(t: Int64, watts: Double)] = []
        var heartRates: [Double] = []
        var decisions: [HeartRateTargetController.Decision] = []
    }

    static func ride(_ c: inout HeartRateTargetController, rider: inout Rider, seconds: Int, from t0: Int64 = 0,
                     readings: (Int) -> Bool = { _ in true }) -> Run {
        var run = Run()
        for s in 0..<seconds {
            let now = t0 + Int64(s) * 1000
            rider.ride(c.power)
            let out = readings(s) ? c.reading(rider.heartRate.rounded(), at: now) : c.tick(now)
            for d in out { if case .setPower(let w) = d { run.powers.append((now, w)) } }
            run.decisions += out
            run.heartRates.append(rider.heartRate)
        }
        return run
    }

    static let config = HeartRateTargetController.Configuration(range: 140...150, floor: 80, ceiling: 300)

    @Test func itBringsTheHeartRateIntoTheRangeAndKeepsItThereWithBoundedSteps() throws {
        var c = try HeartRateTargetController(Self.config, start: 100)
        var rider = Rider(heartRate: 100)
        let run = Self.ride(&c, rider: &rider, seconds: 40 * 60)
        var previous = (t: Int64(-10_000), watts: 100.0)
        for p in run.powers {
            #expect(abs(p.watts - previous.watts) <= 10, "at \(p.t) ms: \(previous.watts) → \(p.watts)")
            #expect(p.t - previous.t >= 10_000, "two changes within 10 s at \(p.t) ms")
            #expect((80...300).contains(p.watts))
            previous = p
        }
        // In the range within 6 minutes (the bound allows no faster than about 2), without
        // overshooting it: the trend's projection holds the power while the heart rate climbs
        // (with anticipation 0 this rider peaks at 152.4 bpm); and there from then on.
        let arrived = try #require(run.heartRates.firstIndex { $0 >= 140 })
        #expect(arrived <= 6 * 60, "in the range after \(arrived) s")
        #expect(run.heartRates.max()! <= 150.5, "peak \(run.heartRates.max()!) bpm")
        let settled = run.heartRates[(arrived + 60)...]
        #expect(settled.allSatisfy { (139...151).contains($0) }, "min \(settled.min()!) max \(settled.max()!)")
        #expect((197...228).contains(c.power), "the power that holds 140–150 bpm for this rider is 200–225 W, got \(c.power)")
    }

    @Test func aRangeAboveWhatTheCeilingAllowsPinsThePowerAtTheCeiling() throws {
        var cfg = Self.config
        cfg.ceiling = 150
        var c = try HeartRateTargetController(cfg, start: 100)
        var rider = Rider(heartRate: 90)
        let run = Self.ride(&c, rider: &rider, seconds: 20 * 60)
        #expect(run.powers.allSatisfy { $0.watts <= 150 })
        #expect(c.power == 150)
        #expect(run.heartRates.last! < 121)
    }

    @Test func aHeartRateAboveTheRangeLowersThePowerNoFasterThanTheBound() throws {
        var c = try HeartRateTargetController(Self.config, start: 300)
        var rider = Rider(heartRate: 180)
        let run = Self.ride(&c, rider: &rider, seconds: 5 * 60)
        #expect(run.powers.first?.watts == 290, "the first decision, at 10 s, is the bounded step down")
        #expect(run.powers.count >= 5 && c.power < 260)
    }

    @Test func lostHeartRateDropsToTheFloorAndControlResumesWhenItIsBack() throws {
        var c = try HeartRateTargetController(Self.config, start: 200)
        var rider = Rider(heartRate: 130)
        // Readings stop between 120 s and 180 s (the strap slipped).
        let run = Self.ride(&c, rider: &rider, seconds: 300, readings: { !(120..<180).contains($0) })
        let lostAt = run.decisions.firstIndex(of: .heartRateLost(floor: 80))
        #expect(lostAt != nil)
        #expect(run.decisions.filter { $0 == .heartRateLost(floor: 80) }.count == 1, "said once")
        #expect(run.decisions.contains(.heartRateRegained))
        // While lost: nothing set, the power at the floor. After: the first change no sooner than one interval.
        let during = run.powers.filter { (129_000..<180_000).contains($0.t) }
        #expect(during.isEmpty)
        let after = try #require(run.powers.first { $0.t >= 180_000 })
        #expect(after.t >= 190_000 && after.watts <= 90, "resumed from the floor by one bounded step: \(after)")
        #expect(!c.lost)
    }

    @Test func anInsideRangeHeartRateHoldsThePower() throws {
        var c = try HeartRateTargetController(Self.config, start: 212)
        var rider = Rider(heartRate: 145)
        let run = Self.ride(&c, rider: &rider, seconds: 10 * 60)
        #expect(run.powers.isEmpty, "\(run.powers)")
    }

    @Test func impossibleSettingsAreRefused() {
        let bad: [HeartRateTargetController.Configuration] = [
            .init(range: 20...60, floor: 80, ceiling: 300),
            .init(range: 140...141, floor: 80, ceiling: 300),
            .init(range: 140...150, floor: 300, ceiling: 300),
            .init(range: 140...150, floor: 80, ceiling: .infinity),
            .init(range: 140...150, floor: 80, ceiling: 300, maximumChange: 0),
            .init(range: 140...150, floor: 80, ceiling: 300, interval: 100),
        ]
        for cfg in bad {
            #expect(throws: StrapError.self, "\(cfg)") { try HeartRateTargetController(cfg, start: 100) }
        }
    }
}
