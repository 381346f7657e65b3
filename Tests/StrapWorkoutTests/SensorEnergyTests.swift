import Testing
import Foundation
import StrapGATT
import StrapModel
import StrapIngest
@testable import StrapWorkout

/// Active energy from the strap's Energy Expended, through the real ingest path.
@Suite struct SensorEnergyTests {
    /// 0x2A37: flags 0x06 (contact supported and detected), 0x08 adds Energy Expended (uint16 kJ).
    static func packet(_ bpm: UInt8, energy: UInt16?) -> [UInt8] {
        guard let energy else { return [0x06, bpm] }
        return [0x0E, bpm, UInt8(energy & 0xFF), UInt8(energy >> 8)]
    }

    @Test func counterResetAndSaturationMidWorkout() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running), connectedDevices: [W.strap.id]).id
        var ingest = DeviceIngest(device: W.strap)
        // Energy every 5 s (kJ): 100 baseline; 110, 120 (+10, +10); 3 (the strap restarted its
        // counter: +3); 13 (+10); 0xFFF8 (an implausible jump: counted as nothing); 0xFFFF (+7);
        // 0xFFFF twice (saturated: the daemon is told to reset it); 2 after the reset (the
        // counter passes 0xFFFF → 2: +3); 12 (+10). Counted: 53 kJ.
        let energy: [Int: UInt16] = [0: 100, 5: 110, 10: 120, 15: 3, 20: 13, 25: 0xFFF8, 30: 0xFFFF,
                                     35: 0xFFFF, 40: 0xFFFF, 45: 2, 50: 12]
        var saturatedAt: [Int] = []
        for s in 0...50 {
            let out = ingest.ingest(.heartRateMeasurement, Self.packet(140, energy: energy[s]),
                                    wall: W.t0 + Millis(s) * 1000, monotonic: Double(s))
            if out.changes.contains(.energySaturated) { saturatedAt.append(s) }
            for sample in out.samples { e.add(sample) }
        }
        #expect(saturatedAt == [35, 40])
        f.clock.now = W.t0 + 50_000
        let st = try e.statistics(id)
        #expect(st.activeEnergySource == "sensor")
        #expect(st.totals.activeEnergy!.isClose(to: 53 / 4.184, within: 1e-9))
        #expect(st.totals.heartRateSamples == 50, "the one stamped at the start does not count")
    }

    @Test func sensorEnergyReplacesTheEstimateOnceItArrives() {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: ["dev-h10"], profile: W.male35))
        for s in W.steadyHR(150, from: W.t0, to: W.t0 + 10_000) { b.add(s) }
        #expect(b.statistics(session: UUID(), state: .running, at: W.t0 + 10_000).activeEnergySource == "keytel")
        b.add(W.sensorEnergy(2.5, W.t0 + 5000, W.t0 + 10_000))
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 10_000)
        #expect(st.activeEnergySource == "sensor")
        #expect(st.totals.activeEnergy == 2.5)
    }

    @Test func incrementSpanningAPauseCountsItsActivePart() throws {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: ["dev-h10"], profile: nil))
        b.apply(.lap(time: W.t0 + 55_000, metadata: [:]))
        b.apply(.paused(time: W.t0 + 60_000))
        b.apply(.resumed(time: W.t0 + 80_000))
        // 10 kcal over [50 s, 70 s]: active 50…60 (half of it) → 5 kcal; lap 1 gets 50…55 (2.5),
        // lap 2 gets 55…60 (2.5).
        let counted1 = b.add(W.sensorEnergy(10, W.t0 + 50_000, W.t0 + 70_000))
        #expect(counted1)
        // Entirely inside the pause: nothing.
        let counted2 = b.add(W.sensorEnergy(4, W.t0 + 62_000, W.t0 + 78_000))
        #expect(!counted2)
        // Before the start, in part: [−10 s, 10 s] → 10 s of 20 → 3 kcal of 6.
        let counted3 = b.add(W.sensorEnergy(6, W.t0 - 10_000, W.t0 + 10_000))
        #expect(counted3)
        let st = b.statistics(session: UUID(), state: .running, at: W.t0 + 90_000)
        #expect(st.totals.activeEnergy == 8)
        #expect(st.laps[0].figures.activeEnergy == 5.5)
        #expect(st.laps[1].figures.activeEnergy == 2.5)
    }

    @Test func onlyTheHeartRateDevicesEnergyCounts() {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: ["dev-h10", "dev-tickr"], profile: nil))
        b.add(W.hr(120, W.t0 + 1000, W.strap))
        let counted4 = b.add(W.hr(125, W.t0 + 1500, W.strap2))
        #expect(!counted4, "a second strap does not double the figures")
        let counted5 = b.add(W.sensorEnergy(3, W.t0, W.t0 + 2000, W.strap2))
        #expect(!counted5)
        let counted6 = b.add(W.sensorEnergy(3, W.t0, W.t0 + 2000, W.strap))
        #expect(counted6)
        // The same sensor under a new Device instance (its Device Information was read).
        let renamed = Device(id: W.strap.id, address: W.strap.address, name: "Polar H10 1234", manufacturer: "Polar")
        let counted7 = b.add(W.hr(130, W.t0 + 2000, renamed))
        #expect(counted7)
    }

    /// A power meter's work over 24 % gross efficiency replaces the strap's energy and the
    /// estimate: each reading stands for the span since the previous one (5 s cap), pauses and
    /// dropouts add nothing, laps get their part.
    @Test func powerReplacesTheStrapsEnergyAndTheEstimate() {
        let meter = Device(id: "AA:00:00:00:00:07", address: "AA:00:00:00:00:07", name: "meter")
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: [W.strap.id, meter.id], profile: W.male35))
        for s in W.steadyHR(150, from: W.t0, to: W.t0 + 60_000) { b.add(s) }
        b.add(W.sensorEnergy(2.5, W.t0 + 5000, W.t0 + 10_000))
        #expect(b.statistics(session: UUID(), state: .running, at: W.t0 + 10_000).activeEnergySource == "sensor")
        let power = { (s: Int, w: Double) in Sample(type: .cyclingPower, value: w, start: W.t0 + Millis(s) * 1000, device: meter) }
        // 200 W each second for 20 s; a lap at 20 s; a 30 s dropout; 300 W at 50…60 s (the
        // first of those stands for 5 s only); a paused stretch counts nothing.
        var counted = 0
        for s in 1...20 where b.add(power(s, 200)) { counted += 1 }
        #expect(counted == 20)
        b.apply(.lap(time: W.t0 + 20_000, metadata: [:]))
        for s in 50...60 { b.add(power(s, 300)) }
        b.apply(.paused(time: W.t0 + 60_000))
        let whilePaused = b.add(power(61, 400))
        #expect(!whilePaused)
        let st = b.statistics(session: UUID(), state: .paused, at: W.t0 + 60_000)
        let kcal = { (joules: Double) in joules / 4_184 / 0.24 }
        #expect(st.activeEnergySource == "power")
        #expect(st.totals.activeEnergy!.isClose(to: kcal(20 * 200 + 15 * 300), within: 1e-9))
        #expect(st.laps[0].figures.activeEnergy!.isClose(to: kcal(20 * 200), within: 1e-9))
        #expect(st.laps[1].figures.activeEnergy!.isClose(to: kcal(15 * 300), within: 1e-9))
        // Another meter's power is not counted (one device per figure).
        let other = Device(id: "AA:00:00:00:00:08", address: "AA:00:00:00:00:08", name: "other")
        let fromOther = b.add(Sample(type: .cyclingPower, value: 500, start: W.t0 + 30_000, device: other))
        #expect(!fromOther)
    }
}
