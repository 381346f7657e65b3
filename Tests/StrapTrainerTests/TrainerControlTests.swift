import StrapGATT
import StrapModel
import Testing
@testable import StrapTrainer

/// Control before a target, one request in flight, timeouts and the retry bound, result codes,
/// Control Not Permitted and control lost (docs/trainer.md), as scripted exchanges (`Script`).
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
}
