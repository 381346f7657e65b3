import StrapGATT
import StrapModel
import Synchronization

/// One sensor as `devices.list` / `devices.info` report it (docs/protocol.md).
public struct DeviceInfo: Sendable, Equatable {
    public var address: SensorAddress
    public var name: String
    /// Remembered in the state directory; reconnected at start and after every drop.
    public var known: Bool
    public var connected: Bool
    public var paired: Bool
    public var services: [String]
    public var battery: UInt8?
    public var contact: String?
    public var bodySensorLocation: String?
    public var sensorLocation: String?
    public var manufacturer: String?
    public var model: String?
    public var serial: String?
    public var firmware: String?
    /// Received signal strength in dBm, or why it is absent (docs/operations.md#link-quality-rssi).
    public var rssi: Int?
    public var rssiUnavailableReason: String?
    public var lastSeen: Millis?
    public var lastDisconnectReason: String?
    public var notifications: Int
    /// The adapter of the device object in use (`hci0`) and its address; nil while there is
    /// none (no link, or a link waiting for its sensor to appear).
    public var adapter: String?
    public var adapterAddress: String?

    public init(address: SensorAddress, name: String) {
        self.address = address
        self.name = name
        known = false
        connected = false
        paired = false
        services = []
        notifications = 0
    }
}

/// A device found by `devices.scan`.
public struct DiscoveredDevice: Sendable, Equatable {
    public var address: SensorAddress
    public var name: String?
    public var rssi: Int?
    public var services: [String]

    public init(address: SensorAddress, name: String?, rssi: Int?, services: [String]) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.services = services
    }
}

/// Why a device operation failed, as the protocol reports it.
public enum DeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound(SensorAddress)
    /// The adapter or bluetoothd is not there (yet): `unavailable`.
    case unavailable(String)
    /// Another operation on the device is in progress: `busy`.
    case busy(String)
    /// BlueZ or the sensor said no (`org.bluez.Error.*`, ATT errors): `internal` with the name.
    case failed(String)

    public var code: String {
        switch self {
        case .notFound: "notFound"
        case .unavailable: "unavailable"
        case .busy: "busy"
        case .failed: "internal"
        }
    }

    public var description: String {
        switch self {
        case let .notFound(a): "no such device \(a)"
        case let .unavailable(m), let .busy(m), let .failed(m): m
        }
    }
}

/// The device side of the daemon: BlueZ in production, the simulator with `--simulate`.
/// Completions may be called on any queue. Beside `SensorEvent` because it is the other half
/// of the same contract: what a device source delivers, and what can be asked of it.
public protocol DeviceService: AnyObject, Sendable {
    /// Begins discovery; `found` is called per device as it appears, `finished` once after
    /// `timeout` seconds or `stop()` on the returned handle.
    func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
              finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle
    func pair(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void)
    /// Connects and remembers the device, so it is reconnected after drops and restarts.
    func connect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void)
    func disconnect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void)
    /// Disconnects, removes it from BlueZ and forgets it here.
    func forget(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void)
    /// Writes 0x01 to the Heart Rate Control Point (0x2A39).
    func resetEnergy(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void)
    /// Writes `value` to a characteristic of a connected device with an acknowledged ATT Write
    /// Request: the Fitness Machine Control Point (docs/trainer.md). The completion reports the
    /// write's acknowledgement; an answer the characteristic indicates arrives later as a
    /// `.notification` event, like any other.
    func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8],
               completion: @escaping @Sendable (DeviceError?) -> Void)
    /// What the service itself knows (BlueZ's view: paired, RSSI, services); the directory
    /// merges it with what the pipeline saw.
    func snapshot() -> [DeviceInfo]
    /// How many devices are known (remembered for reconnects): the daemon's status line asks
    /// every 2 s, and a whole `snapshot` for a count walked BlueZ's object mirror several times.
    var knownCount: Int { get }
}

extension DeviceService {
    /// A source with nothing to write to (a replayed capture, test doubles).
    public func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8],
                      completion: @escaping @Sendable (DeviceError?) -> Void) {
        completion(.failed("\(address): this device source cannot write \(characteristic.name)"))
    }

    public var knownCount: Int { snapshot().filter(\.known).count }
}

public final class ScanHandle: Sendable {
    private let stopAction: @Sendable () -> Void
    public init(stop: @escaping @Sendable () -> Void) { stopAction = stop }
    public func stop() { stopAction() }
}

/// A flag that can be claimed once, from any queue: a scan's `finished` is called once,
/// whichever comes first of its timeout, `stop()` and a failure.
public final class Once: Sendable {
    private let claimed = Atomic<Bool>(false)
    public init() {}
    public func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }
}
