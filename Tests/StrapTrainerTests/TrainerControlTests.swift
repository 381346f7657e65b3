import StrapGATT
import StrapModel
import Testing
@testable import StrapTrainer

/// A scripted exchange with a trainer, in the manner of BlueZ's unit/test-gatt.c: events go in
/// one by one, and every control point write the controller asks for is recorded in order, so a
/// test states the whole conversation (docs/trainer.md).
struct Script {
    var control: TrainerControl
    var now: Millis = 0
    var writes: [FitnessMachineControlPointRequest] = []
    var alerts: [TrainerAlert] = []

    init(_ control: TrainerControl = TrainerControl()) { self.control = control }

    mutating func record(_ step: TrainerStep) {
        if let w = step.write { writes.append(w) }
        alerts += step.alerts
    }

    mutating func on(_ event: TrainerEvent) { record(control.handle(event, now: now)) }
    mutating func connect(_ caps: TrainerCapabilities = Script.caps) { on(.connected(caps)) }
    mutating func target(_ t: TrainerTarget) throws(TrainerError) { record(try control.setTarget(t, now: now)) }
    mutating func release() { record(control.release(now: now)) }
    /// The trainer's indication for the last write, with `result`.
    mutating func answer(_ result: FitnessMachineControlPointResponse.Result = .success) {
        on(.writeCompleted)
        on(.indication(FitnessMachineControlPointResponse(requestOpCode: writes.last!.opCode, result: result)))
    }
    mutating func advance(to t: Millis) { now = t; on(.tick) }

    /// A trainer offering power (0…2000 W, 1 W steps), resistance (0…100.0 in tenths) and
    /// simulation.
    static let caps = TrainerCapabilities(
        feature: FitnessMachineFeature(machineFeatures: 1 << 14 | 1 << 7, targetSettingFeatures: 1 << 2 | 1 << 3 | 1 << 13),
        powerRange: SupportedRange(minimum: 0, maximum: 2000, increment: 1),
        resistanceRange: SupportedRange(minimum: 0, maximum: 1000, increment: 1))
}

@Suite struct TrainerControlTests {
    // MARK: Control first, one request at a time

