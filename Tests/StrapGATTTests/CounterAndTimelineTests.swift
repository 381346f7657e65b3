import Testing
@testable import StrapGATT

/// Cumulative counters (RSC distance, Energy Expended) and the RR beat timeline.
@Suite struct CounterAndTimelineTests {
    @Test func rscDistanceWrapsAt2To32() {
        var c = CumulativeCounter.rscTotalDistance()
        #expect(c.update(0xFFFF_FFF0, at: 0) == .baseline)
        #expect(c.update(0x0000_0010, at: 1) == .wrapped(by: 32))
        #expect(c.total == 32)
    }

    @Test func rscDistanceResetOnPowerCycle() {
        var c = CumulativeCounter.rscTotalDistance()
        _ = c.update(500_000, at: 0)
        _ = c.update(500_030, at: 1)
        #expect(c.update(25, at: 2) == .reset(by: 25))
        #expect(c.update(55, at: 3) == .advanced(by: 30))
        #expect(c.total == 85)
    }

    @Test func energyResetAfterControlPointWrite() {
        var c = CumulativeCounter.energyExpended()
        _ = c.update(1200, at: 0)
        _ = c.update(1205, at: 10)
        #expect(c.update(0, at: 11) == .reset(by: 0))
        #expect(c.update(3, at: 20) == .advanced(by: 3))
        #expect(c.total == 8)
    }

    @Test func energySaturatesAt0xFFFF() {
        var c = CumulativeCounter.energyExpended()
        _ = c.update(0xFFF0, at: 0)
        #expect(c.update(0xFFFF, at: 10) == .advanced(by: 15))
        #expect(c.update(0xFFFF, at: 20) == .saturated)
        #expect(c.total == 15)
    }

    @Test func energyAbsentIsNotZero() {
        // Absence is the caller's business: only present values are fed, so no false reset.
        var c = CumulativeCounter.energyExpended()
        _ = c.update(100, at: 0)
        #expect(c.update(101, at: 10) == .advanced(by: 1))
    }

    @Test func implausibleJumpUpIsAResetNotProgress() {
        var c = CumulativeCounter.energyExpended()
        _ = c.update(10, at: 0)
        #expect(c.update(40_000, at: 1) == .reset(by: 0))
        #expect(c.total == 0)
    }

    @Test func rebaselineAfterReconnect() {
        var c = CumulativeCounter.rscTotalDistance()
        _ = c.update(100, at: 0)
        c.rebaseline()
        #expect(c.update(900_000, at: 600) == .baseline)
        #expect(c.total == 0)
    }

    // MARK: beat timeline

    @Test func lastBeatAnchoredAtArrivalWalkingBack() {
        var t = BeatTimeline()
        let beats = t.append(rrIntervals: [1024, 512], receivedAt: 100)
        #expect(beats.map(\.time) == [99.5, 100])
        #expect(beats.allSatisfy { $0.arrival == 100 && !$0.gapBefore })
    }

    @Test func beatsNeverGoBackwardsAcrossPackets() {
        var t = BeatTimeline()
        _ = t.append(rrIntervals: [1024], receivedAt: 10.0)
        // Delivered early relative to the RR sum: the walk-back would land before 10.0.
        let beats = t.append(rrIntervals: [1024, 1024], receivedAt: 10.8)
        #expect(beats[0].time > 10.0 && beats[0].adjusted)
        #expect(beats[1].time == 10.8 && beats[1].time > beats[0].time && !beats[1].adjusted)
    }

    @Test func gapFlaggedWhenRRSumFallsShortOfWallTime() {
        var t = BeatTimeline()
        _ = t.append(rrIntervals: [800], receivedAt: 1)
        let steady = t.append(rrIntervals: [800], receivedAt: 2)
        #expect(!steady[0].gapBefore)
        let afterDropout = t.append(rrIntervals: [800, 800], receivedAt: 20)
        #expect(afterDropout[0].gapBefore && !afterDropout[1].gapBefore)
    }

    @Test func packetsWithoutRRDoNotMoveTheAnchor() {
        var t = BeatTimeline()
        _ = t.append(rrIntervals: [1536], receivedAt: 1)
        #expect(t.append(rrIntervals: [], receivedAt: 2).isEmpty)
        // 40 bpm: next beat 1.5 s later arrives with the packet at 3 s: no gap.
        #expect(!t.append(rrIntervals: [1536], receivedAt: 3)[0].gapBefore)
    }

    @Test func edgeValuesDoNotBreakTheTimeline() {
        var t = BeatTimeline()
        let beats = t.append(rrIntervals: [0, 65535, 0], receivedAt: 100)
        #expect(beats.count == 3)
        #expect(zip(beats, beats.dropFirst()).allSatisfy { $0.time < $1.time })
    }
}
