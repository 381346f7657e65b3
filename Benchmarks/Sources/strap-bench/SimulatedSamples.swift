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

        /// One thing a device did, not yet decoded.
        struct Packet {
            var time: Double
            var address: String
            var event: SimulatedEvent
        }

        /// Every sample the devices produce up to `seconds`, in the order they arrive.
        mutating func advance(to seconds: Double) -> [Sample] {
            packets(to: seconds).flatMap { ingest($0) }
        }

        /// What the devices send up to `seconds`, in time order, to be decoded later by
        /// `ingest` (at a live cadence: the daemon decodes each packet when it arrives).
        mutating func packets(to seconds: Double) -> [Packet] {
            time = seconds
            return simulation.advance(to: seconds).map { Packet(time: $0.time, address: $0.device.address, event: $0.event) }
        }

        /// The samples `DeviceIngest` makes of one packet (the daemon's decode and derive).
        mutating func ingest(_ p: Packet) -> [Sample] {
            let wall = origin + Millis((p.time * 1000).rounded())
            switch p.event {
            case let .notification(c, v), let .read(c, v):
                return ingests[p.address]!.ingest(c, v, wall: wall, monotonic: p.time).samples
            case .connected, .disconnected:
                ingests[p.address]!.linkRestarted()
                return []
            }
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
