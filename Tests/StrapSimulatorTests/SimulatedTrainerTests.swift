import Testing
import StrapGATT
@testable import StrapSimulator

/// The simulated FTMS trainer answers its control point byte for byte as a real one does, loses
/// control with its link, and its power follows a target with the brake's lag (simulated time).
@Suite struct SimulatedTrainerTests {
    /// A model already under control at t = 0.
    func controlled(seed: UInt64 = 3) -> SimulatedTrainerModel {
        var m = SimulatedTrainerModel(seed: seed)
        #expect(m.write([0x00], at: 0)?.indication == [0x80, 0x00, 0x01])
        return m
    }

    @Test func requestControlThenTargetPower() {
        var m = controlled()
        // 250 W = 0x00FA: success, then Machine Status 0x08 Target Power Changed with the value.
        #expect(m.write([0x05, 0xFA, 0x00], at: 1) == .init(indication: [0x80, 0x05, 0x01], statuses: [[0x08, 0xFA, 0x00]]))
        #expect(m.target == .power(250))
        // Request Control again while holding it: still success, nothing notified.
        #expect(m.write([0x00], at: 2) == .init(indication: [0x80, 0x00, 0x01], statuses: []))
    }

    @Test func everyProcedureButRequestControlNeedsControl() {
        var m = SimulatedTrainerModel(seed: 1)
        for request in [[0x01], [0x05, 0x64, 0x00], [0x04, 0x28], [0x11, 0, 0, 0x2C, 0x01, 40, 51], [0x07], [0x08, 0x01]] as [[UInt8]] {
            #expect(m.write(request, at: 1) == .init(indication: [0x80, request[0], 0x05], statuses: []), "\(request)")
        }
        #expect(m.target == nil && !m.controlled)
    }

    @Test func targetsOutsideTheSupportedRangesAreInvalidParameters() {
        var m = controlled()
        // 2001 W (0x07D1) and -1 W: outside 0–2000.
        #expect(m.write([0x05, 0xD1, 0x07], at: 1) == .init(indication: [0x80, 0x05, 0x03], statuses: []))
        #expect(m.write([0x05, 0xFF, 0xFF], at: 1) == .init(indication: [0x80, 0x05, 0x03], statuses: []))
        // The edges are inside.
        #expect(m.write([0x05, 0xD0, 0x07], at: 1)?.indication == [0x80, 0x05, 0x01])
        #expect(m.write([0x05, 0x00, 0x00], at: 1)?.indication == [0x80, 0x05, 0x01])
        // Resistance 20.1 (201 tenths) is above 20.0; 4.0 is fine and notified as 0x07.
        #expect(m.write([0x04, 201], at: 1) == .init(indication: [0x80, 0x04, 0x03], statuses: []))
        #expect(m.write([0x04, 40], at: 1) == .init(indication: [0x80, 0x04, 0x01], statuses: [[0x07, 40]]))
        #expect(m.target == .resistance(40))
        // A wrong parameter length is an invalid parameter too.
        #expect(m.write([0x05, 0x64], at: 1)?.indication == [0x80, 0x05, 0x03])
    }

    @Test func simulationParametersAreCheckedAndNotifiedAsOpCode0x12() {
        var m = controlled()
        // Wind 0, grade 3.00 % (300 = 0x012C), Crr 0.0040, Cw 0.51 kg/m.
        let params: [UInt8] = [0x00, 0x00, 0x2C, 0x01, 40, 51]
        #expect(m.write([0x11] + params, at: 1) == .init(indication: [0x80, 0x11, 0x01], statuses: [[0x12] + params]))
        // Grade 45 % (4500 = 0x1194) is refused.
        #expect(m.write([0x11, 0, 0, 0x94, 0x11, 40, 51], at: 1)?.indication == [0x80, 0x11, 0x03])
        #expect(m.target == .simulation(IndoorBikeSimulationParameters(windSpeed: Int16(0), grade: Int16(300), rollingResistance: UInt8(40), windResistance: UInt8(51))))
    }

