import StrapGATT

/// The set of simulated devices `strapd --simulate[=N]` runs (docs/product.md §3.5): by default one
/// heart rate strap and one speed/cadence sensor; with N, kinds cycle HR, CSC, RSC, HR, ...
public struct Simulation: Sendable {
    public internal(set) var devices: [any SimulatedDevice]

    public init(count: Int? = nil, seed: UInt64 = 1, dropouts: DropoutSchedule = DropoutSchedule()) {
        let n = max(1, count ?? 2)
        self.init(kinds: (0..<n).map { Kind.allCases[$0 % 3] }, seed: seed, dropouts: dropouts)
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

    /// The earliest time any device has something new (infinity with no devices).
    public var nextEventTime: Double { devices.map(\.nextEventTime).min() ?? .infinity }
}

extension Simulation {
    /// A kind of simulated sensor, as `[simulate] devices = hr, csc, rsc` names them.
    public enum Kind: String, Sendable, CaseIterable {
        case hr, csc, rsc
    }

    /// Exactly these devices, in order (indices count per kind).
    public init(kinds: [Kind], seed: UInt64 = 1, dropouts: DropoutSchedule = DropoutSchedule()) {
        var perKind: [Kind: Int] = [:]
        devices = kinds.enumerated().map { i, kind -> any SimulatedDevice in
            let index = perKind[kind, default: 0]
            perKind[kind] = index + 1
            let deviceSeed = seed &* 0x9E37_79B9 &+ UInt64(i)
            switch kind {
            case .hr: return SimulatedHeartRateStrap(index: index, seed: deviceSeed, dropouts: dropouts)
            case .csc: return SimulatedSpeedCadenceSensor(index: index, seed: deviceSeed, dropouts: dropouts)
            case .rsc: return SimulatedFootPod(index: index, seed: deviceSeed, dropouts: dropouts)
            }
        }
    }
}
