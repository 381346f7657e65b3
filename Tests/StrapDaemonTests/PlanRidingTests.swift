import Foundation
import ProtocolDriver
import StrapControl
import StrapIngest
import StrapModel
import StrapWire
import Testing
@testable import StrapDaemon

/// A session started with a plan moves through its steps (docs/workouts.md, "Riding a plan"):
/// a lap at each met goal, carrying the step it begins; an open step waits for the athlete's
/// lap; a heart-rate target out of range for 5 s is a marker. The clock and the samples are
/// moved by the test, a second at a time, and the runner asked to look after each.
@Suite struct PlanRidingTests {
    typealias Clock = WorkoutProtocolTests.TestClock
    typealias Feed = WorkoutProtocolTests.Feed

    static let plan = #"""
        {"name":"Ladder","activity":"cycling",
         "warmup":{"goal":{"time":10},"target":{"heartRate":{"bpm":[30,31]}}},
         "blocks":[{"iterations":2,"steps":[{"purpose":"work","goal":{"time":10},"displayName":"Hard"},
                                            {"purpose":"recovery","goal":{"time":5}}]}],
         "cooldown":{"goal":{"open":true}}}
        """#

    func meta(_ event: JSONObject) -> JSONObject {
        if case .object(let m)? = event["metadata"] { m } else { JSONObject() }
    }

    static func events(_ c: RawProtocolDriver, _ id: String) throws -> [JSONObject] {
        let r = try c.call(#"{"id":9,"op":"workout.get","session":"\#(id)"}"#)
        guard case .object(let s)? = r.result["session"] else { Issue.record("no session: \(r)"); return [] }
        return s.objects("events")
    }

    @Test func theStepsGoalsTakeTheLapsAndAnOffTargetHeartRateIsMarked() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let service = try #require(h.workouts)
        let feed = Feed(seconds: 80)
        let saved = try c.call(#"{"id":1,"op":"plan.save","plan":\#(Self.plan)}"#)
        let plan = try #require(saved.result.string("uuid"))
        let started = try c.call(#"{"id":2,"op":"workout.start","activityType":"cycling","plan":"\#(plan)","devices":["\#(h.identities[0].address)"]}"#)
        guard case .object(let session)? = started.result["session"], let id = session.string("session") else {
            Issue.record("not started: \(started)"); return
        }
        for s in 1...60 {
            try feed.submit(until: Double(s), to: h)
            clock.set(seconds: Double(s))
            service.planRunner.evaluateNow(service)
        }
        let all = try Self.events(c, id)
        let laps = all.filter { $0.string("kind") == "lap" }
        let steps: [String?] = laps.map { meta($0).string("planStep") }
        #expect(steps == ["2", "3", "4", "5", "6"], "\(laps)")
        #expect(laps.map { meta($0).string("planPurpose") } == ["work", "recovery", "work", "recovery", "cooldown"])
        #expect(meta(laps[0]).string("planStepName") == "Hard")
        let markers = all.filter { $0.string("kind") == "marker" }
        #expect(markers.count == 1, "one alert, raised in the warm-up only: \(markers)")
        #expect(markers.first.map(meta)?.string("planAlert") == "above")
        #expect(markers.first.map(meta)?.string("planTarget") == "heartRate")

        // The open cool-down ends only with the athlete's lap; then the plan is done and
        // nothing more happens by itself.
        #expect(try c.call(#"{"id":3,"op":"workout.lap","session":"\#(id)"}"#).isOK)
        for s in 61...75 {
            try feed.submit(until: Double(s), to: h)
            clock.set(seconds: Double(s))
            service.planRunner.evaluateNow(service)
        }
        #expect(try Self.events(c, id).filter { $0.string("kind") == "lap" }.count == 6)
    }

    @Test func aSessionWithAnUnknownPlanIsNotStarted() throws {
        let h = try RouterHarness(workoutClock: Clock().now)
        defer { h.close() }
        let c = try h.client()
        let r = try c.call(#"{"id":1,"op":"workout.start","activityType":"cycling","plan":"\#(UUID().uuidString)"}"#)
        #expect(r.errorCode == "notFound", "\(r)")
        let ctl = Strapctl.run(["--socket", h.socketPath, "workout", "start", "--activity", "cycling", "--plan", UUID().uuidString])
        #expect(ctl.exitCode != 0 && ctl.stderr.contains("no plan"), "\(ctl.stderr)")
        #expect(try c.call(#"{"id":2,"op":"workout.list"}"#).result.objects("sessions").isEmpty)
    }

    /// A power target is watched like the others, against the power source's latest reading
    /// (here a power meter's Cycling Power Measurements at 1 Hz): 150 W under a 200–220 W step
    /// for 5 s is "below", 210 W for 3 s is back "inRange"; the live figures carry the power.
    @Test func aPowerTargetIsWatchedAgainstThePowerMeter() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let service = try #require(h.workouts)
        let meter = "C0:DA:E0:00:00:63"
        let plan = #"{"name":"Hold","activity":"cycling","blocks":[],"warmup":{"goal":{"time":60},"target":{"power":{"watts":[200,220]}}}}"#
        let uuid = try #require(try c.call(#"{"id":1,"op":"plan.save","plan":\#(plan)}"#).result.string("uuid"))
        let origin = WorkoutProtocolTests.origin
        h.pipeline.submit(contentsOf: [.linkUp(meter, name: "Meter", ReceiveTime(wall: origin, monotonic: 0))])
        let started = try c.call(#"{"id":2,"op":"workout.start","activityType":"cycling","plan":"\#(uuid)","devices":["\#(meter)"]}"#)
        guard case .object(let session)? = started.result["session"], let id = session.string("session") else {
            Issue.record("not started: \(started)"); return
        }
        for second in 1...20 {
            let watts: UInt16 = second <= 10 ? 150 : 210
            let t = ReceiveTime(wall: origin + Millis(second) * 1000, monotonic: Double(second))
            h.pipeline.submit(contentsOf: [.notification(meter, .cyclingPowerMeasurement, [0x00, 0x00, UInt8(watts & 0xFF), UInt8(watts >> 8)], t)])
            h.pipeline.drain()
            clock.set(seconds: Double(second))
            service.planRunner.evaluateNow(service)
        }
        let markers = try Self.events(c, id).filter { $0.string("kind") == "marker" }.map(meta)
        #expect(markers.map { $0.string("planAlert") } == ["below", "inRange"], "\(markers)")
        #expect(markers.allSatisfy { $0.string("planTarget") == "power" })
        #expect(markers.first?.string("planValue") == "150")
        let stats = try c.call(#"{"id":3,"op":"workout.get","session":"\#(id)"}"#).result
        guard case .object(let figures)? = stats["statistics"] else { Issue.record("no statistics: \(stats)"); return }
        #expect(figures.number("powerMostRecent") == 210 && figures.number("powerMaximum") == 210, "\(figures)")
        #expect(figures.number("powerAverage") == 180, "ten readings at 150 W, ten at 210 W: \(figures)")
    }
}
