import Dispatch
import StrapBlueZ
import StrapConfig
import StrapGATT
import StrapIngest
import StrapModel
import StrapSystem

/// The device side of the daemon over BlueZ: one bus, one `BlueZClient`, one
/// `SensorManager`, all on `queue` (`BlueZConnection`). Turns what the links deliver into
/// `SensorEvent`s for the pipeline, keeps the known devices (`known-devices.json`) connected,
/// samples their RSSI (`RSSISampler`), and answers the `devices.*` operations
/// (on the state `DeviceRegistry` keeps).
public final class BlueZDeviceService: DeviceService, SensorSink, @unchecked Sendable {
    /// The bus queue: sd-bus and every BlueZ object live here.
    public let queue: DispatchQueue
    private let logger: Logger
    private let submit: @Sendable (SensorEvent) -> Void
    /// Link-quality readings for live subscribers (set before `start`).
    public var publishLinkQuality: (@Sendable (SensorAddress, RSSIReading) -> Void)?
    private let rssi: RSSISampler
    /// Set once in `init`, used on `queue` only.
    private var connection: BlueZConnection!
    /// Confined to `queue`: what the operations work on.
    private let registry: DeviceRegistry

    /// `target`: the queue the bus queue runs on, nil for a queue of its own (see
    /// `BlueZDeviceService.make` in the daemon for why it shares the pipeline's). Code on
    /// `target` must then never wait for this service (`snapshot`, `start`, `stop`).
    public init(settings: Settings, logger: Logger, target: DispatchQueue? = nil, submit: @escaping @Sendable (SensorEvent) -> Void) {
        queue = DispatchQueue(label: "strapd.bluez", target: target)
        self.logger = logger
        self.submit = submit
        registry = DeviceRegistry(settings: settings, logger: logger)
        rssi = RSSISampler(queue: queue, hci: settings.hci, interval: settings.rssiInterval, logger: logger)
        connection = BlueZConnection(queue: queue, busAddress: settings.busAddress, adapter: settings.bluetooth.adapter,
                                     logger: logger, sink: self)
    }

    /// Why Bluetooth is degraded ("bluetoothd not running", "no adapter"), nil when usable.
    public var degraded: String? { connection.degraded }

    /// Loads the known devices and connects to the bus; never fails: without a bus or
    /// bluetoothd the daemon runs degraded and keeps trying.
    public func start() {
        queue.sync {
            registry.loadKnownDevices()
            // Weak: a timer or a bus callback may still fire once the service is gone (a
            // daemon stopped in-process); it then has nothing to do.
            rssi.start(targets: { [weak self] in self.map { $0.registry.rssiTargets($0.connection) } ?? [] },
                       publish: { [weak self] address, reading in self?.publishLinkQuality?(address, reading) })
            connection.start(.init(
                connected: { [weak self] manager in
                    guard let self else { return }
                    if registry.settings.bluetooth.autoConnect { registry.connectKnownDevices(manager) }
                },
                lost: { [weak self] in self?.registry.busLost() },
                bluez: { [weak self] event, client in self?.registry.observe(event, client) }))
        }
    }

    /// Stops every link (the sensors are disconnected, and reconnected by the next start)
    /// and closes the bus. Pending `connect` callers get an answer.
    public func stop() {
        queue.sync {
            rssi.stop()
            registry.stopping()
            connection.stop()
        }
    }

    /// SIGHUP: `[bluetooth] auto_connect` and `[device.*]` apply from now on (names at once,
    /// notify modes at the device's next link); the rest needs a restart.
    public func reload(bluetooth: Configuration.Bluetooth, devices: [String: Configuration.DeviceSettings]) {
        queue.async { [self] in
            let enabled = registry.reload(bluetooth: bluetooth, devices: devices)
            if enabled, let manager = connection.manager { registry.connectKnownDevices(manager) }
        }
    }

    // MARK: SensorSink (called on the bus queue)

    public func received(_ n: RawNotification) {
        guard let characteristic = registry.characteristic(n.characteristic) else {
            return logger.debug("ignoring notification of unknown characteristic \(n.characteristic)",
                                metadata: [LogKey.deviceAddress: n.device])
        }
        let time = Self.time(n)
        // A link delivers while it still subscribes (one characteristic streams while another's
        // StartNotify is out; bluetoothd forwards what arrives before the CCC write response).
        // That is data of the new connection: the pipeline must hear of the connection first,
        // or it derives the value against the state from before the outage.
        linkUp(n.device, at: time)
        submit(.notification(n.device, characteristic, n.value, time))
    }

