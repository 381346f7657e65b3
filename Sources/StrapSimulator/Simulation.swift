import StrapGATT

/// The set of simulated devices `strapd --simulate[=N]` runs (docs/product.md §3.5): by default one
/// heart rate strap and one speed/cadence sensor; with N, kinds cycle HR, CSC, RSC, HR, ... (a
/// power meter or a trainer only when named: `[simulate] devices = hr, power, trainer`, so N
/// keeps its old meaning).
public struct Simulation: Sendable {
    public internal(set) var devices: [any SimulatedDevice]

    public init(count: Int? = nil, seed: UInt64 = 1, dropouts: DropoutSchedule = DropoutSchedule(), scenario: Scenario = .random) {
        let n = max(1, count ?? 2)
        self.init(kinds: (0..<n).map { Kind.cycled[$0 % Kind.cycled.count] }, seed: seed, dropouts: dropouts, scenario: scenario)
    }

    /// Everything every device did up to `time`, merged in time order.
    public mutating func advance(to time: Double) -> [(time: Double, device: SimulatedIdentity, event: SimulatedEvent)] {
        var merged: [(time: Double, device: SimulatedIdentity, event: SimulatedEvent)] = []
        for i in devices.indices {
            let identity = devices[i].identity
            merged += devices[i].advance(to: time).map { (time: $0.time, device: identity, event: $0.event) }
        }
        merged.sort { $0.time < $1.time }
        return merged
    }

    /// The simulated trainers' shared control state, by address: what control point writes reach.
    public var trainers: [String: SimulatedTrainerControl] {
        var out: [String: SimulatedTrainerControl] = [:]
        for case let trainer as SimulatedTrainer in devices { out[trainer.identity.address] = trainer.control }
        return out
    }

    /// The earliest time any device has something new (infinity with no devices).
    public var nextEventTime: Double { devices.map(\.nextEventTime).min() ?? .infinity }
}

extension Simulation {
    /// A kind of simulated sensor, as `[simulate] devices = hr, csc, rsc, power, trainer` names them.
    public enum Kind: String, Sendable, CaseIterable {
        case hr, csc, rsc, power, trainer
        /// What `--simulate=N` cycles through.
        static let cycled: [Kind] = [.hr, .csc, .rsc]
    }

    /// How the simulated athlete moves (`--simulate-scenario`).
    public enum Scenario: String, Sendable, CaseIterable {
        /// Efforts drawn at random: riding, coasting or stopped; heart-rate targets of 65–175.
        case random
        /// What `make demo` shows whatever the seed: the heart rate climbs steadily from about 95
        /// to 175 bpm between 10 s and 40 s (through every zone of a typical adult), the strap
        /// keeps skin contact for the first 2 minutes, and the speed/cadence sensor rides
        /// (8.5–9.5 m/s at 85–95 rpm) for its first 5 minutes. Random efforts follow.
        case demo

        /// The heart rate the demo's athlete is heading for at `t` seconds.
        public static func demoHeartRate(at t: Double) -> Double { 95 + 80 * min(1, max(0, (t - 10) / 30)) }
        /// How long the demo's scripted part lasts for each device kind.
        public static let demoHeartRateSeconds = 60.0
        public static let demoRideSeconds = 300.0
    }

    /// Exactly these devices, in order (indices count per kind).
    public init(kinds: [Kind], seed: UInt64 = 1, dropouts: DropoutSchedule = DropoutSchedule(), scenario: Scenario = .random) {
        var perKind: [Kind: Int] = [:]
        devices = kinds.enumerated().map { i, kind -> any SimulatedDevice in
            let index = perKind[kind, default: 0]
            perKind[kind] = index + 1
            let deviceSeed = seed &* 0x9E37_79B9 &+ UInt64(i)
            switch kind {
            case .hr: return SimulatedHeartRateStrap(index: index, seed: deviceSeed, dropouts: dropouts, scenario: scenario)
            case .csc: return SimulatedSpeedCadenceSensor(index: index, seed: deviceSeed, dropouts: dropouts, scenario: scenario)
            case .rsc: return SimulatedFootPod(index: index, seed: deviceSeed, dropouts: dropouts)
            case .power: return SimulatedPowerMeter(index: index, seed: deviceSeed, dropouts: dropouts, scenario: scenario)
            case .trainer: return SimulatedTrainer(index: index, seed: deviceSeed, dropouts: dropouts, scenario: scenario)
            }
        }
    }
}
