import Testing
import StrapGATT
import StrapModel
import StrapSimulator
@testable import StrapIngest

/// Cycling Power Measurement and Indoor Bike Data as samples (docs/decoding.md#power-and-trainer-samples).
/// Packets are real bytes: the CP vectors of CyclingPowerTests, Auuki's FTMS vectors and an
/// Elite Suito capture from FitnessMachineTests.
@Suite struct PowerIngestTests {
    static let meter = Device(id: "5E:63:00:00:00:00", address: "5E:63:00:00:00:00", name: "Power meter")
    let t0: Millis = 1_700_000_000_000

    func types(_ out: DeviceIngest.Output) -> [QuantityType] { out.samples.map(\.type) }
    func value(_ out: DeviceIngest.Output, _ type: QuantityType) -> Double? { out.samples.first { $0.type == type }?.value }

    /// Flags 0x0003: balance present, reference left; 200 W, balance 0x65 = 50.5 %.
    @Test func powerAndBalanceOfTheLeftPedal() {
        var ingest = DeviceIngest(device: Self.meter)
        let out = ingest.ingest(.cyclingPowerMeasurement, [0x03, 0x00, 0xC8, 0x00, 0x65], wall: t0, monotonic: 0)
        #expect(out.rejected == nil)
        #expect(types(out) == [.cyclingPower, .cyclingPowerBalance])
        #expect(out.samples[0].value == 200 && out.samples[0].start == t0 && out.samples[0].end == t0)
        #expect(out.samples[1].value == 50.5 && out.samples[1].metadata["reference"] == "left")
        // Flags 0x0001: the sensor does not say whose pedal.
        let unknown = ingest.ingest(.cyclingPowerMeasurement, [0x01, 0x00, 0xC8, 0x00, 0x64], wall: t0, monotonic: 1)
        #expect(unknown.samples[1].value == 50 && unknown.samples[1].metadata["reference"] == "unknown")
    }

    @Test func balanceAbove100PercentIsDroppedThePowerKept() {
        var ingest = DeviceIngest(device: Self.meter)
        let out = ingest.ingest(.cyclingPowerMeasurement, [0x01, 0x00, 0xC8, 0x00, 0xD0], wall: t0, monotonic: 0)
        #expect(types(out) == [.cyclingPower] && out.samples[0].value == 200)
    }

    /// 0xFF9C is −100 W (a trainer braking): kept as sent.
    @Test func negativePowerIsKept() {
        var ingest = DeviceIngest(device: Self.meter)
        #expect(value(ingest.ingest(.cyclingPowerMeasurement, [0x00, 0x00, 0x9C, 0xFF], wall: t0, monotonic: 0), .cyclingPower) == -100)
    }

    /// The wheel event time is in 1/2048 s, the crank's in 1/1024 s: 2 wheel revolutions over
    /// 2048 wheel ticks is 1 s, so 4.21 m/s at 2.105 m (read as 1/1024 s it would be 2.105).
    @Test func wheelAndCrankDataBecomeSpeedCadenceAndDistance() {
        var ingest = DeviceIngest(device: Self.meter, settings: .init(wheelCircumference: 2.105))
        // CyclingPowerTests' vector: wheel 256 revs at 2048/2048 s, crank 42 at 1024/1024 s.
        let first: [UInt8] = [0x30, 0x00, 0x64, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x2A, 0x00, 0x00, 0x04]
        #expect(types(ingest.ingest(.cyclingPowerMeasurement, first, wall: t0, monotonic: 10)) == [.cyclingPower])
        let second: [UInt8] = [0x30, 0x00, 0x6E, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x10, 0x2B, 0x00, 0x00, 0x08]
        let out = ingest.ingest(.cyclingPowerMeasurement, second, wall: t0 + 1000, monotonic: 11)
        #expect(types(out) == [.cyclingPower, .cyclingSpeed, .cyclingCadence, .cyclingDistance])
        #expect(value(out, .cyclingPower) == 110)
        #expect(abs(value(out, .cyclingSpeed)! - 4.21) < 1e-9 && value(out, .cyclingCadence) == 60)
        let distance = out.samples[3]
        #expect(abs(distance.value - 4.21) < 1e-9 && distance.start == t0 && distance.end == t0 + 1000)
    }

