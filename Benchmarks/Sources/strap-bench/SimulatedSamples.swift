import StrapIngest
import StrapModel
import StrapSimulator

/// Real samples for the workout and export benchmarks: the simulator's sensors (the packets
/// `strapd --simulate` sends) decoded and derived by `DeviceIngest`, the daemon's ingest
/// code, so the mix, metadata and beat series are what a session or an export really sees.
enum SimulatedSamples {
    /// 2025-01-01T00:00:00Z: the benchmarks' stored history starts here.
    static let origin: Millis = 1_735_689_600_000

    /// The devices `Simulation(kinds:)` makes, with their ingest state.
    struct Feed {
        var simulation: Simulation
        var ingests: [String: DeviceIngest]
        let origin: Millis
        /// Simulated seconds already produced.
        private(set) var time: Double = 0

        init(kinds: [Simulation.Kind], seed: UInt64 = 42, origin: Millis = SimulatedSamples.origin) {
            simulation = Simulation(kinds: kinds, seed: seed, dropouts: .none)
            ingests = [:]
            for d in simulation.devices {
                let a = d.identity.address
                ingests[a] = DeviceIngest(device: Device(id: a, address: a, name: d.identity.name))
            }
            self.origin = origin
        }

        var addresses: [String] { simulation.devices.map(\.identity.address) }

        /// Every sample the devices produce up to `seconds`, in the order they arrive.
        mutating func advance(to seconds: Double) -> [Sample] {
            var out: [Sample] = []
            for (t, identity, event) in simulation.advance(to: seconds) {
                let wall = origin + Millis((t * 1000).rounded())
                switch event {
                case let .notification(c, v), let .read(c, v):
                    out += ingests[identity.address]!.ingest(c, v, wall: wall, monotonic: t).samples
                case .connected, .disconnected:
                    ingests[identity.address]!.linkRestarted()
                }
            }
            time = seconds
            return out
        }
    }

    /// A typical athlete, so that sessions compute Keytel energy and heart-rate zones.
    static let profile = AthleteProfile(dateOfBirth: CalendarDate(year: 1988, month: 6, day: 1), biologicalSex: .female,
                                        weight: 62, height: 170, restingHeartRate: 52)

    /// How many samples of each type, for the printed description of a workload.
    static func mix(_ samples: [Sample]) -> String {
        var counts: [QuantityType: Int] = [:]
        for s in samples { counts[s.type, default: 0] += 1 }
        return counts.sorted { $0.value > $1.value }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
    }
}
