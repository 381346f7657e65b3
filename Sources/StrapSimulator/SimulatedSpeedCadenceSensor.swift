import StrapGATT

/// A speed/cadence sensor: wheel and crank revolution events latched with 1/1024 s event
/// times, counters that start just below their wrap (wheel 2³², crank 2¹⁶) so every session
/// crosses it, coasting (no crank events) and stops (repeated event times).
public struct SimulatedSpeedCadenceSensor: LinkDrivenDevice {
    public let identity: SimulatedIdentity
    public let wheelCircumference: Double
    var rng: SimulationRandom
    var link: LinkSchedule
    var wheel: RevolutionCounter
    var crank: RevolutionCounter
    var speed = 0.0
    var cadence = 0.0
    var nextChange = 0.0
    var lastTime = 0.0
    var battery: UInt8 = 80
    var announced = false

    let scenario: Simulation.Scenario

    public init(index: Int, seed: UInt64, wheelCircumference: Double = 2.105, dropouts: DropoutSchedule = DropoutSchedule(),
                scenario: Simulation.Scenario = .random) {
        self.scenario = scenario
        var rng = SimulationRandom(seed: seed)
        identity = SimulatedIdentity(address: simulatedAddress(kind: 0x5B, index: index), name: "Sim CSC \(index)",
                                     manufacturer: "strapd simulator", model: "SIM-CSC", serial: "CSC\(seed % 100_000)",
                                     firmware: "1.0", services: [.cyclingSpeedAndCadence, .battery, .deviceInformation])
        self.wheelCircumference = wheelCircumference
        link = LinkSchedule(period: 1, phase: rng.uniform(0, 1), dropouts: dropouts, rng: &rng)
        wheel = RevolutionCounter(count: 0xFFFF_FFFF - UInt64(rng.next() % 400), modulus: 1 << 32)
        crank = RevolutionCounter(count: 0xFFFF - UInt64(rng.next() % 200), modulus: 1 << 16)
        if scenario == .demo { link.postponeDropouts(until: 120) }
        self.rng = rng
    }

    mutating func notifications(at t: Double) -> [(Double, SimulatedEvent)] {
        let m = CSCMeasurement(wheel: .init(revolutions: UInt32(wheel.count), eventTime: wheel.eventTime),
                               crank: .init(revolutions: UInt16(crank.count), eventTime: crank.eventTime))
        return [(t, .notification(characteristic: .cscMeasurement, value: m.encoded()))]
    }

    func connectReads() -> [SimulatedEvent] {
        [.read(characteristic: .cscFeature, value: CSCFeature(rawValue: 0x03).encoded()),
         .read(characteristic: .sensorLocation, value: [12]),
         .read(characteristic: .batteryLevel, value: [battery])]
    }

    /// Efforts change every 30–60 s: riding (5–13 m/s at 70–100 rpm), coasting, or stopped.
    mutating func progress(to t: Double) {
        while lastTime < t {
            if scenario == .demo && lastTime < Simulation.Scenario.demoRideSeconds {
                if lastTime >= nextChange {
                    speed = rng.uniform(8.5, 9.5); cadence = rng.uniform(85, 95)
                    nextChange = min(lastTime + rng.uniform(20, 40), Simulation.Scenario.demoRideSeconds)
                }
            } else if lastTime >= nextChange {
                switch rng.next() % 8 {
                case 0: speed = 0; cadence = 0                                   // stopped
                case 1: speed = rng.uniform(6, 12); cadence = 0                  // coasting
                default: speed = rng.uniform(5, 13); cadence = rng.uniform(70, 100)
                }
                nextChange = lastTime + rng.uniform(30, 60)
            }
            let step = min(t, nextChange) - lastTime
            wheel.advance(from: lastTime, by: step, rate: speed / wheelCircumference)
            crank.advance(from: lastTime, by: step, rate: cadence / 60)
            lastTime += step
        }
    }
}

/// A revolution counter latching the time of its last revolution, as CSC sensors do.
struct RevolutionCounter: Sendable {
    var count: UInt64
    let modulus: UInt64
    var eventTime: UInt16 = 0
    /// Fraction of a revolution done since the last event.
    var phase = 0.0

    init(count: UInt64, modulus: UInt64) {
        self.count = count
        self.modulus = modulus
    }

    mutating func advance(from start: Double, by seconds: Double, rate: Double) {
        guard rate > 0, seconds > 0 else { return }
        var elapsed = 0.0
        while true {
            let toNext = (1 - phase) / rate
            guard elapsed + toNext <= seconds else {
                phase += (seconds - elapsed) * rate
                return
            }
            elapsed += toNext
            phase = 0
            count = (count + 1) % modulus
            eventTime = UInt16(truncatingIfNeeded: UInt64(((start + elapsed) * 1024).rounded()))
        }
    }
}