    /// Both counters and both event times wrap between two packets 2 s apart.
    @Test func revolutionCountersAndEventTimesWrap() {
        var ingest = DeviceIngest(device: Self.meter, settings: .init(wheelCircumference: 2))
        let before = CyclingPowerMeasurement(instantaneousPower: 180, wheel: .init(revolutions: 0xFFFF_FFFF, eventTime: 0xF800),
                                             crank: .init(revolutions: 0xFFFF, eventTime: 0xFC00))
        let after = CyclingPowerMeasurement(instantaneousPower: 180, wheel: .init(revolutions: 3, eventTime: 0x0800),
                                            crank: .init(revolutions: 1, eventTime: 0x0400))
        _ = ingest.ingest(.cyclingPowerMeasurement, before.encoded(), wall: t0, monotonic: 0)
        let out = ingest.ingest(.cyclingPowerMeasurement, after.encoded(), wall: t0 + 2000, monotonic: 2)
        // 4 revs × 2 m over 4096/2048 s; 2 crank revs over 2048/1024 s.
        #expect(value(out, .cyclingSpeed) == 4 && value(out, .cyclingCadence) == 60 && value(out, .cyclingDistance) == 8)
        #expect(out.samples.allSatisfy { $0.metadata["warnings"] == nil })
    }

    /// A repeated crank event time is no new revolution: held, then 0 once the stop timeout passed.
    @Test func staleCrankEventsDecayToZero() {
        var ingest = DeviceIngest(device: Self.meter)
        func packet(_ revs: UInt16, _ time: UInt16, at s: Double) -> DeviceIngest.Output {
            let m = CyclingPowerMeasurement(instantaneousPower: 0, crank: .init(revolutions: revs, eventTime: time))
            return ingest.ingest(.cyclingPowerMeasurement, m.encoded(), wall: t0 + Millis(s * 1000), monotonic: s)
        }
        _ = packet(10, 0, at: 0)
        #expect(value(packet(11, 1024, at: 1), .cyclingCadence) == 60)
        #expect(value(packet(11, 1024, at: 2), .cyclingCadence) == 60)
        #expect(value(packet(11, 1024, at: 4.5), .cyclingCadence) == 0)
    }

    /// A rest longer than the crank clock's 64 s period while the meter keeps notifying the
    /// old event time: the next new event re-baselines (70 s is 6 s modulo 2¹⁶ ticks, which
    /// would read as 10 rpm).
    @Test func aStopLongerThanTheEventClockPeriodRebaselines() {
        var ingest = DeviceIngest(device: Self.meter)
        func packet(_ revs: UInt16, _ time: UInt16, at s: Double) -> DeviceIngest.Output {
            let m = CyclingPowerMeasurement(instantaneousPower: 0, crank: .init(revolutions: revs, eventTime: time))
            return ingest.ingest(.cyclingPowerMeasurement, m.encoded(), wall: t0 + Millis(s * 1000), monotonic: s)
        }
        _ = packet(10, 0, at: 0)
        #expect(value(packet(11, 1024, at: 1), .cyclingCadence) == 60)
        for s in stride(from: 2.0, through: 71, by: 1) { _ = packet(11, 1024, at: s) }
        let resumed = packet(12, UInt16(truncatingIfNeeded: 72 * 1024), at: 71.5)
        #expect(value(resumed, .cyclingCadence) == nil)
        #expect(resumed.samples.first { $0.type == .cyclingCadence } == nil)
        #expect(value(packet(13, UInt16(truncatingIfNeeded: 73 * 1024), at: 72.5), .cyclingCadence) == 60)
    }

    /// Accumulated energy (flags 0x0800, 10 kJ) is mechanical work: no energy sample.
    @Test func accumulatedEnergyIsNotAnEnergySample() {
        var ingest = DeviceIngest(device: Self.meter)
        _ = ingest.ingest(.cyclingPowerMeasurement, [0x00, 0x08, 0x64, 0x00, 0x0A, 0x00], wall: t0, monotonic: 0)
        let out = ingest.ingest(.cyclingPowerMeasurement, [0x00, 0x08, 0x64, 0x00, 0x0B, 0x00], wall: t0 + 1000, monotonic: 1)
        #expect(types(out) == [.cyclingPower])
    }

