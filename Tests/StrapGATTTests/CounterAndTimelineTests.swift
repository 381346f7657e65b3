import Foundation
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

    @Test func aRunIsAnchoredHalfItsLastIntervalBeforeArrival() {
        var t = BeatTimeline()
        let beats = t.append(rrIntervals: [1024, 512], receivedAt: 100)
        // Where the last beat lies within the notification period is unknown: the middle of its RR.
        #expect(t.opening == 98.25 && beats.map(\.time) == [99.25, 99.75])
        #expect(beats.allSatisfy { $0.arrival == 100 && !$0.gapBefore })
    }

    @Test func packetsChainFromThePreviousBeatAndCorrectionsAreBounded() {
        // True beats 700-949/1024 s apart from 0.3 s; a packet each second carries the beats
        // since the previous one, received 10 ms after it was sent.
        var rrs: [UInt16] = []
        var state: UInt32 = 1
        for _ in 0..<400 {
            state = state &* 1_103_515_245 &+ 12_345
            rrs.append(700 + UInt16((state >> 16) % 250))
        }
        var times = [0.3]
        for rr in rrs { times.append(times[times.count - 1] + Double(rr) / 1024) }
        func beat(_ i: Int) -> Double { times[i] }
        var t = BeatTimeline()
        var sent = 0
        var previousLast: Double?
        var error = 0.0
        for k in 1...250 {
            var count = 0
            while beat(sent + count + 1) <= Double(k) { count += 1 }
            guard count > 0 else { continue }
            let beats = t.append(rrIntervals: Array(rrs[sent..<(sent + count)]), receivedAt: Double(k) + 0.01)
            sent += count
            if let previousLast {
                #expect(t.opening == previousLast, "packet \(k) opens at the previous packet's last beat")
                #expect(beats[0].time >= previousLast && !beats[0].gapBefore)
            }
            let bound = k <= t.settlingPackets ? t.settlingStep : t.driftStep
            #expect(abs(t.lastCorrection) <= bound + 1e-12)
            previousLast = beats[count - 1].time
            error = beats[count - 1].time - beat(sent)
        }
        // Settled: within the 10 ms delivery latency and the bracket's width.
        #expect(abs(error) < 0.03, "error \(error)")
    }

    @Test func gapFlaggedWhenRRSumFallsShortOfWallTime() {
        var t = BeatTimeline()
        _ = t.append(rrIntervals: [800], receivedAt: 1)
        let steady = t.append(rrIntervals: [800], receivedAt: 2)
        #expect(!steady[0].gapBefore)
        let afterDropout = t.append(rrIntervals: [800, 800], receivedAt: 20)
        #expect(afterDropout[0].gapBefore && !afterDropout[1].gapBefore)
        #expect(afterDropout[0].time > steady[0].time)
    }

    @Test func aReconnectRestartsTheRunWithAGapButNeverGoesBack() {
        var t = BeatTimeline()
        let before = t.append(rrIntervals: [1024, 1024], receivedAt: 10)
        t.reset()
        // The strap's clock says more time passed than ours: the new anchor would lie before
        // the last beat placed, so it is held at it.
        let after = t.append(rrIntervals: [3072], receivedAt: 10.5)
        #expect(after[0].gapBefore && t.opening == before[1].time)
        #expect(!t.append(rrIntervals: [1024], receivedAt: 13.2)[0].gapBefore)
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
        #expect(zip(beats, beats.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    /// Found by the heart-rate fuzz (Tests/Fixtures/gatt/fuzz-beats-went-back.bin): a step that
    /// took back a whole 2-tick packet, start + 2/1024 − 2/1024 with start just under 32 s,
    /// rounded to one ulp before the beat before it. Replayed as the fuzz entry point reads it.
    @Test func aStepTakingBackTheWholePacketDoesNotGoBackInTime() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/gatt/fuzz-beats-went-back.bin")
        let input = [UInt8](try Data(contentsOf: url))
        var t = BeatTimeline()
        var time = 0.0, previous = -Double.infinity, i = 0, beats = 0
        while i < input.count {
            // A length octet (mod 40), then the packet; its first octet / 64 s advance the clock.
            let end = min(input.count, i + 1 + Int(input[i]) % 40)
            let packet = Array(input[(i + 1)..<end])
            i = end
            time += Double(packet.first ?? 0) / 64
            guard let rr = (try? HeartRateMeasurement.decode(packet))?.rrIntervals else { continue }
            for beat in t.append(rrIntervals: rr, receivedAt: time) {
                #expect(beat.time >= previous, "beat at \(beat.time) after \(previous)")
                previous = beat.time
                beats += 1
            }
        }
        #expect(beats > 10)
    }
}
