import Dispatch
import Glibc
import StrapBlueZ
import StrapConfig
import StrapDBus
import StrapGATT
import StrapIngest
import StrapModel
import StrapSystem
import Synchronization

/// The device side of the daemon over BlueZ: one bus, one `BlueZClient`, one
/// `SensorManager`, all on `queue`. Turns what the links deliver into `SensorEvent`s for the
/// pipeline, keeps the known devices (`known-devices.json`) connected, samples their RSSI,
/// and answers the `devices.*` operations.
public final class BlueZDeviceService: DeviceService, SensorSink, @unchecked Sendable {
    public struct Settings: Sendable {
        public var stateDirectory: String
        /// nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured by sd-bus); tests pass
        /// their private bus here rather than changing the process environment.
        public var busAddress: String?
        public var bluetooth: Configuration.Bluetooth
        public var devices: [String: Configuration.DeviceSettings]
        public var link = SensorLinkOptions()
        /// How long `devices.connect` waits for the sensor to stream before answering.
        public var connectWait = 30.0
        public var rssiInterval = 10.0
        public var hci: any HCIAccess = LibBluetoothHCI()

        public init(stateDirectory: String, busAddress: String? = nil, bluetooth: Configuration.Bluetooth = Configuration().bluetooth,
                    devices: [String: Configuration.DeviceSettings] = [:]) {
            self.stateDirectory = stateDirectory
            self.busAddress = busAddress
            self.bluetooth = bluetooth
            self.devices = devices
        }
    }

    /// The bus queue: sd-bus and every BlueZ object live here.
    public let queue = DispatchQueue(label: "strapd.bluez")
    /// Confined to `queue` (SIGHUP replaces the reloadable parts).
    var settings: Settings
    let logger: Logger
    private let submit: @Sendable (SensorEvent) -> Void
    /// Link-quality readings for live subscribers (set before `start`).
    public var publishLinkQuality: (@Sendable (SensorAddress, RSSIReading) -> Void)?
    /// Why Bluetooth is not usable right now, readable from any queue (`status.degraded`).
    private let degradedReason = Mutex<String?>("starting")

    // Confined to `queue`.
    var bus: Bus?
    var client: BlueZClient?
    var manager: SensorManager?
    var known: KnownDevices
    var streaming: Set<SensorAddress> = []
    /// BlueZ's reason for the last disconnect (Device1.Disconnected), or ours.
    var lastDisconnect: [SensorAddress: String] = [:]
    var rssi: [SensorAddress: RSSIReading] = [:]
    var connectWaiters: [SensorAddress: [Waiter]] = [:]
    var scanSession: DiscoverySession?
    private var characteristics: [String: GATTCharacteristic?] = [:]
    private var busRetry: DispatchSourceTimer?
    private var busRetryDelay = 1.0
    var rssiTimer: DispatchSourceTimer?
    var rssiBusy = false
    /// After a permanent failure (no AF_BLUETOOTH, no CAP_NET_RAW) rounds pause for a minute.
    var rssiPaused: (until: DispatchTime, reading: RSSIReading)?
    let rssiQueue = DispatchQueue(label: "strapd.bluez.rssi")
    private var stopped = false

    struct Waiter {
        let id: Int
        let completion: @Sendable (DeviceError?) -> Void
    }
    var nextWaiter = 0

    public init(settings: Settings, logger: Logger, submit: @escaping @Sendable (SensorEvent) -> Void) {
        self.settings = settings
        self.logger = logger
        self.submit = submit
        known = KnownDevices(directory: settings.stateDirectory)
    }

    /// Why Bluetooth is degraded ("bluetoothd not running", "no adapter"), nil when usable.
    public var degraded: String? { degradedReason.withLock { $0 } }

    /// Loads the known devices and connects to the bus; never fails: without a bus or
    /// bluetoothd the daemon runs degraded and keeps trying.
    public func start() {
        queue.sync {
            if let problem = known.load() {
                logger.error("known devices \(known.path): \(problem)")
            }
            if let adapter = settings.bluetooth.adapter { logger.info("bluetooth: using adapter \(adapter) only") }
            logger.info("\(known.entries.count) known device(s)\(known.entries.isEmpty ? "" : ": ")\(known.entries.keys.sorted().joined(separator: ", "))")
            connectBus()
            startRSSITimer()
        }
    }

    /// Stops every link (the sensors are disconnected, and reconnected by the next start)
    /// and closes the bus. Pending `connect` callers get an answer.
    public func stop() {
        queue.sync {
            stopped = true
            busRetry?.cancel()
            rssiTimer?.cancel()
            scanSession?.stop()
            scanSession = nil
            for address in Array(connectWaiters.keys) { answerWaiters(address, .unavailable("strapd is stopping")) }
            for address in streaming { lastDisconnect[address] = "strapd stopping" }
            manager?.stop()
            client?.stop()
            bus?.close()
            manager = nil
            client = nil
            bus = nil
        }
    }

