import Dispatch
import StrapDBus
import StrapGATT

public enum NotifyMode: String, Sendable {
    /// StartNotify + PropertiesChanged(Value): the default
    /// (docs/bluetooth-field-notes.md#notification-delivery).
    case startNotify
    /// AcquireNotify: one fd per characteristic, for high-rate streams.
    case acquireNotify
}

public struct SensorLinkOptions: Sendable {
    public var notifyMode: NotifyMode
    public var policy: BackoffPolicy
    public var timeouts: LinkTimeouts
    /// Which services to stream; nil derives them from Device1.UUIDs.
    public var services: [SensorService]?
    public var readOnConnect: Bool
    /// strapd.conf `[device.ADDR] adapter`: connect only through this adapter (`hciN` or its
    /// address), and wait while it is absent; nil: any adapter, the least loaded first.
    public var adapter: String?

    public init(notifyMode: NotifyMode = .startNotify, policy: BackoffPolicy = BackoffPolicy(),
                timeouts: LinkTimeouts = LinkTimeouts(), services: [SensorService]? = nil, readOnConnect: Bool = true,
                adapter: String? = nil) {
        self.notifyMode = notifyMode
        self.policy = policy
        self.timeouts = timeouts
        self.services = services
        self.readOnConnect = readOnConnect
        self.adapter = adapter
    }
}

/// Drives one SensorLinkMachine over BlueZ: turns mirror events into inputs and commands
/// into D-Bus calls. Lives on the bus queue.
public final class SensorLink: @unchecked Sendable {
    public let address: String
    public let options: SensorLinkOptions
    let client: BlueZClient
    private weak var sink: (any SensorSink)?
    private var machine: SensorLinkMachine
    /// The device object in use, and its adapter: nil while there is none to use.
    public private(set) var devicePath: ObjectPath?
    public private(set) var adapterPath: ObjectPath?
    /// The adapter under a device object that vanished while the link used it, until the link
    /// streams again or the manager has reported the adapter gone: bluetoothd announces an
    /// unplugged adapter's devices before the adapter itself, so by then the link has left it.
    private(set) var lostAdapter: ObjectPath?
    private var connectAttempt = 0
    private var wantsDiscovery = false
    private var reportedDiscoveryWish = false
    private var pinAbsenceLogged = false
    private var timer: DispatchSourceTimer?
    private var timerGeneration = 0
    private var pendingSubscribes = 0
    private var subscribeFailure: String?
    /// Characteristic path → UUID for which a handler is attached; the manager routes values by it.
    var subscribed: [ObjectPath: String] = [:] { didSet { subscriptionsChanged?() } }
    var subscriptionsChanged: (() -> Void)?
    private var sockets: [ObjectPath: NotifySocket] = [:]
    var epoch = 0
    private var lastReason: String?
    private var reportedPhase: LinkPhase = .idle
    var discoveryHook: (@Sendable (String, Bool) -> Void)?
    /// strapd's other links connected or connecting through an adapter (the manager counts).
    var adapterLoad: ((ObjectPath) -> Int)?

    public var phase: LinkPhase { machine.phase }

    init(address: String, options: SensorLinkOptions, client: BlueZClient, sink: any SensorSink) {
        self.address = address.uppercased()
        self.options = options
        self.client = client
        self.sink = sink
        machine = SensorLinkMachine(policy: options.policy, timeouts: options.timeouts)
    }