    @Test func requestsControlFirstThenTheTarget() throws {
        var s = Script()
        s.connect()
        #expect(s.writes == [] && s.control.state == .idle)
        try s.target(.power(watts: 200))
        #expect(s.writes == [.requestControl])
        #expect(s.control.state == .busy(.requestControl))
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(200)])
        s.answer()
        #expect(s.control.state == .holding(.power(watts: 200)))
        // Control is held: the next target is written at once, without asking again.
        try s.target(.power(watts: 250))
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(200), .setTargetPower(250)])
        #expect(s.alerts == [])
    }

    /// The same conversation as octets: what goes to the control point, and indications parsed
    /// from what the trainer sends.
    @Test func theConversationAsOctets() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.on(.indication(try .decode([0x80, 0x00, 0x01])))
        s.on(.indication(try .decode([0x80, 0x05, 0x01])))
        s.release()
        s.on(.status(try .decode([0x01])))          // the trainer announces its reset
        s.on(.indication(try .decode([0x80, 0x01, 0x01])))
        #expect(s.writes.map { $0.encoded() } == [[0x00], [0x05, 0xC8, 0x00], [0x01]])
        #expect(s.alerts == [.released])
        #expect(s.control.state == .idle)
    }

    @Test func oneRequestInFlightTheLatestTargetWins() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()                                   // control
        try s.target(.power(watts: 210))             // 200 is in flight: nothing written
        try s.target(.power(watts: 220))
        s.on(.writeCompleted)                        // the ATT write response is not the answer
        #expect(s.writes == [.requestControl, .setTargetPower(200)])
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(200), .setTargetPower(220)])
        s.answer()
        #expect(s.control.state == .holding(.power(watts: 220)))
    }

    @Test func anIndicationForAnotherOpCodeIsIgnored() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.on(.indication(FitnessMachineControlPointResponse(requestOpCode: 0x05, result: .success)))
        #expect(s.writes == [.requestControl] && s.control.state == .busy(.requestControl))
    }

    // MARK: Timeouts

    @Test func aTimeoutIsRetriedABoundedNumberOfTimesThenReported() throws {
        var s = Script()                              // 3 s, 3 attempts
        s.connect()
        try s.target(.power(watts: 200))
        s.advance(to: 2999)
        #expect(s.writes == [.requestControl])
        s.advance(to: 3000)
        s.advance(to: 6000)
        #expect(s.writes == [.requestControl, .requestControl, .requestControl])
        #expect(s.alerts == [])
        s.advance(to: 9000)
        #expect(s.writes.count == 3)
        let error = TrainerError.noResponse(opCode: 0x00, attempts: 3)
        #expect(s.alerts == [.failed(.requestControl, error)])
        #expect(s.control.state == .failed(error))
        s.advance(to: 20000)
        #expect(s.writes.count == 3)
        // The target is kept: the next connection tries again.
        s.on(.disconnected)
        s.connect()
        s.answer()
        #expect(s.writes.suffix(2) == [.requestControl, .setTargetPower(200)])
    }

    @Test func eachStepSaysWhenToTickNext() throws {
        var c = TrainerControl(configuration: .init(timeout: 2000, attempts: 2))
        #expect(c.handle(.connected(Script.caps), now: 100) == TrainerStep())
        #expect(try c.setTarget(.power(watts: 200), now: 500) == TrainerStep(write: .requestControl, deadline: 2500))
        #expect(c.handle(.writeCompleted, now: 600) == TrainerStep(deadline: 2500))
        #expect(c.handle(.tick, now: 2499) == TrainerStep(deadline: 2500))
        #expect(c.handle(.tick, now: 2500) == TrainerStep(write: .requestControl, deadline: 4500))
        let answer = FitnessMachineControlPointResponse(requestOpCode: 0x00, result: .success)
        #expect(c.handle(.indication(answer), now: 2600) == TrainerStep(write: .setTargetPower(200), deadline: 4600))
    }

    @Test func aFailedWriteCountsAsAnAttempt() throws {
        var s = Script(TrainerControl(configuration: .init(timeout: 3000, attempts: 2)))
        s.connect()
        try s.target(.power(watts: 200))
        s.on(.writeFailed)
        #expect(s.writes == [.requestControl, .requestControl])
        s.on(.writeFailed)
        #expect(s.writes.count == 2)
        #expect(s.alerts == [.failed(.requestControl, .noResponse(opCode: 0x00, attempts: 2))])
    }

    @Test func aLateAnswerToARetriedRequestIsTaken() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.advance(to: 3000)                          // retry
        s.now = 3100
        s.answer()                                   // the first write's answer, late
        #expect(s.writes == [.requestControl, .requestControl, .setTargetPower(200)])
        s.advance(to: 6000)                          // the deadline is the target's now
        #expect(s.writes.count == 3)
    }

    // MARK: Result codes

    @Test(arguments: [
        (FitnessMachineControlPointResponse.Result.opCodeNotSupported, TrainerError.opCodeNotSupported(opCode: 0x05)),
        (.invalidParameter, .invalidParameter(opCode: 0x05)),
        (.operationFailed, .operationFailed(opCode: 0x05)),
    ])
    func aRefusalIsTypedAndNotRetried(result: FitnessMachineControlPointResponse.Result, error: TrainerError) throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.answer(result)
        #expect(s.alerts == [.failed(.setTargetPower(200), error)])
        #expect(s.control.state == .failed(error))
        s.advance(to: 60_000)
        #expect(s.writes == [.requestControl, .setTargetPower(200)])
        // Forgotten: a reconnect does not send it again.
        s.on(.disconnected)
        s.connect()
        #expect(s.writes.count == 2 && s.control.state == .idle)
        // A new command clears the failure.
        try s.target(.power(watts: 150))
        s.answer()
        #expect(s.writes.last == .setTargetPower(150))
    }

    @Test func aRefusalOfAnOlderTargetDoesNotStopANewerOne() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        try s.target(.power(watts: 180))             // while 200 is in flight
        s.answer(.invalidParameter)
        #expect(s.alerts == [.failed(.setTargetPower(200), .invalidParameter(opCode: 0x05))])
        #expect(s.writes == [.requestControl, .setTargetPower(200), .setTargetPower(180)])
        s.answer()
        #expect(s.control.state == .holding(.power(watts: 180)))
    }

    @Test func aReservedResultCodeIsAnError() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.on(.indication(FitnessMachineControlPointResponse(requestOpCode: 0x00, rawResult: 0x09)))
        #expect(s.alerts == [.failed(.requestControl, .unknownResult(opCode: 0x00, result: 0x09))])
        #expect(s.writes == [.requestControl])
    }

    @Test func controlNotPermittedRequestsControlOnceThenReportsAnotherApp() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.answer(.controlNotPermitted)               // control lapsed: ask once more
        #expect(s.writes == [.requestControl, .setTargetPower(200), .requestControl])
        s.answer()
        #expect(s.writes.last == .setTargetPower(200))
        s.answer(.controlNotPermitted)               // and again: someone else has it
        #expect(s.writes.count == 4)
        #expect(s.alerts == [.controlHeldByAnotherApp])
        #expect(s.control.state == .controlHeldByAnotherApp)
    }

    @Test func requestControlRefusedMeansAnotherAppHoldsIt() throws {
        var s = Script()
        s.connect()
        try s.target(.resistance(level: 12.5))
        s.answer(.controlNotPermitted)
        #expect(s.writes == [.requestControl])
        #expect(s.alerts == [.controlHeldByAnotherApp])
        // No fighting across a reconnect either; the user's next command asks again.
        s.on(.disconnected)
        s.connect()
        #expect(s.writes.count == 1)
        try s.target(.resistance(level: 12.5))
        s.answer()
        #expect(s.writes == [.requestControl, .requestControl, .setTargetResistanceLevel(125)])
    }

    // MARK: Control lost

    @Test func controlPermissionLostStopsUsUntilTheUserCommandsAgain() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.answer()
        s.on(.status(.controlPermissionLost))
        #expect(s.alerts == [.controlLost])
        #expect(s.control.state == .controlLost)
        s.advance(to: 60_000)
        s.on(.disconnected)
        s.connect()                                  // a reconnect does not take it back
        #expect(s.writes == [.requestControl, .setTargetPower(200)])
        #expect(s.control.state == .controlLost)
        try s.target(.power(watts: 180))
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(200), .requestControl, .setTargetPower(180)])
    }

    @Test func controlLostDuringARequestDropsItsAnswer() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.on(.status(.controlPermissionLost))        // while the target is in flight
        s.answer(.controlNotPermitted)
        #expect(s.writes == [.requestControl, .setTargetPower(200)])
        #expect(s.alerts == [.controlLost])
    }

    @Test func aResetWeDidNotAskForIsTreatedAsLost() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.answer()
        s.on(.status(.reset))
        #expect(s.alerts == [.trainerReset])
        #expect(s.control.state == .controlLost)
        #expect(s.writes.count == 2)
    }

    // MARK: Disconnects

    @Test func aReconnectRequestsControlAndSetsTheTargetAgain() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.answer()
        s.on(.disconnected)                          // mid-ERG
        #expect(s.control.state == .disconnected && s.control.desired == .power(watts: 200))
        s.advance(to: 10_000)
        #expect(s.writes.count == 2)
        s.connect()
        s.answer()
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(200), .requestControl, .setTargetPower(200)])
        #expect(s.control.state == .holding(.power(watts: 200)))
    }

    @Test func aTargetSetWhileDisconnectedIsSentOnReconnect() throws {
        var s = Script()
        try s.target(.power(watts: 300))            // never connected: checked on connecting
        #expect(s.writes == [])
        s.connect()
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(300)])
        s.answer()
        s.on(.disconnected)
        try s.target(.power(watts: 320))            // checked against the last ranges
        #expect(throws: TrainerError.self) { try s.target(.power(watts: 2500)) }
        s.connect()
        s.answer()
        #expect(s.writes.suffix(2) == [.requestControl, .setTargetPower(320)])
    }

    @Test func aDisconnectDuringARequestStartsOverOnReconnect() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.on(.disconnected)                          // the target write never answered
        s.answer()                                   // a stray indication: ignored
        s.connect()
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(200), .requestControl, .setTargetPower(200)])
    }

    @Test func aTargetTheReconnectedTrainerCannotTakeIsRefused() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 900))
        s.answer()
        s.answer()
        s.on(.disconnected)
        var narrower = Script.caps
        narrower.powerRange = SupportedRange(minimum: 0, maximum: 800, increment: 1)
        s.connect(narrower)
        #expect(s.alerts == [.targetRefusedOnReconnect(.outOfRange(.aboveMaximum(field: "target power (W)", value: 900, maximum: 800)))])
        #expect(s.writes.count == 2 && s.control.state == .idle)
    }

    // MARK: Refusals before any write

    @Test func aTargetOutsideTheRangeIsRefusedBeforeAnyWrite() throws {
        var s = Script()
        s.connect()
        #expect(throws: TrainerError.outOfRange(.aboveMaximum(field: "target power (W)", value: 2001, maximum: 2000))) {
            try s.target(.power(watts: 2001))
        }
        #expect(throws: TrainerError.outOfRange(.belowMinimum(field: "target power (W)", value: -5, minimum: 0))) {
            try s.target(.power(watts: -5))
        }
        #expect(throws: TrainerError.outOfRange(.notFinite(field: "target power (W)"))) { try s.target(.power(watts: .nan)) }
        #expect(throws: TrainerError.outOfRange(.aboveMaximum(field: "target resistance level (1/10)", value: 1010, maximum: 1000))) {
            try s.target(.resistance(level: 101))
        }
        #expect(s.writes == [] && s.control.desired == nil)
    }

    @Test func aTargetOffTheIncrementIsSnapped() throws {
        var caps = Script.caps
        caps.powerRange = SupportedRange(minimum: 25, maximum: 1500, increment: 5)
        caps.resistanceRange = SupportedRange(minimum: 0, maximum: 1000, increment: 10)
        var s = Script()
        s.connect(caps)
        try s.target(.power(watts: 203))
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(205)])
        try s.target(.resistance(level: 12.34))     // tenths in steps of 10: whole levels
        s.answer()
        #expect(s.writes.last == .setTargetResistanceLevel(120))
    }

    @Test func aKindOfTargetTheTrainerLacksIsRefused() throws {
        var s = Script()
        s.connect(TrainerCapabilities(feature: FitnessMachineFeature(machineFeatures: 0, targetSettingFeatures: 1 << 3),
                                      powerRange: SupportedRange(minimum: 0, maximum: 1000, increment: 1)))
        let sim = IndoorBikeSimulationParameters(windSpeed: Int16(0), grade: 250, rollingResistance: 40, windResistance: 51)
        #expect(throws: TrainerError.targetNotSupported(.simulation)) { try s.target(.simulation(sim)) }
        #expect(throws: TrainerError.targetNotSupported(.resistance)) { try s.target(.resistance(level: 5)) }
        #expect(s.writes == [])
        // A trainer with the bit set takes it as it is.
        var t = Script()
        t.connect()
        try t.target(.simulation(sim))
        t.answer()
        #expect(t.writes == [.requestControl, .setIndoorBikeSimulationParameters(sim)])
    }

    // MARK: Release

    @Test func releaseResetsTheTrainer() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 350))
        s.answer()
        s.answer()
        s.release()
        #expect(s.writes == [.requestControl, .setTargetPower(350), .reset])
        s.answer()
        #expect(s.alerts == [.released])
        #expect(s.control.state == .idle && !s.control.hasControl && !s.control.mayHoldTarget)
    }

    @Test func releaseDuringATargetWriteResetsAfterItsAnswer() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 350))
        s.answer()
        s.release()                                  // 350 is in flight
        #expect(s.writes == [.requestControl, .setTargetPower(350)])
        s.answer()
        #expect(s.writes.last == .reset)
    }

    @Test func releaseWhileDisconnectedResetsOnTheNextConnection() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 350))
        s.answer()
        s.answer()
        s.on(.disconnected)
        s.release()
        #expect(s.writes.count == 2 && s.control.releasePending)
        s.connect()
        s.answer()
        s.answer()
        #expect(s.writes == [.requestControl, .setTargetPower(350), .requestControl, .reset])
        #expect(s.alerts == [.released] && s.control.state == .idle)
    }

    @Test func releaseWithNothingOfOursOnTheTrainerWritesNothing() throws {
        var s = Script()
        s.connect()
        s.release()
        #expect(s.writes == [] && s.control.state == .idle)
        // After control was lost, the trainer's target is the other app's.
        try s.target(.power(watts: 200))
        s.answer()
        s.answer()
        s.on(.status(.controlPermissionLost))
        s.release()
        #expect(s.writes == [.requestControl, .setTargetPower(200)])
        #expect(s.control.state == .idle)
    }

    @Test func afterACrashReleaseResetsWhatAnEarlierRunMayHaveLeft() throws {
        var s = Script(TrainerControl(mayHoldTarget: true))
        s.connect()
        #expect(s.writes == [])
        s.release()
        s.answer()
        s.answer()
        #expect(s.writes == [.requestControl, .reset])
        #expect(s.alerts == [.released])
    }

    @Test func aRefusedResetIsReportedNotRetried() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 200))
        s.answer()
        s.answer()
        s.release()
        s.answer(.operationFailed)
        #expect(s.alerts == [.failed(.reset, .operationFailed(opCode: 0x01))])
        s.advance(to: 60_000)
        #expect(s.writes == [.requestControl, .setTargetPower(200), .reset])
    }

    @Test func errorsReadAsSentences() {
        #expect("\(TrainerError.opCodeNotSupported(opCode: 0x11))" == "the trainer does not support control point op code 0x11")
        #expect("\(TrainerError.noResponse(opCode: 0x05, attempts: 3))" == "no answer from the trainer to op code 0x05 after 3 attempts")
        #expect("\(TrainerError.outOfRange(.aboveMaximum(field: "target power (W)", value: 2001, maximum: 2000)))"
            == "target refused: target power (W) 2001.0 is above the supported maximum 2000.0")
    }
}