    @Test func reconnectMakesTheNextRevolutionDataABaseline() {
        var ingest = DeviceIngest(device: Self.meter)
        let a = CyclingPowerMeasurement(instantaneousPower: 150, crank: .init(revolutions: 5, eventTime: 0))
        let b = CyclingPowerMeasurement(instantaneousPower: 150, crank: .init(revolutions: 6, eventTime: 1024))
        _ = ingest.ingest(.cyclingPowerMeasurement, a.encoded(), wall: t0, monotonic: 0)
        ingest.linkRestarted()
        #expect(types(ingest.ingest(.cyclingPowerMeasurement, b.encoded(), wall: t0 + 1000, monotonic: 1)) == [.cyclingPower])
    }

    @Test func truncatedPowerPacketIsRejected() {
        var ingest = DeviceIngest(device: Self.meter)
        let out = ingest.ingest(.cyclingPowerMeasurement, [0x01, 0x00, 0xC8, 0x00], wall: t0, monotonic: 0)
        #expect(out.samples.isEmpty)
        #expect(out.rejected == .truncated(.cyclingPowerMeasurement, field: "pedal power balance", needed: 5, got: 4))
    }

    static let trainer = Device(id: "5E:D2:00:00:00:00", address: "5E:D2:00:00:00:00", name: "Trainer")

    /// Elite Suito capture, flags 0x0854: 17.21 km/h, 88 rpm, 3462 m, 69 W, 288 s elapsed.
    @Test func indoorBikeDataBecomesPowerSpeedCadenceAndDistanceIncrements() {
        var ingest = DeviceIngest(device: Self.trainer)
        let suito: [UInt8] = [0x54, 0x08, 0xB9, 0x06, 0xB0, 0x00, 0x86, 0x0D, 0x00, 0x45, 0x00, 0x20, 0x01]
        let out = ingest.ingest(.indoorBikeData, suito, wall: t0, monotonic: 0)
        #expect(out.rejected == nil)
        // The first total distance is a baseline.
        #expect(types(out) == [.cyclingPower, .cyclingSpeed, .cyclingCadence])
        #expect(value(out, .cyclingPower) == 69 && value(out, .cyclingCadence) == 88)
        #expect(abs(value(out, .cyclingSpeed)! - 17.21 / 3.6) < 1e-12)
        let next = IndoorBikeData(instantaneousSpeed: 1721, instantaneousCadence: 176, totalDistance: 3467, instantaneousPower: 70)
        let moved = ingest.ingest(.indoorBikeData, next.encoded(), wall: t0 + 1000, monotonic: 1)
        let distance = moved.samples.first { $0.type == .cyclingDistance }
        #expect(distance?.value == 5 && distance?.start == t0 && distance?.end == t0 + 1000)
        // The trainer was reset (its distance restarts from 0): what it counted since is added.
        let reset = IndoorBikeData(instantaneousSpeed: 1721, totalDistance: 4)
        #expect(value(ingest.ingest(.indoorBikeData, reset.encoded(), wall: t0 + 2000, monotonic: 2), .cyclingDistance) == 4)
    }

    /// Auuki's "speed-cadence-power-heartRate" vector: the trainer's heart rate (70) is not a
    /// heartRate sample.
    @Test func trainerHeartRateIsNotRecorded() {
        var ingest = DeviceIngest(device: Self.trainer)
        let out = ingest.ingest(.indoorBikeData, [68, 2, 170, 5, 46, 0, 24, 0, 70], wall: t0, monotonic: 0)
        #expect(types(out) == [.cyclingPower, .cyclingSpeed, .cyclingCadence])
        #expect(value(out, .cyclingPower) == 24 && value(out, .cyclingCadence) == 23)
        #expect(abs(value(out, .cyclingSpeed)! - 14.5 / 3.6) < 1e-12)
    }

