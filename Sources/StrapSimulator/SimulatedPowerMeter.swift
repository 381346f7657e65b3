import StrapGATT

/// A crank power meter (Cycling Power 0x1818) as pedal-based ones send it: instantaneous power,
/// the left pedal's share of it, and crank revolution data (flags 0x0023) whose counter starts
/// just below 2¹⁶ so every session wraps it. The ride: steady blocks around 190 W, intervals
/// near 300 W and short rests, each 30–60 s, so an hour averages about 200 W.
public struct SimulatedPowerMeter: LinkDrivenDevice {
    public let identity: SimulatedIdentity
    var rng: SimulationRandom
    var link: LinkSchedule
    var crank: RevolutionCounter
    /// The effort of the current block; each notification adds its own noise to the power.
    var power = 0.0
    var cadence = 0.0
    var leftShare = 50.0
    var nextChange = 0.0
    var lastTime = 0.0
    var battery: UInt8 = 90
    var announced = false
    let scenario: Simulation.Scenario

    public init(index: Int, seed: UInt64, dropouts: DropoutSchedule = DropoutSchedule(), scenario: Simulation.Scenario = .random) {
        self.scenario = scenario
        var rng = SimulationRandom(seed: seed)
        identity = SimulatedIdentity(address: simulatedAddress(kind: 0x63, index: index), name: "Sim Power \(index)",
                                     manufacturer: "strapd simulator", model: "SIM-CPS", serial: "CPS\(seed % 100_000)",
                                     firmware: "1.0", services: [.cyclingPower, .battery, .deviceInformation])
        link = LinkSchedule(period: 1, phase: rng.uniform(0, 1), dropouts: dropouts, rng: &rng)
        crank = RevolutionCounter(count: 0xFFFF - UInt64(rng.next() % 200), modulus: 1 << 16)
        leftShare = rng.uniform(48, 52)
        if scenario == .demo { link.postponeDropouts(until: 120) }
        self.rng = rng
    }

    mutating func notifications(at t: Double) -> [(Double, SimulatedEvent)] {
        let watts = power > 0 ? max(0, power + 8 * rng.gaussian()) : 0
        // Nothing to share while the rider rests: the meter leaves the balance out.
        let balance: UInt8? = watts > 0 ? UInt8((2 * min(54, max(46, leftShare + 0.8 * rng.gaussian()))).rounded()) : nil
        let m = CyclingPowerMeasurement(instantaneousPower: Int16(watts.rounded()), pedalPowerBalance: balance,
                                        pedalPowerBalanceReference: .left,
                                        crank: .init(revolutions: UInt16(crank.count), eventTime: crank.eventTime))
        return [(t, .notification(characteristic: .cyclingPowerMeasurement, value: m.encoded()))]
    }

    func connectReads() -> [SimulatedEvent] {
        // Feature bits 0 (pedal power balance) and 3 (crank revolution data); location 5, left crank.
        [.read(characteristic: .cyclingPowerFeature, value: [0x09, 0x00, 0x00, 0x00]),
         .read(characteristic: .sensorLocation, value: [5]),
         .read(characteristic: .batteryLevel, value: [battery])]
    }

    mutating func progress(to t: Double) {
        while lastTime < t {
            if lastTime >= nextChange {
                // The demo rides steadily (no rest) while it is watched, like the CSC sensor.
                let demo = scenario == .demo && lastTime < Simulation.Scenario.demoRideSeconds
                switch demo ? 2 : rng.next() % 12 {
                case 0: power = 0; cadence = 0                                            // rest
                case 1, 3, 5: power = rng.uniform(270, 330); cadence = rng.uniform(92, 102)  // interval
                default: power = rng.uniform(170, 215); cadence = rng.uniform(82, 92)       // steady
                }
                nextChange = lastTime + rng.uniform(30, 60)
            }
            let step = min(t, nextChange) - lastTime
            crank.advance(from: lastTime, by: step, rate: cadence / 60)
            lastTime += step
        }
    }
}
