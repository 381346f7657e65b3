import ProtocolDriver
import Foundation
import StrapControl
import StrapModel
import StrapWire
import Synchronization
import Testing
@testable import StrapDaemon

/// `statistics.collection` with `follow` (HealthKit's `statisticsUpdateHandler`): the intervals
/// that later samples change are sent again, at most once per pacing interval. The pacing's
/// clock and timer are the test's: it sees each update being scheduled, with its delay, and
/// fires it; nothing depends on how long anything takes.
@Suite struct StatisticsFollowTests {
    /// A clock the test moves and a timer it fires.
    final class ManualPacing: Sendable {
        private let state = Mutex<(now: Millis, pending: [(due: Millis, work: @Sendable () -> Void)])>((0, []))

        var pacing: UpdatePacing {
            UpdatePacing(now: { [self] in state.withLock { $0.now } },
                         schedule: { [self] delay, work in state.withLock { $0.pending.append(($0.now + delay, work)) } })
        }

        /// When the timers set so far are due, in order.
        var due: [Millis] { state.withLock { $0.pending.map(\.due) } }
        func advance(_ ms: Millis) { state.withLock { $0.now += ms } }
        var now: Millis { state.withLock { $0.now } }

        /// Runs the timers due now; returns how many.
        @discardableResult
        func fire() -> Int {
            let ready = state.withLock { s -> [@Sendable () -> Void] in
                let ready = s.pending.filter { $0.due <= s.now }.map(\.work)
                s.pending.removeAll { $0.due <= s.now }
                return ready
            }
            for w in ready { w() }
            return ready.count
        }

        /// Waits (bounded) until the stream has set a timer: it does once the store's commit
        /// has reached it. A condition, not a duration.
        func waitForTimer() throws {
            for _ in 0..<2000 where due.isEmpty { usleep(5000) }
            try #require(!due.isEmpty, "no update was scheduled")
        }
    }

    /// Appends and waits (bounded) until the follow engine's pass over the parked stream has
    /// read what was appended: the stream has noted its intervals by then.
    static func appendAndSettle(_ h: RouterHarness, _ samples: [Sample]) throws {
        let passes = h.router.follow.counters.passes
        _ = try h.store.append(samples)
        for _ in 0..<2000 where h.router.follow.counters.passes == passes { usleep(5000) }
        try #require(h.router.follow.counters.passes > passes, "the follow engine never woke")
    }

    static let t0: Millis = 1_700_000_040_000  // a minute boundary: 2023-11-14T22:14:00Z
    static let device = Device(id: "AA:BB:CC:00:00:01", address: "AA:BB:CC:00:00:01", name: "HR")

    static func heartRates(_ values: [(second: Double, bpm: Double)]) -> [Sample] {
        values.map { Sample(type: .heartRate, value: $0.bpm, start: t0 + Millis($0.second * 1000), device: device) }
    }

    static func time(_ second: Double) -> String { RFC3339Timestamp.format(millisecondsSinceEpoch: t0 + Millis(second * 1000)) }