    @Test func stopPauseAndStartResumeNotifyOnlyChanges() {
        var m = controlled()
        #expect(m.write([0x07], at: 1) == .init(indication: [0x80, 0x07, 0x01], statuses: []), "already running")
        #expect(m.write([0x08, 0x02], at: 1) == .init(indication: [0x80, 0x08, 0x01], statuses: [[0x02, 0x02]]))
        #expect(m.paused)
        #expect(m.write([0x08, 0x01], at: 1) == .init(indication: [0x80, 0x08, 0x01], statuses: []))
        #expect(m.write([0x07], at: 1) == .init(indication: [0x80, 0x07, 0x01], statuses: [[0x04]]))
        #expect(!m.paused)
        // Stop or pause takes only 1 or 2.
        #expect(m.write([0x08, 0x03], at: 1)?.indication == [0x80, 0x08, 0x03])
    }

    @Test func resetDropsTargetAndControlAndNotifiesReset() {
        var m = controlled()
        _ = m.write([0x05, 0x2C, 0x01], at: 1)
        #expect(m.write([0x01], at: 2) == .init(indication: [0x80, 0x01, 0x01], statuses: [[0x01]]))
        #expect(m.target == nil && !m.controlled)
        #expect(m.write([0x05, 0x2C, 0x01], at: 3)?.indication == [0x80, 0x05, 0x05], "control must be requested again")
    }

    @Test func unknownAndUnsupportedOpCodes() {
        var m = controlled()
        // 0x7F is no FTMS op code; 0x02 (target speed) and 0x06 (target heart rate) are FTMS's
        // but not this bike's (their Feature bits are clear).
        #expect(m.write([0x7F, 0x01], at: 1) == .init(indication: [0x80, 0x7F, 0x02], statuses: []))
        #expect(m.write([0x02, 0x10, 0x0E], at: 1)?.indication == [0x80, 0x02, 0x02])
        #expect(m.write([0x06, 140], at: 1)?.indication == [0x80, 0x06, 0x02])
        #expect(m.write([], at: 1) == nil)
    }

    @Test func theConnectReadsOfferPowerResistanceAndSimulation() throws {
        var reads: [GATTCharacteristic: [UInt8]] = [:]
        for case let .read(c, v) in SimulatedTrainerControl.connectReads { reads[c] = v }
        let feature = try FitnessMachineFeature.decode(try #require(reads[.fitnessMachineFeature]))
        #expect(feature.powerTargetSupported && feature.resistanceTargetSupported && feature.indoorBikeSimulationSupported)
        #expect(feature.powerMeasurementSupported && feature.cadenceSupported)
        #expect(try SupportedRange.decode(.supportedPowerRange, try #require(reads[.supportedPowerRange]))
                == SupportedRange(minimum: 0, maximum: 2000, increment: 1))
        #expect(reads[.supportedResistanceLevelRange] == [0x00, 0x00, 0xC8, 0x00, 0x0A, 0x00])
    }

    /// First order, τ = 1.5 s: 63 % of the step after 1.5 s, 95 % after 4.5 s. The rider's
    /// 150 W to a 300 W target.
    @Test func powerFollowsTheTargetWithTheBrakesLag() {
        var m = controlled()
        #expect(m.power == 150)
        _ = m.write([0x05, 0x2C, 0x01], at: 10)
        m.advance(to: 10.5)
        #expect(abs(m.power - (300 - 150 * 0.7165)) < 0.5, "\(m.power)")     // e^(−0.5/1.5)
        m.advance(to: 11.5)
        #expect(abs(m.power - (300 - 150 * 0.3679)) < 0.5, "\(m.power)")
        m.advance(to: 14.5)
        #expect(abs(m.power - (300 - 150 * 0.0498)) < 0.5, "\(m.power)")
        // Measured power carries at most ±2 % noise around the brake's.
        for k in 1...100 {
            let t = 14.5 + Double(k)
            let measured = Double(m.measurement(at: t).instantaneousPower ?? -1)
            #expect(abs(measured - m.power) <= m.power * 0.02 + 0.5, "at \(t): \(measured) against \(m.power)")
        }
        // Reset: back to the rider's own power, with the same lag.
        _ = m.write([0x01], at: 200)
        m.advance(to: 201.5)
        #expect(abs(m.power - (150 + 150 * 0.3679)) < 0.5, "\(m.power)")
    }