    /// Packet 1 (More Data): 90 rpm, 250 W; packet 2 ends the record with 36 km/h. Samples
    /// come once, when the record is whole, at the last packet's arrival.
    @Test func aRecordSplitOverTwoPacketsYieldsSamplesOnce() {
        var ingest = DeviceIngest(device: Self.trainer)
        #expect(ingest.ingest(.indoorBikeData, [0x45, 0x00, 0xB4, 0x00, 0xFA, 0x00], wall: t0, monotonic: 0).samples.isEmpty)
        let out = ingest.ingest(.indoorBikeData, [0x00, 0x02, 0x10, 0x0E, 0x8C], wall: t0 + 40, monotonic: 0.04)
        #expect(types(out) == [.cyclingPower, .cyclingSpeed, .cyclingCadence])
        #expect(value(out, .cyclingPower) == 250 && value(out, .cyclingSpeed) == 10 && value(out, .cyclingCadence) == 90)
        #expect(out.samples.allSatisfy { $0.start == t0 + 40 })
    }

    /// A trainer that never sends More Data = 0: each repeated field flushes the last record.
    /// A reconnect drops half a record instead.
    @Test func unterminatedRecordsStillYieldSamplesAndReconnectDropsHalfARecord() {
        var ingest = DeviceIngest(device: Self.trainer)
        let half: [UInt8] = [0x45, 0x00, 0xB4, 0x00, 0xFA, 0x00]
        #expect(ingest.ingest(.indoorBikeData, half, wall: t0, monotonic: 0).samples.isEmpty)
        let flushed = ingest.ingest(.indoorBikeData, half, wall: t0 + 1000, monotonic: 1)
        #expect(types(flushed) == [.cyclingPower, .cyclingCadence] && value(flushed, .cyclingPower) == 250)
        ingest.linkRestarted()
        let speedOnly = ingest.ingest(.indoorBikeData, [0x00, 0x00, 0x10, 0x0E], wall: t0 + 9000, monotonic: 9)
        #expect(types(speedOnly) == [.cyclingSpeed])
    }

    @Test func truncatedIndoorBikeDataIsRejected() {
        var ingest = DeviceIngest(device: Self.trainer)
        let out = ingest.ingest(.indoorBikeData, [0x40, 0x00, 0x10, 0x0E, 0xFA], wall: t0, monotonic: 0)
        #expect(out.samples.isEmpty)
        #expect(out.rejected == .truncated(.indoorBikeData, field: "instantaneous power", needed: 6, got: 5))
    }

    /// Half an hour of the simulated power meter through the same ingest as a real one, with
    /// dropouts: nothing rejected, a power sample per notification, cadence from the crank.
    @Test func simulatedPowerMeterThroughIngest() {
        var simulation = Simulation(kinds: [.power], seed: 3, dropouts: DropoutSchedule(meanInterval: 600))
        var ingest: DeviceIngest?
        var counts: [QuantityType: Int] = [:]
        var notifications = 0, watts = 0.0
        for (time, identity, event) in simulation.advance(to: 1800) {
            var current = ingest ?? DeviceIngest(device: Device(id: identity.address, address: identity.address, name: identity.name))
            switch event {
            case let .notification(characteristic, value), let .read(characteristic, value):
                if case .notification = event { notifications += 1 }
                let out = current.ingest(characteristic, value, wall: t0 + Millis(time * 1000), monotonic: time)
                #expect(out.rejected == nil)
                for s in out.samples {
                    counts[s.type, default: 0] += 1
                    if s.type == .cyclingPower { watts += s.value }
                    if s.type == .cyclingPowerBalance { #expect(s.metadata["reference"] == "left" && abs(s.value - 50) <= 4) }
                }
            case .connected: current.linkRestarted()
            case .disconnected: break
            }
            ingest = current
        }
        #expect(counts[.cyclingPower] == notifications && notifications > 1600)
        #expect((counts[.cyclingPowerBalance] ?? 0) > notifications * 8 / 10)
        #expect((counts[.cyclingCadence] ?? 0) > notifications * 8 / 10 && counts[.cyclingSpeed] == nil)
        let mean = watts / Double(notifications)
        #expect(mean > 150 && mean < 260, "\(mean) W")
        #expect(ingest?.device.model == "SIM-CPS")
    }
}
