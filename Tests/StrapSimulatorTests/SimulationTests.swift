import Testing
import StrapGATT
@testable import StrapSimulator

/// The simulator emits real GATT bytes: everything it sends must decode, and what our
/// derivation makes of it must match the ride it simulated.
@Suite struct SimulationTests {
    @Test func defaultIsOneStrapAndOneSpeedCadenceSensor() {
        let s = Simulation()
        #expect(s.devices.map(\.identity.model) == ["SIM-HR", "SIM-CSC"])
        #expect(Simulation(count: 4).devices.map(\.identity.model) == ["SIM-HR", "SIM-CSC", "SIM-RSC", "SIM-HR"])
        #expect(Set(Simulation(count: 6).devices.map(\.identity.address)).count == 6)
        // A power meter only when named: `--simulate=N` keeps cycling HR, CSC, RSC.
        #expect(Simulation(kinds: [.hr, .power]).devices.map(\.identity.model) == ["SIM-HR", "SIM-CPS"])
        #expect(Simulation(count: 8).devices.allSatisfy { $0.identity.model != "SIM-CPS" })
    }

    /// An hour of the power meter: real 0x2A63 bytes, a ride averaging about 200 W with
    /// intervals near 300 W and rests, the left pedal's share near 50 %, and a cadence from
    /// the crank revolution data (CSC rules, 1/1024 s) that matches the effort, across wraps.
    @Test func powerMeterRidesAroundTwoHundredWattsWithIntervals() throws {
        var meter = SimulatedPowerMeter(index: 0, seed: 17, dropouts: .none)
        var derivation = CSCDerivation()
        var watts: [Double] = [], cadences: [Double] = []
        var balances: [Double] = [], pedallingWatts: [Double] = []
        var previousCrank: CyclingPowerMeasurement.CrankRevolutionData?
        var crankWraps = 0, reads: [GATTCharacteristic] = []
        for (time, event) in meter.advance(to: 3600) {
            switch event {
            case let .notification(characteristic, value):
                #expect(characteristic == .cyclingPowerMeasurement)
                let m = try CyclingPowerMeasurement.decode(value)
                #expect(m.warnings.isEmpty && m.pedalPowerBalanceReference == .left && m.wheel == nil)
                watts.append(Double(m.instantaneousPower))
                if let b = m.pedalPowerBalancePercent { balances.append(b) } else { #expect(m.instantaneousPower == 0) }
                let crank = try #require(m.crank)
                if let p = previousCrank, crank.revolutions < p.revolutions { crankWraps += 1 }
                let fresh = previousCrank.map { $0.eventTime != crank.eventTime } ?? false
                previousCrank = crank
                let out = derivation.update(m, receivedAt: time)
                #expect(!out.warnings.contains(.implausibleCadence), "at \(time)")
                // A new crank event: the rider pedals (while stopping, the derivation holds decaying values).
                if fresh, let c = out.cadence {
                    cadences.append(c)
                    pedallingWatts.append(Double(m.instantaneousPower))
                }
            case let .read(characteristic, _): reads.append(characteristic)
            case .connected: #expect(time == 0)
            case .disconnected: Issue.record("dropout at \(time) with dropouts off")
            }
        }
        #expect(watts.count == 3600)
        let mean = watts.reduce(0, +) / Double(watts.count)
        #expect(mean > 170 && mean < 240, "mean \(mean) W")
        #expect(watts.filter { $0 > 260 }.count > 300, "intervals")
        #expect(watts.filter { $0 == 0 }.count > 30, "rests")
        #expect(balances.allSatisfy { $0 >= 46 && $0 <= 54 } && balances.count > 3000)
        #expect(crankWraps >= 1)
        #expect(cadences.count > 3000 && cadences.allSatisfy { $0 > 75 && $0 < 110 }, "\(cadences.min()!)–\(cadences.max()!)")
        // Cadence and power go together: pedalling is an effort (a block may turn to rest between two events).
        #expect(pedallingWatts.filter { $0 > 150 }.count > pedallingWatts.count * 95 / 100)
        #expect(reads.contains(.cyclingPowerFeature) && reads.contains(.sensorLocation))
    }

    @Test func sameSeedSameSession() {
        var a = Simulation(count: 3, seed: 7)
        var b = Simulation(count: 3, seed: 7)
        let ea = a.advance(to: 300), eb = b.advance(to: 300)
        #expect(ea.count == eb.count && ea.count > 800)
        #expect(zip(ea, eb).allSatisfy { $0.time == $1.time && $0.event == $1.event })
    }

    /// `make demo` (`--simulate-scenario demo`): whatever the seed, the bike rides and the heart
    /// rate climbs through the zones while the demo watches (its first minute).
    @Test(arguments: [1, 2, 99, 12345] as [UInt64])
    func theDemoScenarioRidesAndClimbsThroughTheZones(seed: UInt64) throws {
        var s = Simulation(count: 3, seed: seed, scenario: .demo)
        var derivation: CSCDerivation?
        var heartRates: [(Double, Int)] = []
        var speeds: [Double] = [], cadences: [Double] = []
        var connected = true
        for (time, _, event) in s.advance(to: 60) {
            switch event {
            case let .notification(.heartRateMeasurement, value):
                let m = try HeartRateMeasurement.decode(value)
                #expect(m.contact != .notDetected, "contact lost at \(time)")
                heartRates.append((time, Int(m.heartRate)))
            case let .notification(.cscMeasurement, value):
                let m = try CSCMeasurement.decode(value)
                if derivation == nil { derivation = CSCDerivation(configuration: .init(wheelCircumference: 2.105)) }
                let out = derivation!.update(m, receivedAt: time)
                if time > 3, let v = out.speed { speeds.append(v) }
                if time > 3, let c = out.cadence { cadences.append(c) }
            case .disconnected: connected = false
            default: break
            }
        }
        #expect(connected, "no dropout during the demo")
        #expect(!speeds.isEmpty && speeds.allSatisfy { $0 > 7 && $0 < 11 }, "\(speeds)")
        #expect(!cadences.isEmpty && cadences.allSatisfy { $0 > 75 && $0 < 105 }, "\(cadences)")
        let early = heartRates.filter { $0.0 < 10 }.map(\.1), late = heartRates.filter { $0.0 > 42 }.map(\.1)
        #expect(early.allSatisfy { $0 < 110 }, "\(early)")
        #expect(late.allSatisfy { $0 > 160 }, "\(late)")
        // Climbing: every 10 s window higher than the one before, from 10 s to 40 s.
        let means = stride(from: 10.0, to: 40, by: 10).map { t0 in
            let w = heartRates.filter { $0.0 >= t0 && $0.0 < t0 + 10 }.map { Double($0.1) }
            return w.reduce(0, +) / Double(max(1, w.count))
        }
        #expect(zip(means, means.dropFirst()).allSatisfy { $0 < $1 }, "\(means)")
    }

    @Test func everyNotificationDecodesAndTheStrapIsPlausible() throws {
        var s = Simulation(count: 3, seed: 11, dropouts: .none)
        var hr = 0, csc = 0, rsc = 0, rrBeats = 0, contactLost = 0
        var rrSeconds = 0.0
        var timeline = BeatTimeline()
        var gaps = 0
        for (time, device, event) in s.advance(to: 3600) {
            guard case let .notification(characteristic, value) = event else { continue }
            switch characteristic {
            case .heartRateMeasurement:
                let m = try HeartRateMeasurement.decode(value)
                hr += 1
                if m.contact == .notDetected { contactLost += 1; #expect(m.heartRate == 0) } else {
                    #expect(m.heartRate >= 40 && m.heartRate <= 200, "\(device.name) at \(time)")
                }
                for rr in m.rrIntervals ?? [] { rrSeconds += Double(rr) / 1024; rrBeats += 1 }
                gaps += timeline.append(rrIntervals: m.rrIntervals ?? [], receivedAt: time).filter(\.gapBefore).count
            case .cscMeasurement: _ = try CSCMeasurement.decode(value); csc += 1
            case .rscMeasurement: _ = try RSCMeasurement.decode(value); rsc += 1
            case .batteryLevel: #expect(try BatteryLevel.decode(value).percent <= 100)
            default: Issue.record("unexpected notification \(characteristic)")
            }
        }
        #expect(hr == 3600 && csc == 3600 && rsc == 3600)
        #expect(rrBeats > 3600)
        // Beats cover the hour except the contact-loss episodes (no RR while off the skin).
        #expect(rrSeconds > 3000 && rrSeconds <= 3601)
        #expect(contactLost > 0 && contactLost < 400)
        #expect(gaps <= 20)
    }

    @Test func rideCountersWrapAndDeriveWithoutGlitches() throws {
        var sensor = SimulatedSpeedCadenceSensor(index: 0, seed: 5, dropouts: .none)
        var derivation = CSCDerivation(configuration: .init(wheelCircumference: sensor.wheelCircumference))
        var sawWheelWrap = false, sawCrankWrap = false, sawStop = false
        var previous: CSCMeasurement?
        var first: UInt32?, last: UInt32 = 0, rebaselines = 0
        for (time, event) in sensor.advance(to: 2 * 3600) {
            guard case let .notification(.cscMeasurement, value) = event else { continue }
            let m = try CSCMeasurement.decode(value)
            if let p = previous?.wheel, let w = m.wheel, w.revolutions < p.revolutions { sawWheelWrap = true }
            if let p = previous?.crank, let c = m.crank, c.revolutions < p.revolutions { sawCrankWrap = true }
            let out = derivation.update(m, receivedAt: time)
            #expect(!out.warnings.contains(.implausibleSpeed) && !out.warnings.contains(.implausibleCadence), "at \(time)")
            if out.speed == 0 { sawStop = true }
            if out.warnings.contains(.rebaselined) { rebaselines += 1 }
            first = first ?? m.wheel!.revolutions
            last = m.wheel!.revolutions
            if let speed = out.speed { #expect(speed <= 13.5) }
            previous = m
        }
        #expect(sawWheelWrap && sawCrankWrap && sawStop)
        // Distance equals the wheel revolutions × circumference, less what each restart after a
        // stop (Δt > 10 s: re-baseline, by design) did not count.
        let truth = Double(last &- first!) * sensor.wheelCircumference
        #expect(truth > 20_000)
        #expect(derivation.totalDistance <= truth + 1e-6)
        #expect(truth - derivation.totalDistance <= Double(rebaselines) * 2 * sensor.wheelCircumference + 1e-6)
    }

    @Test func footPodDistanceWrapsAndIsCounted() throws {
        var pod = SimulatedFootPod(index: 0, seed: 3, dropouts: .none)
        var counter = CumulativeCounter.rscTotalDistance()
        var wrapped = false
        for (time, event) in pod.advance(to: 1800) {
            guard case let .notification(.rscMeasurement, value) = event else { continue }
            let m = try RSCMeasurement.decode(value)
            if case .wrapped = counter.update(UInt64(m.totalDistanceRaw!), at: time) { wrapped = true }
            #expect(m.speed > 1 && m.speed < 5)
        }
        #expect(wrapped)
        let metres = Double(counter.total) / 10
        #expect(metres > 1800 * 1.2 && metres < 1800 * 4.9)
    }

    @Test func dropoutsDisconnectThenReconnectWithReads() {
        var strap = SimulatedHeartRateStrap(index: 0, seed: 9, dropouts: DropoutSchedule(meanInterval: 120, minimumDuration: 5, maximumDuration: 10))
        var connected = true, drops = 0, connects = 0, notificationsWhileDown = 0, readsAfterReconnect = 0
        var lastDrop = 0.0
        for (time, event) in strap.advance(to: 3600) {
            switch event {
            case .disconnected:
                #expect(connected)
                connected = false
                drops += 1
                lastDrop = time
            case .connected:
                #expect(!connected || time == 0)
                if time > 0 { #expect(time - lastDrop >= 5 && time - lastDrop <= 10) }
                connected = true
                connects += 1
            case .notification: if !connected { notificationsWhileDown += 1 }
            case .read: if connected { readsAfterReconnect += 1 }
            }
        }
        #expect(drops > 5 && notificationsWhileDown == 0 && connects >= drops && readsAfterReconnect == 6 * connects)
    }

    @Test func nextEventTimeIsWhenTheNextEventHappens() {
        var simulation = Simulation(count: 4, seed: 5, dropouts: DropoutSchedule(meanInterval: 20))
        #expect(simulation.nextEventTime == 0)  // announcements first
        _ = simulation.advance(to: 0)
        var checked = 0
        var t = 0.0
        while t < 300 {
            let next = simulation.nextEventTime
            #expect(next > t)
            // Nothing before it, something at it: a driver sleeping until then misses nothing.
            #expect(simulation.advance(to: next - 1e-6).isEmpty)
            let due = simulation.advance(to: next)
            #expect(!due.isEmpty || simulation.nextEventTime > next)
            #expect(due.allSatisfy { $0.time == next })
            t = next
            checked += due.isEmpty ? 0 : 1
        }
        #expect(checked > 300)
    }

    @Test func advancingInSmallStepsEqualsOneBigStep() {
        var a = SimulatedHeartRateStrap(index: 0, seed: 21)
        var b = SimulatedHeartRateStrap(index: 0, seed: 21)
        var small: [SimulatedEvent] = []
        var t = 0.0
        while t < 600 { t += 0.25; small += a.advance(to: t).map(\.event) }
        #expect(small == b.advance(to: 600).map(\.event))
    }
}