    public func start() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        refreshDevice(initial: true)
        feed(.start)
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        feed(.stop)
    }

    // MARK: Events from the mirror

    func handle(_ event: BlueZEvent) {
        switch event {
        case .availability, .interfacesAdded, .interfacesRemoved:
            refreshDevice(initial: false)
        case .characteristicValue(let path, let value):
            if let uuid = subscribed[path] {
                deliver(uuid: uuid, value: value)
                return
            }
        case .propertiesChanged(let path, let interface, let changed):
            if interface == BlueZInterface.gattCharacteristic, let uuid = subscribed[path], let value = changed["Value"]?.bytes {
                deliver(uuid: uuid, value: value)
                return
            }
            if path == devicePath {
                if interface == BlueZInterface.device, let connected = changed["Connected"]?.bool {
                    if !connected {
                        BusLog.notice("[\(address)] disconnected: \(lastReason ?? "Connected=false (no reason signal)")", metadata: BusLog.device(address))
                    }
                    feed(.connectionChanged(connected: connected))
                    lastReason = nil
                }
                if interface == BlueZInterface.battery, let pct = changed["Percentage"]?.integer.flatMap({ UInt8(exactly: $0) }) {
                    sink?.battery(device: address, percentage: pct)
                }
            } else if interface == BlueZInterface.adapter, changed["Powered"] != nil {
                refreshDevice(initial: false)
            }
        case .deviceDisconnected(let path, let reason, let message):
            guard path == devicePath else { return }
            lastReason = message.isEmpty ? reason : "\(reason) (\(message))"
        }
        checkReady()
    }

    private func refreshDevice(initial: Bool) {
        let mirror = client.mirror
        checkPinnedAdapter()
        let candidates: [AdapterChoice.Candidate] = mirror.devices(address: address).compactMap { d in
            guard let adapter = d.adapter.flatMap({ mirror.adapter($0) }), adapter.powered,
                  options.adapter.map(adapter.matches) ?? true else { return nil }
            return .init(device: d, adapter: adapter, load: adapterLoad?(adapter.path) ?? 0)
        }
        let chosen = AdapterChoice.choose(candidates, current: devicePath, committed: machine.phase.occupiesAdapter)
        let (previous, previousAdapter) = (devicePath, adapterPath)
        // Left while its adapter is still listed: bluetoothd announces an unplugged adapter's
        // end piecemeal (its links drop, it powers off, its devices go, then it goes; seen with
        // real bluetoothd in the lab), so the manager's report on the adapter's removal finds
        // this link through `lostAdapter`, not through the adapter it uses by then.
        if let previous, let previousAdapter, let adapter = mirror.adapter(previousAdapter),
           mirror.device(previous) == nil || !adapter.powered {
            lostAdapter = previousAdapter
        }
        devicePath = chosen?.device.path
        adapterPath = chosen?.adapter.path
        if let chosen { machine.bonded = chosen.device.bonded }
        if initial {
            if chosen != nil { feed(.deviceAvailable(true)) }
            return
        }
        if let chosen, let previous, let previousAdapter, chosen.device.path != previous, machine.phase.occupiesAdapter {
            // The device object in use is gone (its adapter unplugged) and another adapter
            // has one: start over there. Nothing of the old link carries over; its Connect,
            // if one is out, is ignored when it answers.
            BusLog.notice("[\(address)] no longer usable through \(AdapterName.of(previousAdapter)); connecting through \(chosen.adapter.name)",
                          metadata: BusLog.device(address))
            feed(.deviceAvailable(false))
            feed(.deviceAvailable(true))
        } else if (previous != nil) != (chosen != nil) {
            feed(.deviceAvailable(chosen != nil))
        }
        if let chosen, chosen.device.connected, machine.isStarted {
            feed(.connectionChanged(connected: true))
        }
    }

    /// A pinned sensor whose adapter is absent waits for that adapter: said once per
    /// absence, and no discovery asked for meanwhile (other adapters cannot give it a device
    /// object it may use).
    private func checkPinnedAdapter() {
        guard let pin = options.adapter, client.available else { return }
        let present = client.mirror.adapters.contains { $0.matches(pin) }
        if !present && !pinAbsenceLogged {
            BusLog.notice("[\(address)] pinned to \(pin), which is not present: waiting for it", metadata: BusLog.device(address))
        }
        pinAbsenceLogged = !present
        reportDiscoveryWish()
    }

    private func reportDiscoveryWish() {
        let pinUsable = options.adapter.map { pin in client.mirror.adapters.contains { $0.matches(pin) && $0.powered } } ?? true
        let wish = wantsDiscovery && pinUsable
        guard wish != reportedDiscoveryWish else { return }
        reportedDiscoveryWish = wish
        discoveryHook?(address, wish)
    }

    /// The manager has reported the adapter's loss with this link among its sensors.
    func adapterLossReported() {
        lostAdapter = nil
    }

    private func requiredUUIDs() -> [String]? {
        guard let path = devicePath, let device = client.mirror.device(path) else { return nil }
        let services = options.services ?? SensorService.streamed(SensorService.advertised(in: device.uuids))
        return services.map(\.measurement.uuidString)
    }

    func characteristic(_ uuid: String) -> BlueZCharacteristic? {
        guard let path = devicePath else { return nil }
        return client.mirror.characteristics(of: path).first { $0.uuid == uuid }
    }

    private func measurementCharacteristics() -> [BlueZCharacteristic]? {
        guard let path = devicePath, let required = requiredUUIDs() else { return nil }
        let present = client.mirror.characteristics(of: path)
        if required.isEmpty {
            let offered = SensorService.allCases.filter { s in present.contains { $0.uuid == s.measurement.uuidString } }
            let any = SensorService.streamed(offered).compactMap { s in present.first { $0.uuid == s.measurement.uuidString } }
            return any.isEmpty ? nil : any
        }
        let found = required.compactMap { uuid in present.first { $0.uuid == uuid } }
        return found.count == required.count ? found : nil
    }

    private func checkReady() {
        guard machine.phase == .resolving, let path = devicePath, let device = client.mirror.device(path) else { return }
        // ServicesResolved alone is not enough (bluez#1489): the objects must be there too.
        guard device.connected, device.servicesResolved, measurementCharacteristics() != nil else { return }
        feed(.characteristicsReady)
    }

    func deliver(uuid: String, value: [UInt8]) {
        sink?.received(RawNotification(device: address, characteristic: uuid, value: value,
                                       monotonicNanoseconds: SystemClock.monotonicNanoseconds(), wallNanoseconds: SystemClock.wallNanoseconds()))
    }

    // MARK: State machine plumbing

    private func feed(_ input: LinkInput) {
        let commands = machine.handle(input, now: SystemClock.monotonicNanoseconds())
        for command in commands { execute(command) }
        if machine.phase != reportedPhase {
            if machine.phase == .streaming { lostAdapter = nil }
            BusLog.debug("[\(address)] \(reportedPhase) → \(machine.phase)", metadata: BusLog.device(address))
            reportedPhase = machine.phase
            sink?.linkChanged(device: address, phase: machine.phase)
        }
        if machine.phase == .resolving { checkReady() }
    }

    private func execute(_ command: LinkCommand) {
        switch command {
        case .connect:
            guard let path = devicePath else { return feed(.connectFinished(error: .deviceMissing, detail: "no device object")) }
            connectAttempt += 1
            let attempt = connectAttempt
            client.connect(device: path, timeoutMicroseconds: options.timeouts.connect / 1000) { [weak self] result in
                guard let self else { return }
                guard attempt == self.connectAttempt, path == self.devicePath else {
                    // An attempt through a device object the link has left: a connection it
                    // made would hold a slot of that adapter for nothing.
                    if case .success = result, path != self.devicePath { self.client.disconnect(device: path) { _ in } }
                    return
                }
                switch result {
                case .success: self.feed(.connectFinished(error: nil, detail: ""))
                case .failure(let e): self.feed(.connectFinished(error: FailureClass(e), detail: e.description))
                }
            }
        case .disconnect:
            guard let path = devicePath else { return feed(.disconnectFinished) }
            client.disconnect(device: path) { [weak self] _ in self?.feed(.disconnectFinished) }
        case .removeDevice:
            guard let path = devicePath else { return }
            client.remove(device: path) { [address] result in
                if case .failure(let e) = result { BusLog.warning("[\(address)] RemoveDevice failed: \(e)", metadata: BusLog.device(address)) }
            }
        case .subscribe:
            subscribe()
        case .dropSubscriptions:
            dropSubscriptions()
        case .readDeviceInformation:
            if options.readOnConnect { readDeviceInformation() }
        case .setTimer(let deadline):
            setTimer(deadline)
        case .cancelTimer:
            timer?.cancel()
            timer = nil
            timerGeneration += 1
        case .wantDiscovery(let wanted):
            wantsDiscovery = wanted
            reportDiscoveryWish()
        case .log(let level, let text):
            BusLog.log(level, "[\(address)] \(text)", metadata: BusLog.device(address))
        }
    }

    private func setTimer(_ deadline: UInt64) {
        timer?.cancel()
        let now = SystemClock.monotonicNanoseconds()
        let t = DispatchSource.makeTimerSource(queue: client.queue)
        t.schedule(deadline: .now() + .nanoseconds(Int(deadline > now ? deadline - now : 0)))
        timerGeneration += 1
        let generation = timerGeneration
        t.setEventHandler { @Sendable [weak self] in
            guard let self, self.timerGeneration == generation else { return }
            self.timer = nil
            self.feed(.timer)
        }
        timer = t
        t.resume()
    }

    private func subscribe() {
        dropSubscriptions()
        guard let chars = measurementCharacteristics() else { return feed(.subscribeFinished(error: "characteristics vanished")) }
        epoch += 1
        let current = epoch
        let control = fitnessMachineControlCharacteristics(streaming: chars)
        pendingSubscribes = control.count + chars.count
        subscribeFailure = nil
        let finish: @Sendable (String?) -> Void = { [weak self] error in
            guard let self, self.epoch == current else { return }
            if let error, self.subscribeFailure == nil { self.subscribeFailure = error }
            self.pendingSubscribes -= 1
            if self.pendingSubscribes == 0 { self.feed(.subscribeFinished(error: self.subscribeFailure)) }
        }
        // First, so a controller can write as soon as the link is up (SensorLink+Trainer.swift).
        subscribeFitnessMachineControl(control, current, finish)
        for c in chars {
            // The handler is attached before notifications are enabled, so one sent right
            // after the CCC write is not lost.
            subscribed[c.path] = c.uuid
            switch options.notifyMode {
            case .startNotify:
                client.startNotify(characteristic: c.path) { result in
                    if case .failure(let e) = result { finish("StartNotify \(c.uuid): \(e)") } else { finish(nil) }
                }
            case .acquireNotify:
                client.acquireNotify(characteristic: c.path) { [weak self] result in
                    guard let self, self.epoch == current else {
                        if case .success(let r) = result { _ = closeFD(r.fd) }
                        return
                    }
                    switch result {
                    case .success(let r):
                        let uuid = c.uuid
                        self.sockets[c.path] = NotifySocket(fd: r.fd, mtu: r.mtu, bus: self.client.bus,
                            onData: { [weak self] bytes in self?.deliver(uuid: uuid, value: bytes) },
                            onClose: { [weak self] in
                                guard let self, self.epoch == current else { return }
                                self.sockets[c.path] = nil
                                // A HUP during a disconnect is followed by Connected=false; let
                                // that arrive first, then re-subscribe only if still connected.
                                self.client.queue.async { [weak self] in self?.feed(.notificationsStopped) }
                            })
                        finish(nil)
                    case .failure(let e):
                        finish("AcquireNotify \(c.uuid): \(e)")
                    }
                }
            }
        }
        subscribeBatteryLevel(current)
    }

    /// Battery Level (0x2A19) where it notifies: a new level arrives as a notification at once,
    /// not only once BlueZ's battery plugin updates Battery1 (or where it has none). Optional:
    /// the link neither waits for it nor fails with it; without notify the level is read on
    /// connect as before. Always StartNotify: a level changes every few minutes, and with
    /// AcquireNotify bluetoothd drops what arrives before the fd is set up.
    private func subscribeBatteryLevel(_ current: Int) {
        guard let c = characteristic(GATTCharacteristic.batteryLevel.uuidString), c.flags.contains("notify") else { return }
        subscribed[c.path] = c.uuid
        client.startNotify(characteristic: c.path) { [weak self] result in
            guard let self, self.epoch == current, case .failure(let e) = result else { return }
            self.subscribed[c.path] = nil
            BusLog.info("[\(self.address)] battery level notifications unavailable (\(e)); read on connect only",
                        metadata: BusLog.device(self.address))
        }
    }

    private func dropSubscriptions() {
        epoch += 1
        subscribed = [:]
        for s in sockets.values { s.cancel() }
        sockets = [:]
    }

    private func readDeviceInformation() {
        guard let path = devicePath, let device = client.mirror.device(path) else { return }
        if let pct = device.batteryPercentage { sink?.battery(device: address, percentage: pct) }
        let wanted: [GATTCharacteristic] = [.batteryLevel, .bodySensorLocation, .sensorLocation, .cyclingPowerFeature,
                                            .fitnessMachineFeature, .supportedPowerRange, .supportedResistanceLevelRange,
                                            .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision,
                                            .hardwareRevision, .softwareRevision]
        for c in wanted {
            guard let char = characteristic(c.uuidString), char.flags.contains("read") else { continue }
            client.readValue(characteristic: char.path) { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let value): self.sink?.read(device: self.address, characteristic: char.uuid, value: value)
                case .failure(let e): BusLog.info("[\(self.address)] reading \(c.name) failed: \(e)", metadata: BusLog.device(self.address))
                }
            }
        }
    }
}