    public func read(device: String, characteristic: String, value: [UInt8]) {
        guard let c = registry.characteristic(characteristic) else {
            return logger.debug("ignoring read of unknown characteristic \(characteristic)", metadata: [LogKey.deviceAddress: device])
        }
        submit(.read(device, c, value, ReceiveTime.now()))
    }

    public func battery(device: String, percentage: UInt8) {
        submit(.read(device, .batteryLevel, [percentage], ReceiveTime.now()))
    }

    public func linkChanged(device: String, phase: LinkPhase) {
        dispatchPrecondition(condition: .onQueue(queue))
        if phase == .streaming {
            linkUp(device, at: ReceiveTime.now())
        } else if let reason = registry.streamingStopped(device, phase: phase, connection.client) {
            rssi.forget(device)
            logger.info("[\(device)] stopped streaming: \(reason)", metadata: [LogKey.deviceAddress: device])
            submit(.linkDown(device, reason: reason, ReceiveTime.now()))
            // With auto_connect off, a sensor that drops stays down until `devices.connect`.
            if !registry.settings.bluetooth.autoConnect, phase != .idle {
                queue.async { [weak self] in self?.connection.manager?.remove(address: device) }
            }
        }
    }

    /// The link is up from its first notification or from `streaming`, whichever comes first;
    /// once per connection. A notification's own receive time keeps the up event at or before it.
    private func linkUp(_ device: String, at time: ReceiveTime) {
        guard registry.streamingStarted(device) else { return }
        submit(.linkUp(device, name: registry.displayName(device, connection.client), time))
        registry.answerWaiters(device, nil)
        // A fresh link gets its RSSI (or the reason there is none) now, not a round later.
        queue.async { [weak self] in self?.rssi.sample() }
    }

    static func time(_ n: RawNotification) -> ReceiveTime {
        ReceiveTime(wall: Millis(n.wallNanoseconds / 1_000_000), monotonic: Double(n.monotonicNanoseconds) / 1e9)
    }

    // MARK: devices.*

    public func snapshot() -> [DeviceInfo] {
        queue.sync { registry.snapshot(connection, rssi: rssi.reading) }
    }

    public var knownCount: Int { queue.sync { registry.knownCount } }

    public func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
                     finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle {
        let done = Once()
        let end: @Sendable (DeviceError?) -> Void = { [weak self] error in
            guard done.claim() else { return }
            // Runs on the bus queue.
            self?.registry.endScan { [weak self] id in
                guard let self else { return }
                registry.scanSettled(id)
                connection.manager?.resumeDiscovery()
            }
            finished(error)
        }
        queue.async { [self] in
            guard let client = usableClient(end) else { return }
            guard registry.startScan(client, found: found) else { return end(.busy("a scan is already running")) }
            queue.asyncAfter(deadline: .now() + max(0, timeout)) { end(nil) }
        }
        return ScanHandle { [queue] in queue.async { end(nil) } }
    }

    public func pair(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager = connection.manager else { return }
            registry.pair(address, client, manager, completion)
        }
    }

    public func connect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager = connection.manager else { return }
            guard let (address, id) = registry.connect(address, client, manager, completion) else { return }
            queue.asyncAfter(deadline: .now() + registry.settings.connectWait) { [weak self] in
                self?.registry.connectWaitEnded(address, waiter: id, manager)
            }
        }
    }

    public func disconnect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager = connection.manager else { return }
            registry.disconnect(address, client, manager, completion)
        }
    }

    public func forget(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager = connection.manager else { return }
            registry.forget(address, client, manager, completion)
        }
    }

    public func resetEnergy(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard usableClient(completion) != nil, let manager = connection.manager else { return }
            registry.resetEnergy(address, manager, completion)
        }
    }

    /// On the bus queue, like every BlueZ call; the completion runs there too.
    public func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8],
                      completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion) else { return }
            guard let manager = connection.manager else { return completion(.unavailable("BlueZ is not ready yet")) }
            registry.write(address, characteristic, value, client, manager, completion)
        }
    }

    /// The client when BlueZ can be used; otherwise answers `unavailable` and returns nil.
    private func usableClient(_ completion: @Sendable (DeviceError?) -> Void) -> BlueZClient? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client = connection.client, client.available else {
            completion(.unavailable(degraded ?? "bluetoothd is not running"))
            return nil
        }
        guard !client.mirror.adapters.isEmpty else {
            completion(.unavailable("no Bluetooth adapter"))
            return nil
        }
        return client
    }
}