    /// SIGHUP: `[bluetooth] auto_connect` and `[device.*]` apply from now on (names at once,
    /// notify modes at the device's next link); the rest needs a restart.
    public func reload(bluetooth: Configuration.Bluetooth, devices: [String: Configuration.DeviceSettings]) {
        queue.async { [self] in
            let enabled = bluetooth.autoConnect && !settings.bluetooth.autoConnect
            settings.bluetooth.autoConnect = bluetooth.autoConnect
            settings.bluetooth.scanTimeout = bluetooth.scanTimeout
            settings.devices = devices
            if enabled { connectKnownDevices() }
        }
    }

    // MARK: Bus and BlueZ availability

    private func connectBus() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        do throws(BusError) {
            let bus: Bus
            if let address = settings.busAddress { bus = try Bus.connect(address: address, queue: queue) } else { bus = try Bus.system(queue: queue) }
            let client = BlueZClient(bus: bus)
            client.onlyAdapter = settings.bluetooth.adapter
            let manager = SensorManager(client: client, sink: self)
            try client.start()
            try manager.start()
            // After the manager's observer, so a Disconnected reason is recorded before the
            // link sees Connected=false.
            client.observe { [weak self] event in self?.observe(event) }
            // BlueZClient leaves reconnecting to the bus itself to us (dbus-daemon restarted).
            bus.onDisconnect { [weak self, weak bus] in
                guard let self, let bus, self.bus === bus, !self.stopped else { return }
                self.busLost()
            }
            self.bus = bus
            self.client = client
            self.manager = manager
            busRetryDelay = 1
            // Quietly: the tree is still loading, and BlueZClient itself says so if org.bluez
            // is missing.
            updateDegraded(log: false)
            if settings.bluetooth.autoConnect { connectKnownDevices() }
        } catch {
            failedToConnect(error)
        }
    }

    /// A link for every known device that is not switched off by `devices.disconnect`.
    private func connectKnownDevices() {
        guard let manager else { return }
        for entry in known.entries.values.sorted(by: { $0.address < $1.address }) where entry.autoConnect {
            manager.add(address: entry.address, options: linkOptions(entry.address))
        }
    }

    private func failedToConnect(_ error: BusError) {
        let why = error.description
        setDegraded("no system D-Bus (\(why))")
        let delay = busRetryDelay
        busRetryDelay = min(60, busRetryDelay * 2)
        logger.info("bluetooth: retrying the system bus in \(Int(delay)) s")
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + delay)
        t.setEventHandler { @Sendable [weak self] in self?.connectBus() }
        busRetry = t
        t.resume()
    }

    /// The bus connection broke (dbus-daemon restarted or died): drop everything built on it
    /// and connect again with backoff; the links are rebuilt from the known devices.
    private func busLost() {
        logger.error("bluetooth: lost the system D-Bus connection; reconnecting")
        for address in streaming { lastDisconnect[address] = "system D-Bus connection lost" }
        scanSession = nil
        for address in Array(connectWaiters.keys) { answerWaiters(address, .unavailable("lost the system D-Bus connection")) }
        manager?.stop()
        client?.stop()
        let old = bus
        (manager, client, bus) = (nil, nil, nil)
        // Not closed inside its own disconnect callback.
        queue.async { old?.close() }
        failedToConnect(.closed)
    }

    private func observe(_ event: BlueZEvent) {
        guard let client else { return }
        switch event {
        case .deviceDisconnected(let path, let reason, let message):
            if let address = client.mirror.device(path)?.address?.uppercased() {
                lastDisconnect[address] = message.isEmpty ? reason : "\(reason) (\(message))"
            }
        case .availability, .interfacesAdded, .interfacesRemoved, .propertiesChanged:
            break
        }
        updateDegraded()
    }

    private func updateDegraded(log: Bool = true) {
        guard let client else { return }
        if !client.available {
            setDegraded("bluetoothd is not running (org.bluez not on the system bus)", log: log)
        } else if client.mirror.adapters.isEmpty {
            setDegraded("no Bluetooth adapter", log: log)
        } else if !client.mirror.adapters.contains(where: \.powered) {
            setDegraded("Bluetooth adapter powered off", log: log)
        } else {
            setDegraded(nil, log: log)
        }
    }

    private func setDegraded(_ reason: String?, log: Bool = true) {
        let old = degradedReason.withLock { state in
            defer { state = reason }
            return state
        }
        guard old != reason, log else { return }
        if let reason { logger.warning("bluetooth: \(reason)") } else { logger.notice("bluetooth: ready") }
    }

    /// Per-device link options: `[device.ADDR] notify_mode` over `[bluetooth] notify_mode`.
    func linkOptions(_ address: SensorAddress) -> SensorLinkOptions {
        var options = settings.link
        let mode = settings.devices[address]?.notifyMode ?? settings.bluetooth.notifyMode
        options.notifyMode = mode == .acquire ? .acquireNotify : .startNotify
        return options
    }

    /// `[device.ADDR] name`, else the name it was remembered with, else BlueZ's alias.
    func displayName(_ address: SensorAddress) -> String {
        if let name = settings.devices[address]?.name { return name }
        if let device = client?.mirror.devices(address: address).first, let name = device.alias ?? device.name { return name }
        return known.entries[address]?.name ?? address
    }

    // MARK: SensorSink (called on the bus queue)

    public func received(_ n: RawNotification) {
        guard let characteristic = characteristic(n.characteristic) else {
            return logger.debug("ignoring notification of unknown characteristic \(n.characteristic)", fields: ["DEVICE_ADDRESS": n.device])
        }
        submit(.notification(n.device, characteristic, n.value, Self.time(n)))
    }

    public func read(device: String, characteristic: String, value: [UInt8]) {
        guard let c = self.characteristic(characteristic) else {
            return logger.debug("ignoring read of unknown characteristic \(characteristic)", fields: ["DEVICE_ADDRESS": device])
        }
        submit(.read(device, c, value, Clock.now()))
    }

    public func battery(device: String, percentage: UInt8) {
        submit(.read(device, .batteryLevel, [percentage], Clock.now()))
    }

    public func linkChanged(device: String, phase: LinkPhase) {
        dispatchPrecondition(condition: .onQueue(queue))
        let fields = ["DEVICE_ADDRESS": device]
        if phase == .streaming {
            guard streaming.insert(device).inserted else { return }
            lastDisconnect[device] = nil
            submit(.linkUp(device, name: displayName(device), Clock.now()))
            answerWaiters(device, nil)
            // A fresh link gets its RSSI (or the reason there is none) now, not a round later.
            queue.async { [weak self] in self?.sampleRSSI() }
        } else if streaming.remove(device) != nil {
            let reason: String
            if let known = lastDisconnect[device] {
                reason = known
            } else if let client, !client.available {
                reason = client.bus.isOpen ? "bluetoothd went away" : "system D-Bus connection lost"
            } else if client?.mirror.devices(address: device).contains(where: \.connected) == true {
                reason = "link \(phase)"
            } else {
                // Older BlueZ sends no Disconnected signal, only Connected=false.
                reason = "Connected=false (no reason signal)"
            }
            lastDisconnect[device] = reason
            rssi[device] = nil
            logger.info("[\(device)] stopped streaming: \(reason)", fields: fields)
            submit(.linkDown(device, reason: reason, Clock.now()))
            // With auto_connect off, a sensor that drops stays down until `devices.connect`.
            if !settings.bluetooth.autoConnect, phase != .idle { queue.async { [weak self] in self?.manager?.remove(address: device) } }
        }
    }

    /// UUID string → characteristic, parsed once per UUID rather than per notification.
    private func characteristic(_ uuid: String) -> GATTCharacteristic? {
        if let cached = characteristics[uuid] { return cached }
        let parsed = GATTCharacteristic(parsing: uuid)
        characteristics[uuid] = parsed
        return parsed
    }

    static func time(_ n: RawNotification) -> ReceiveTime {
        ReceiveTime(wall: Millis(n.wallNanoseconds / 1_000_000), monotonic: Double(n.monotonicNanoseconds) / 1e9)
    }

    // MARK: Snapshot

    public func snapshot() -> [DeviceInfo] {
        queue.sync {
            var addresses = Set(known.entries.keys)
            if let manager { addresses.formUnion(manager.links.keys) }
            if let client { addresses.formUnion(client.discoveredSensors.map { $0.address.uppercased() }) }
            return addresses.sorted().map(info)
        }
    }

    func info(_ address: SensorAddress) -> DeviceInfo {
        var info = DeviceInfo(address: address, name: displayName(address))
        info.known = known.entries[address] != nil
        let device = client?.mirror.devices(address: address).first { $0.connected } ?? client?.mirror.devices(address: address).first
        if let device {
            info.connected = device.connected
            info.paired = device.paired
            info.battery = device.batteryPercentage
            var services = device.uuids.map { $0.lowercased() }
            if let client, services.isEmpty { services = client.mirror.services(of: device.path).map(\.uuid) }
            info.services = services.sorted()
        }
        info.lastDisconnectReason = lastDisconnect[address]
        if let reading = rssi[address] {
            info.rssi = reading.value
            info.rssiUnavailableReason = reading.reason
        } else {
            info.rssiUnavailableReason = info.connected ? "not measured yet" : "not connected"
        }
        return info
    }
}