    static let request = #"""
        "type":"heartRate","options":["average","maximum"],"interval":{"minutes":1},"timeZone":"UTC",
        "from":"\#(time(0))","to":"\#(time(300))"
        """#

    /// What a plain request answers now, interval start → interval object.
    func current(_ c: RawProtocolDriver) throws -> [String: JSONObject] {
        let r = try c.call(#"{"id":"now","op":"statistics.collection",\#(Self.request)}"#)
        return Dictionary(uniqueKeysWithValues: r.result.objects("statistics").map { ($0.string("start") ?? "", $0) })
    }

    func update(_ c: RawProtocolDriver) throws -> [JSONObject] {
        let (event, _) = try c.read { $0.string("id") == "f" && $0.event != nil }
        #expect(event.event == "statistics", "\(event)")
        return event.data.objects("statistics")
    }

    @Test func changedIntervalsAreSentAgainAtMostOncePerInterval() throws {
        let manual = ManualPacing()
        var configuration = RequestRouter.Configuration()
        configuration.statisticsPacing = manual.pacing
        let h = try RouterHarness(routerConfiguration: configuration)
        defer { h.close() }
        _ = try h.store.append(Self.heartRates([(5, 100), (20, 110)]))
        let follower = try h.client(), other = try h.client()

        let first = try follower.call(#"{"id":"f","op":"statistics.collection","follow":true,\#(Self.request)}"#)
        #expect(first.isOK, "\(first)")
        let intervals = first.result.objects("statistics")
        #expect(intervals.count == 5 && intervals[0]["average"] == .int(105) && intervals[1]["average"] == .null)
        #expect(manual.due.isEmpty, "nothing was stored since: no update")

        // New samples in the current minute and the next: both intervals, at once (the first update).
        _ = try h.store.append(Self.heartRates([(50, 130), (70, 90)]))
        try manual.waitForTimer()
        #expect(manual.due == [manual.now])
        manual.fire()
        let firstUpdate = try update(follower)
        #expect(firstUpdate.compactMap { $0.string("start") } == [Self.time(0), Self.time(60)])
        var now = try current(other)
        #expect(firstUpdate.allSatisfy { now[$0.string("start") ?? ""] == $0 })
        #expect(firstUpdate[0]["maximum"] == .int(130) && firstUpdate[1]["average"] == .int(90))

        // More within the same second of the pacing clock: the update waits for the second to pass.
        _ = try h.store.append(Self.heartRates([(80, 100)]))
        try manual.waitForTimer()
        #expect(manual.due == [manual.now + 1000])
        #expect(manual.fire() == 0)
        manual.advance(400)
        // A late sample for the first minute joins the same update.
        try Self.appendAndSettle(h, Self.heartRates([(10, 160)]))
        manual.advance(600)
        manual.fire()
        let second = try update(follower)
        #expect(second.compactMap { $0.string("start") } == [Self.time(0), Self.time(60)])
        now = try current(other)
        #expect(second.allSatisfy { now[$0.string("start") ?? ""] == $0 })
        #expect(second[0]["maximum"] == .int(160) && second[1]["average"] == .int(95))

        // A deletion: every interval is a candidate, only the one it changed is sent.
        manual.advance(5000)
        let late = try h.store.samples(matching: .types([.heartRate])).first { $0.start == Self.t0 + 80_000 }
        let uuid = try #require(late).uuid.uuidString
        let deleted = try other.call(#"{"id":"d","op":"samples.delete","uuids":["\#(uuid)"]}"#)
        #expect(deleted.isOK, "\(deleted)")
        try manual.waitForTimer()
        manual.fire()
        let third = try update(follower)
        #expect(third.compactMap { $0.string("start") } == [Self.time(60)])
        #expect(third.first?["average"] == .int(90))

        // Samples outside the collection's intervals change nothing: no event, and the stream
        // ends with `cancel` like any other.
        try Self.appendAndSettle(h, Self.heartRates([(400, 70)]))
        #expect(manual.due.isEmpty)
        try follower.send(#"{"id":"f","op":"cancel"}"#)
        let (cancelled, before) = try follower.read { $0.string("id") == "f" }
        #expect(cancelled.event == "cancelled" && before.isEmpty, "\(cancelled) \(before)")
    }

    @Test func followAsksForABoundedCollection() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        let wide = try c.call(#"{"id":1,"op":"statistics.collection","type":"heartRate","options":["average"],"interval":{"minutes":1},"from":"2023-01-01T00:00:00Z","to":"2023-03-01T00:00:00Z","follow":true}"#)
        #expect(wide.errorCode == "badRequest" && wide.errorMessage?.contains("at most 10000 intervals") == true, "\(wide)")
        let notBool = try c.call(#"{"id":2,"op":"statistics.collection","type":"heartRate","options":["average"],"interval":{"hours":1},"from":"2023-01-01T00:00:00Z","to":"2023-01-02T00:00:00Z","follow":"yes"}"#)
        #expect(notBool.errorCode == "badRequest")
    }
}
