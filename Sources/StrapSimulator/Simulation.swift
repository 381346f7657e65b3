import StrapGATT

/// The set of simulated devices `strapd --simulate[=N]` runs (spec §3.5): by default one heart
/// rate strap and one speed/cadence sensor; with N, kinds cycle HR, CSC, RSC, HR, ...
public struct Simulation: Sendable {
    public private(set) var devices: [any SimulatedDevice]

    public init(count: Int? = nil, seed: UInt64 = 1, dropouts: DropoutSchedule = DropoutSchedule()) {
        let n = max(1, count ?? 2)
        devices = (0..<n).map { i -> any SimulatedDevice in
            let deviceSeed = seed &* 0x9E37_79B9 &+ UInt64(i)
            switch i % 3 {
            case 0: return SimulatedHeartRateStrap(index: i / 3, seed: deviceSeed, dropouts: dropouts)
            case 1: return SimulatedSpeedCadenceSensor(index: i / 3, seed: deviceSeed, dropouts: dropouts)
            default: return SimulatedFootPod(index: i / 3, seed: deviceSeed, dropouts: dropouts)
            }
        }
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
}
