import ProtocolDriver
import Foundation
import Glibc
import Testing
import MockBlueZSupport
import StrapControl
import StrapModel
import StrapWire
@testable import StrapDaemon

/// Follow mode wakes on commits, not on a timer: idle followers cost nothing while nothing is
/// committed, and one commit is one pass over all of them. Counted, not timed.
@Suite struct FollowWakeUpTests {
    static let followers = 10

    @Test func idleFollowersCostNothingAndEachCommitIsOnePass() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let engine = h.router.follow
        try h.store.append(heartRates(20))
        try h.store.sync()

        // Nobody follows yet: commits do not wake the engine at all.
        for round in 0..<3 {
            try h.store.append(heartRates(1, from: 1_750_000_000_000 + Millis(round) * 1000))
        }
        #expect(engine.counters.passes == 0)

        var clients: [RawProtocolDriver] = []
        for i in 0..<Self.followers {
            let c = try h.client()
            let first = try c.call(#"{"id":"f\#(i)","op":"samples.anchored","anchor":0,"follow":true}"#)
            #expect(first.isOK && first.result.objects("added").count == 23)
            clients.append(c)
        }
        try eventually("every follower parked") { engine.counters.parked == Self.followers }
        let attached = engine.counters
        #expect(attached.passes == 0 && attached.reads == 0 && attached.looks == Self.followers)

        // A stretch without commits (other clients' queries and status on the same queues, and
        // long enough for the old 20 ms polling to have looked hundreds of times): nothing.
        let other = try h.client()
        for i in 0..<50 {
            #expect(try other.call(#"{"id":\#(i),"op":"samples.query","types":["heartRate"],"limit":5}"#).isOK)
            #expect(try other.call(#"{"id":"s\#(i)","op":"status"}"#).isOK)
        }
        usleep(300_000)
        #expect(engine.counters == attached)

        // Each commit: one pass, one page per follower, every follower parked again after.
        var expected = attached
        for round in 0..<3 {
            let stored = try h.store.append(heartRates(1, from: 1_760_000_000_000 + Millis(round) * 1000))
            for (i, c) in clients.enumerated() {
                let m = try c.read { $0.event == "added" }.match
                #expect(m["id"] == .string("f\(i)") && m.data.int("anchor") == Int64(stored[0].anchor))
            }
            try eventually("every follower parked again") { engine.counters.parked == Self.followers }
            expected.passes += 1
            expected.reads += Self.followers
            // One look that found the commit, one that parked again after the page.
            expected.looks += 2 * Self.followers
            #expect(engine.counters == expected)
        }

        // Cancelled followers are no longer woken; the rest still are.
        for (i, c) in clients.enumerated().prefix(5) {
            try c.send(#"{"id":"f\#(i)","op":"cancel"}"#)
            #expect(try c.read { $0.event == "cancelled" }.match["id"] == .string("f\(i)"))
        }
        #expect(engine.counters.parked == Self.followers - 5)
        let stored = try h.store.append(heartRates(1, from: 1_770_000_000_000))
        for c in clients.suffix(5) {
            #expect(try c.read { $0.event == "added" }.match.data.int("anchor") == Int64(stored[0].anchor))
        }
        try eventually("the rest parked again") { engine.counters.parked == Self.followers - 5 }
        #expect(engine.counters.passes == expected.passes + 1 && engine.counters.reads == expected.reads + 5)
    }

    /// Followers of workouts while only samples are committed (a dashboard waiting for the
    /// next workout): each commit is one pass in which every one of them reads the commit,
    /// finds nothing for it and parks again, with no hop of its own and nothing sent.
    @Test func followersOfOtherTypesParkAgainInThePass() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let engine = h.router.follow
        var clients: [RawProtocolDriver] = []
        for i in 0..<Self.followers {
            let c = try h.client()
            let first = try c.call(#"{"id":"w\#(i)","op":"samples.anchored","types":["workout"],"anchor":0,"follow":true}"#)
            #expect(first.isOK && first.result.objects("added").isEmpty)
            clients.append(c)
        }
        try eventually("every follower parked") { engine.counters.parked == Self.followers }
        var expected = engine.counters
        for round in 0..<3 {
            try h.store.append(heartRates(2, from: 1_780_000_000_000 + Millis(round) * 10_000))
            try eventually("a pass parked them again") {
                engine.counters.passes == expected.passes + 1 && engine.counters.parked == Self.followers
            }
            expected.passes += 1
            expected.reads += Self.followers
            expected.quietPages += Self.followers
            expected.looks += 2 * Self.followers
            #expect(engine.counters == expected)
        }
        // A saved workout still reaches every one of them.
        let w = try h.store.save(Workout(activityType: "running", start: 1_780_000_000_000, end: 1_780_000_030_000, deviceIDs: []))
        for (i, c) in clients.enumerated() {
            let m = try c.read { $0.event == "added" }.match
            #expect(m["id"] == .string("w\(i)") && m.data.string("uuid") == w.uuid.uuidString)
        }
    }
}