    /// A dropout takes control and the target with it: after the reconnect the trainer refuses a
    /// target until control is requested again, and its power heads back to the rider's.
    @Test func aLinkDropLosesControlAndTarget() throws {
        var trainer = SimulatedTrainer(index: 0, seed: 5, dropouts: DropoutSchedule(meanInterval: 60, minimumDuration: 5, maximumDuration: 5))
        // Control and a target at t = 0, before the first dropout can have begun.
        #expect(trainer.control.write(.fitnessMachineControlPoint, [0x00], at: 0) != .linkDown)
        guard case .answered = trainer.control.write(.fitnessMachineControlPoint, [0x05, 0xC8, 0x00], at: 0) else {
            Issue.record("target refused")
            return
        }
        // Up to the first dropout.
        var events = trainer.advance(to: 0)
        #expect(events.first?.event == .connected)
        var dropped: Double?
        while dropped == nil {
            events = trainer.advance(to: trainer.nextEventTime)
            dropped = events.first { if case .disconnected = $0.event { true } else { false } }?.time
        }
        #expect(trainer.control.write(.fitnessMachineControlPoint, [0x00], at: dropped!) == .linkDown)
        #expect(trainer.control.withModel { !$0.controlled && $0.target == nil })
        // Back up: the Feature and ranges are read again, and a target needs control first.
        var restored: Double?
        while restored == nil {
            events = trainer.advance(to: trainer.nextEventTime)
            restored = events.first { $0.event == .connected }?.time
        }
        let reads = events.compactMap { if case let .read(c, _) = $0.event { c } else { nil } }
        #expect(reads.contains(.fitnessMachineFeature) && reads.contains(.supportedPowerRange) && reads.contains(.supportedResistanceLevelRange))
        #expect(trainer.control.write(.fitnessMachineControlPoint, [0x05, 0xC8, 0x00], at: restored!)
                == .answered(.init(indication: [0x80, 0x05, 0x05], statuses: []), connection: 1))
        #expect(trainer.control.write(.indoorBikeData, [0x00], at: restored!) == .refused("indoor-bike-data is not writable"))
    }

    /// An hour of Indoor Bike Data: real 0x2AD2 bytes with speed, cadence and power, 1 Hz.
    @Test func indoorBikeDataDecodesAtOneHertz() throws {
        var trainer = SimulatedTrainer(index: 0, seed: 9, dropouts: .none)
        var powers: [Int16] = []
        for (_, event) in trainer.advance(to: 600) {
            guard case let .notification(c, v) = event else { continue }
            #expect(c == .indoorBikeData)
            let d = try IndoorBikeData.decode(v)
            #expect(d.warnings.isEmpty && !d.moreData)
            let speed = try #require(d.speedMetresPerSecond), cadence = try #require(d.cadenceRPM)
            #expect(speed > 8 && speed < 11 && cadence >= 88 && cadence <= 92, "\(speed) m/s, \(cadence) rpm")
            powers.append(try #require(d.instantaneousPower))
        }
        #expect(powers.count == 600 && powers.allSatisfy { $0 >= 147 && $0 <= 153 })
        #expect(Simulation(kinds: [.hr, .trainer]).devices.map(\.identity.model) == ["SIM-HR", "SIM-FTMS"])
        #expect(Simulation(kinds: [.trainer]).trainers.keys.sorted() == ["5E:1A:00:00:54:00"])
    }
}
