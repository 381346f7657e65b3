import StrapGATT
import StrapModel
import Testing
@testable import StrapTrainer

/// Disconnects and reconnects, refusals before any write, and release (docs/trainer.md), as
/// scripted exchanges (`Script`).
@Suite struct TrainerLinkAndReleaseTests {
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

    /// The trainer's Machine Status "reset" may come after its indication of our reset (the
    /// simulated trainer's order): that is our reset's echo, not a reset of its own; one that
    /// comes later, with a target held again, is the trainer's.
    @Test func theStatusEchoOfOurResetAfterItsAnswerIsNoAlert() throws {
        var s = Script()
        s.connect()
        try s.target(.power(watts: 350))
        s.answer()
        s.answer()
        s.release()
        s.answer()
        s.now = 40
        s.on(.status(.reset))
        #expect(s.alerts == [.released])
        #expect(s.control.state == .idle)
        try s.target(.power(watts: 200))
        s.answer()
        s.answer()
        s.now = 500
        s.on(.status(.reset))
        #expect(s.alerts == [.released, .trainerReset])
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
