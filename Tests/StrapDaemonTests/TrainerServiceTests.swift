import Foundation
import ProtocolDriver
import StrapGATT
import StrapIngest
import StrapModel
import StrapTrainer
import StrapWire
import Testing
@testable import StrapDaemon

/// The daemon's trainer control (docs/trainer.md) against a scripted FTMS trainer: the writes
/// that reach it, in order, through `trainer.*` on the socket and through a session riding a
/// plan; a link loss, a release, a restart after a crash.
@Suite struct TrainerServiceTests {
    func harness(_ trainer: ScriptedTrainer, clock: (@Sendable () -> Millis)? = nil) throws -> RouterHarness {
        let h = try RouterHarness(devices: trainer, workoutClock: clock)
        trainer.pipeline = h.pipeline
        return h
    }

    @Test func aTargetIsSetAfterControlAndSetAgainAfterTheLinkComesBack() throws {
        let trainer = ScriptedTrainer()
        let h = try harness(trainer)
        defer { h.close() }
        let c = try h.client()
        let none = try c.call(#"{"id":1,"op":"trainer.set","power":200}"#)
        #expect(none.errorCode == "notFound", "no trainer has reported yet: \(none)")

        trainer.connect()
        #expect(eventually { h.frontEnd.context.trainers.status().first?.capabilities?.powerRange != nil })
        let set = try c.call(#"{"id":2,"op":"trainer.set","power":200}"#)
        #expect(set.isOK, "\(set)")
        #expect(eventually { trainer.target == 200 })
        #expect(trainer.requests == [.requestControl, .setTargetPower(200)])
        // Held once the trainer's indication has come back through the pipeline.
        #expect(eventually { h.frontEnd.context.trainers.status().first?.state == .holding(.power(watts: 200)) })
        let status = try c.call(#"{"id":3,"op":"trainer.status"}"#)
        let t = status.result.objects("trainers").first
        #expect(t?.string("state") == "holding" && t?.string("owner") == "user", "\(status)")

        // The trainer forgets control and target with the link; strapd asks again.
        trainer.drop()
        trainer.connect()
        #expect(eventually { trainer.target == 200 && trainer.requests.count == 4 })
        #expect(trainer.requests.suffix(2) == [.requestControl, .setTargetPower(200)])

        let release = try c.call(#"{"id":4,"op":"trainer.release"}"#)
        #expect(release.isOK, "\(release)")
        #expect(eventually { trainer.requests.last == .reset && trainer.target == nil })
        #expect(eventually { h.frontEnd.context.trainers.status().first?.state == .idle })
    }

    @Test func aTargetOutsideTheRangeAndABadRequestAreRefusedBeforeAnyWrite() throws {
        let trainer = ScriptedTrainer()
        let h = try harness(trainer)
        defer { h.close() }
        let c = try h.client()
        trainer.connect()
        #expect(eventually { h.frontEnd.context.trainers.status().first?.capabilities?.powerRange != nil })
        let high = try c.call(#"{"id":1,"op":"trainer.set","power":2500}"#)
        #expect(high.errorCode == "invalidOption", "\(high)")
        #expect(high.errorMessage?.contains("2000") == true, "says the maximum: \(high)")
        let two = try c.call(#"{"id":2,"op":"trainer.set","power":100,"grade":2}"#)
        #expect(two.errorCode == "badRequest", "\(two)")
        let stray = try c.call(#"{"id":3,"op":"trainer.set","power":100,"wind":2}"#)
        #expect(stray.errorCode == "badRequest", "\(stray)")
        let unknown = try c.call(#"{"id":4,"op":"trainer.set","device":"AA:BB:CC:DD:EE:FF","power":100}"#)
        #expect(unknown.errorCode == "notFound", "\(unknown)")
        #expect(trainer.requests.isEmpty)
    }

    @Test func aTrainerLeftHoldingATargetByACrashIsResetOnConnection() throws {
        let dir = "/tmp/strapd-trainer-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/trainers-held"
        let trainer = ScriptedTrainer()
        // A first run sets a target; it "crashes" (never releases): the file names the trainer.
        let first = TrainerService(devices: trainer, heldTargetsFile: file, capabilityWait: .milliseconds(50))
        let events = [SensorEvent.read(trainer.address, .supportedPowerRange, ScriptedTrainer.powerRange, ReceiveTime.now())]
        trainer.state.withLock { $0.connected = true }
        for e in events + [.linkUp(trainer.address, name: "T", ReceiveTime.now())] { first.observe(e) }
        #expect(eventually { first.status().first?.capabilities?.powerRange != nil })
        _ = try first.set(.power(watts: 300), device: nil, owner: .user)
        // The indication goes to the pipeline in the daemon; here it is handed over by hand.
        #expect(eventually { trainer.requests.count == 1 })
        first.observe(.notification(trainer.address, .fitnessMachineControlPoint, [0x80, 0x00, 0x01], ReceiveTime.now()))
        #expect(eventually { trainer.requests.count == 2 })
        #expect(String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self) == trainer.address + "\n")

        // The next start resets it as soon as it connects, without being asked.
        trainer.state.withLock { $0.requests = []; $0.controlled = false }
        let second = TrainerService(devices: trainer, heldTargetsFile: file, capabilityWait: .milliseconds(50))
        for e in events + [.linkUp(trainer.address, name: "T", ReceiveTime.now())] { second.observe(e) }
        #expect(eventually { trainer.requests == [.requestControl] })
        second.observe(.notification(trainer.address, .fitnessMachineControlPoint, [0x80, 0x00, 0x01], ReceiveTime.now()))
        #expect(eventually { trainer.requests == [.requestControl, .reset] })
        second.observe(.notification(trainer.address, .fitnessMachineControlPoint, [0x80, 0x01, 0x01], ReceiveTime.now()))
        #expect(eventually { String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self).isEmpty })
    }

    @Test func aHeldTargetsFileWithNonsenseIsIgnoredLineByLine() throws {
        let dir = "/tmp/strapd-trainer-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/trainers-held"
        try Data("c0:ff:ee:00:00:01\nnot an address\n\u{0}\u{1}garbage\nAA:BB:CC:DD:EE\n".utf8).write(to: URL(fileURLWithPath: file))
        let s = TrainerService(devices: ScriptedTrainer(), heldTargetsFile: file)
        #expect(s.status().map(\.device) == ["C0:FF:EE:00:00:01"])
    }

    static let ergPlan = #"""
        {"name":"ERG","activity":"cycling",
         "warmup":{"goal":{"time":10},"target":{"power":{"watts":[140,160]}}},
         "blocks":[{"iterations":1,"steps":[{"purpose":"work","goal":{"time":10},"target":{"power":{"watts":[200,220]}}},
                                            {"purpose":"recovery","goal":{"time":10},"target":{"cadence":{"rpm":[80,100]}}}]}],
         "cooldown":{"goal":{"open":true},"target":{"power":{"watts":[100,100]}}}}
        """#

    @Test func aSessionRidingAPlanSetsEachStepsPowerAndResetsTheTrainerAtTheEnd() throws {
        let clock = WorkoutProtocolTests.TestClock()
        let trainer = ScriptedTrainer()
        let h = try harness(trainer, clock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let service = try #require(h.workouts)
        let trainers = h.frontEnd.context.trainers
        trainer.connect()
        #expect(eventually { trainers.status().first?.capabilities?.powerRange != nil })
        let plan = try #require(try c.call(#"{"id":1,"op":"plan.save","plan":\#(Self.ergPlan)}"#).result.string("uuid"))
        let started = try c.call(#"{"id":2,"op":"workout.start","activityType":"cycling","plan":"\#(plan)","devices":["\#(trainer.address)"]}"#)
        guard case .object(let session)? = started.result["session"], let id = session.string("session") else {
            Issue.record("not started: \(started)"); return
        }
        func settled() -> Bool {
            guard let s = trainers.status().first else { return false }
            if case .busy = s.state { return false }
            return true
        }
        var targets: [Int16?] = []
        for second in 0...35 {
            clock.set(seconds: Double(second))
            service.planRunner.evaluateNow(service)
            #expect(eventually(10, settled))
            if targets.last != trainer.target { targets.append(trainer.target) }
        }
        // Warm-up 150 W, work 210 W, recovery free (a cadence target: reset), cool-down 100 W.
        #expect(targets == [150, 210, nil, 100], "\(targets)")
        #expect(trainer.requests == [.requestControl, .setTargetPower(150), .setTargetPower(210), .reset,
                                     .requestControl, .setTargetPower(100)], "\(trainer.requests)")
        let status = try c.call(#"{"id":3,"op":"trainer.status"}"#).result.objects("trainers").first
        #expect(status?.string("owner") == "session" && status?.string("session") == id.lowercased(), "\(String(describing: status))")
        // A client cannot take a trainer a session drives.
        #expect(try c.call(#"{"id":4,"op":"trainer.set","power":300}"#).errorCode == "busy")

        #expect(try c.call(#"{"id":5,"op":"workout.end","session":"\#(id)"}"#).isOK)
        service.planRunner.evaluateNow(service)
        #expect(eventually { trainer.requests.last == .reset && trainer.target == nil })
        #expect(eventually { trainers.status().first?.owner == nil })
    }

    /// A heart-rate step on a trainer (docs/trainer.md, "Riding a plan on a trainer"): without
    /// an FTP the power starts at 120 W, and with the strap's heart rate under the range it
    /// rises by a bounded step each 10 s; when the strap goes quiet for 10 s the power drops
    /// to the floor (60 W).
    @Test func aHeartRateStepMovesTheTrainersPowerAndDropsItWhenTheStrapGoesQuiet() throws {
        let clock = WorkoutProtocolTests.TestClock()
        let trainer = ScriptedTrainer()
        let h = try harness(trainer, clock: clock.now)
        defer { h.close() }
        let c = try h.client()
        let service = try #require(h.workouts)
        let trainers = h.frontEnd.context.trainers
        let strap = "C0:FF:EE:00:00:0B"
        trainer.connect()
        #expect(eventually { trainers.status().first?.capabilities?.powerRange != nil })
        let plan = #"{"name":"Hold HR","activity":"cycling","blocks":[],"warmup":{"goal":{"time":600},"target":{"heartRate":{"bpm":[140,150]}}}}"#
        let uuid = try #require(try c.call(#"{"id":1,"op":"plan.save","plan":\#(plan)}"#).result.string("uuid"))
        let origin = WorkoutProtocolTests.origin
        h.pipeline.submit(contentsOf: [.linkUp(strap, name: "Strap", ReceiveTime(wall: origin, monotonic: 0))])
        let started = try c.call(#"{"id":2,"op":"workout.start","activityType":"cycling","plan":"\#(uuid)","devices":["\#(trainer.address)","\#(strap)"]}"#)
        #expect(started.isOK, "\(started)")
        var powers: [Int16] = []
        for second in 1...45 {
            if second <= 30 {
                let t = ReceiveTime(wall: origin + Millis(second) * 1000, monotonic: Double(second))
                h.pipeline.submit(contentsOf: [.notification(strap, .heartRateMeasurement, HeartRateMeasurement(heartRate: 110).encoded(), t)])
                h.pipeline.drain()
            }
            clock.set(seconds: Double(second))
            service.planRunner.evaluateNow(service)
            #expect(eventually { if case .busy = trainers.status().first?.state { false } else { true } })
            if let w = trainer.target, powers.last != w { powers.append(w) }
        }
        // 120 W, then +10 W (the bounded step) at each of the 10 s decisions while the heart
        // rate sits at 110, then the floor once the strap has been quiet for 10 s.
        #expect(powers.first == 120, "\(powers)")
        #expect(powers.contains(130) && powers.contains(140), "\(powers)")
        #expect(powers.last == 60, "\(powers)")
        #expect(zip(powers, powers.dropFirst()).allSatisfy { $1 - $0 <= 10 }, "never more than 10 W up at once: \(powers)")
    }
}
