import Glibc
import StrapGATT

/// A chest strap: beats with heart-rate variability, RR intervals batched per notification
/// (0–n per packet, oldest first), sensor-contact episodes, an energy-expended counter sent
/// every 10th packet, battery, and occasional dropouts.
public struct SimulatedHeartRateStrap: LinkDrivenDevice {
    public let identity: SimulatedIdentity
    var rng: SimulationRandom
    var link: LinkSchedule
    var heartRate = 72.0
    var targetHeartRate = 72.0
    var nextTargetChange = 0.0
    var nextBeat: Double
    /// The strap measures beats in ticks of its own 1/1024 s clock, which runs
    /// `1 + clockError` times as fast as real time: RR values are differences of ticks.
    var lastBeatTicks: Int64?
    public var clockError = 0.0
    var pendingRR: [UInt16] = []
    var pendingTimes: [Double] = []
    /// When each RR sent so far really ended (simulation seconds), in the order sent; kept
    /// only when `keepsBeatTimes` is set (tests measure the beat timeline against it).
    public private(set) var sentBeatTimes: [Double] = []
    public var keepsBeatTimes = false
    var lastBeatTime: Double?
    var contactLossUntil = -1.0
    var nextContactLoss: Double
    var energyKilojoules = 0.0
    var packetCount = 0
    var battery: UInt8 = 95
    var announced = false

    let scenario: Simulation.Scenario

    public init(index: Int, seed: UInt64, dropouts: DropoutSchedule = DropoutSchedule(), scenario: Simulation.Scenario = .random) {
        self.scenario = scenario
        var rng = SimulationRandom(seed: seed)
        identity = SimulatedIdentity(address: simulatedAddress(kind: 0x48, index: index),
                                     name: "Sim HR \(index)", manufacturer: "strapd simulator", model: "SIM-HR",
                                     serial: "HR\(seed % 100_000)", firmware: "1.0", services: [.heartRate, .battery, .deviceInformation])
        link = LinkSchedule(period: 1, phase: rng.uniform(0, 1), dropouts: dropouts, rng: &rng)
        nextBeat = rng.uniform(0, 0.8)
        nextContactLoss = rng.exponential(mean: 400)
        if scenario == .demo {
            heartRate = Simulation.Scenario.demoHeartRate(at: 0)
            nextTargetChange = Simulation.Scenario.demoHeartRateSeconds
            nextContactLoss = max(nextContactLoss, 120)
            link.postponeDropouts(until: 120)
        }
        self.rng = rng
    }

    mutating func notifications(at t: Double) -> [(Double, SimulatedEvent)] {
        var out: [(Double, SimulatedEvent)] = [(t, .notification(characteristic: .heartRateMeasurement, value: measurement(at: t)))]
        if packetCount % 600 == 0 && battery > 5 {
            battery -= 1
            out.append((t, .notification(characteristic: .batteryLevel, value: [battery])))
        }
        return out
    }

    /// Beats during the dropout were never delivered: the strap's buffer is gone.
    mutating func linkRestored() {
        pendingRR.removeAll()
        pendingTimes.removeAll()
    }

    func connectReads() -> [SimulatedEvent] {
        [.read(characteristic: .bodySensorLocation, value: [1]),
         .read(characteristic: .batteryLevel, value: [battery])]
    }

    /// Generates beats up to `t`: heart rate drifts toward a target that changes every
    /// 45–90 s (a workout's efforts), with respiratory sinus arrhythmia and beat-to-beat noise.
    mutating func progress(to t: Double) {
        while nextBeat <= t {
            if nextBeat >= nextTargetChange {
                targetHeartRate = rng.uniform(65, 175)
                nextTargetChange = nextBeat + rng.uniform(45, 90)
            }
            let interval = 60 / heartRate * (1 + 0.04 * sin(2 * Double.pi * nextBeat / 4.5) + 0.02 * rng.gaussian())
            if scenario == .demo && nextBeat < Simulation.Scenario.demoHeartRateSeconds {
                // Follows the script closely (a 3 s lag) so the climb shows within the demo.
                targetHeartRate = Simulation.Scenario.demoHeartRate(at: nextBeat + 3)
                heartRate += (targetHeartRate - heartRate) * min(1, interval / 3)
            } else {
                heartRate += (targetHeartRate - heartRate) * min(1, interval / 20)
            }
            energyKilojoules += max(0, (-55.0969 + 0.6309 * heartRate + 0.1988 * 75 + 0.2017 * 35)) * interval / 60
            let ticks = Int64((nextBeat * (1 + clockError) * 1024).rounded())
            if nextBeat > contactLossUntil, let lastBeatTicks {
                pendingRR.append(UInt16(clamping: ticks - lastBeatTicks))
                pendingTimes.append(nextBeat)
            }
            lastBeatTicks = ticks
            lastBeatTime = nextBeat
            nextBeat += interval
        }
    }

    mutating func measurement(at t: Double) -> [UInt8] {
        packetCount += 1
        if t >= nextContactLoss {
            contactLossUntil = t + rng.uniform(4, 15)
            nextContactLoss = t + rng.exponential(mean: 400)
        }
        let inContact = t > contactLossUntil
        var m = HeartRateMeasurement(heartRate: inContact ? UInt16(heartRate.rounded()) : 0,
                                     contact: inContact ? .detected : .notDetected)
        if packetCount % 10 == 0 { m.energyExpended = UInt16(min(Double(UInt16.max), energyKilojoules)) }
        if inContact && !pendingRR.isEmpty {
            m.rrIntervals = pendingRR
            if keepsBeatTimes { sentBeatTimes += pendingTimes }
        }
        pendingRR.removeAll()
        pendingTimes.removeAll()
        return m.encoded()
    }
}

