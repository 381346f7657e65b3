import Dispatch
import StrapGATT
import StrapIngest
import StrapSimulator

/// `--simulate`: the device operations answered by the simulated sensors, so every protocol
/// operation works without Bluetooth. The simulated devices are known and connected from the
/// start, as remembered sensors would be.
public final class SimulatedDeviceService: DeviceService, @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd.devices.simulated")
    /// Confined to `queue`.
    private var infos: [SensorAddress: DeviceInfo]
    /// Takes a simulated sensor's link down (false) or up (true) for real: its samples stop
    /// and resume. Nil for a replay, which plays what was recorded.
    private let links: (@Sendable (SensorAddress, Bool) -> Void)?
    /// Carries a write to the simulated device (`SimulatorSource.write`). Nil for a replay.
    private let writes: (@Sendable (SensorAddress, GATTCharacteristic, [UInt8]) -> SimulatorSource.WriteResult)?

    public init(identities: [SimulatedIdentity], links: (@Sendable (SensorAddress, Bool) -> Void)? = nil,
                writes: (@Sendable (SensorAddress, GATTCharacteristic, [UInt8]) -> SimulatorSource.WriteResult)? = nil) {
        self.links = links
        self.writes = writes
        var infos: [SensorAddress: DeviceInfo] = [:]
        for identity in identities {
            var info = DeviceInfo(address: identity.address, name: identity.name)
            info.known = true
            info.connected = true
            info.services = identity.services.map(\.uuidString)
            info.rssiUnavailableReason = "simulated device"
            infos[identity.address] = info
        }
        self.infos = infos
    }

    public func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
                     finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle {
        // A forgotten simulated sensor can be found again, as a real one advertising would be.
        let all = queue.sync { Array(infos.values) }
        // One completion, whichever comes first: the timeout or stop().
        let done = Once()
        queue.async {
            for (i, info) in all.enumerated() {
                found(DiscoveredDevice(address: info.address, name: info.name, rssi: -50 - 3 * i, services: info.services))
            }
        }
        queue.asyncAfter(deadline: .now() + max(0, timeout)) { if done.claim() { finished(nil) } }
        return ScanHandle { [queue] in queue.async { if done.claim() { finished(nil) } } }
    }

    public func pair(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        update(address, completion) { $0.paired = true }
    }

    public func connect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        update(address, completion, link: true) { $0.known = true; $0.connected = true }
    }

    public func disconnect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        update(address, completion, link: false) { $0.connected = false; $0.lastDisconnectReason = "disconnected by request" }
    }

    public func forget(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        update(address, completion, link: false) { $0.known = false; $0.connected = false; $0.paired = false }
    }

    public func resetEnergy(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        update(address, completion) { _ in }
    }

    /// A simulated trainer's control point (docs/operations.md#a-simulated-trainer): the write
    /// is acknowledged first, and the trainer's indication follows it into the pipeline after
    /// a simulated ATT round trip of a few milliseconds, as a real one's follows the write response.
    public func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8],
                      completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let info = infos[address] else { return completion(.notFound(address)) }
            guard info.connected else { return completion(.unavailable("\(address) is not connected")) }
            guard let writes else { return completion(.failed("\(address): a replayed device cannot be written")) }
            let (error, answer) = writes(address, characteristic, value)
            completion(error)
            if let answer { queue.asyncAfter(deadline: .now() + .milliseconds(4)) { answer() } }
        }
    }

    /// A forgotten sensor is not listed until it is connected again.
    public func snapshot() -> [DeviceInfo] { queue.sync { infos.values.filter { $0.known || $0.connected || $0.paired } } }

    private func update(_ address: SensorAddress, _ completion: @escaping @Sendable (DeviceError?) -> Void, link: Bool? = nil,
                        _ change: @escaping @Sendable (inout DeviceInfo) -> Void) {
        queue.async { [self] in
            guard var info = infos[address] else { return completion(.notFound(address)) }
            change(&info)
            infos[address] = info
            // Before answering: once the client has its `ok`, no further sample is submitted.
            if let link { links?(address, link) }
            completion(nil)
        }
    }
}
