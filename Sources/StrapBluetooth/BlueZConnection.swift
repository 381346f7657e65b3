import Dispatch
import Glibc
import StrapBlueZ
import StrapSystem
import Synchronization

/// The bus under the device service: one sd-bus connection, one `BlueZClient` and one
/// `SensorManager`, all on the bus queue. Without a bus it retries with backoff (1 s,
/// doubling up to 60 s); when the bus breaks (dbus-daemon restarted) it drops everything built
/// on it and connects again. It also says, from any queue, why Bluetooth is unusable.
final class BlueZConnection: @unchecked Sendable {
    /// What the owner hears about, on the bus queue.
    struct Events {
        /// A client and manager are up: at start and after every reconnect.
        var connected: (SensorManager) -> Void = { _ in }
        /// The bus broke. Called before the old manager stops its links.
        var lost: () -> Void = {}
        /// A BlueZ event, after the sensor manager has seen it.
        var bluez: (BlueZEvent, BlueZClient) -> Void = { _, _ in }
    }

    let queue: DispatchQueue
    private let busAddress: String?
    private let adapter: String?
    private let logger: Logger
    /// The links' sink (the device service, which owns this connection).
    private weak var sink: (any SensorSink)?
    private let degradedReason = Mutex<String?>("starting")

    // Confined to `queue`.
    private(set) var client: BlueZClient?
    private(set) var manager: SensorManager?
    private var bus: Bus?
    private var events = Events()
    private var retry: DispatchSourceTimer?
    private var retryDelay = 1.0
    private var stopped = false

    /// `busAddress` nil: the system bus. `adapter`: use only this one (`[bluetooth] adapter`).
    init(queue: DispatchQueue, busAddress: String?, adapter: String?, logger: Logger, sink: any SensorSink) {
        self.queue = queue
        self.busAddress = busAddress
        self.adapter = adapter
        self.logger = logger
        self.sink = sink
    }

    /// Why Bluetooth is degraded ("bluetoothd not running", "no adapter"), nil when usable.
    var degraded: String? { degradedReason.withLock { $0 } }

    func start(_ events: Events) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.events = events
        connect()
    }

    /// Stops every link and closes the bus; no reconnect after this.
    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        stopped = true
        retry?.cancel()
        manager?.stop()
        client?.stop()
        bus?.close()
        (manager, client, bus) = (nil, nil, nil)
    }

    private func connect() {
        guard !stopped, let sink else { return }
        do throws(BusError) {
            let bus: Bus
            if let busAddress { bus = try Bus.connect(address: busAddress, queue: queue) } else { bus = try Bus.system(queue: queue) }
            let client = BlueZClient(bus: bus)
            client.onlyAdapter = adapter
            let manager = SensorManager(client: client, sink: sink)
            try client.start()
            try manager.start()
            // After the manager's observer, so a Disconnected reason is recorded before the
            // link sees Connected=false.
            client.observe { [weak self, weak client] event in
                guard let self, let client else { return }
                self.events.bluez(event, client)
                if Self.mayChangeReadiness(event) { self.updateDegraded() }
            }
            // BlueZClient leaves reconnecting to the bus itself to us (dbus-daemon restarted).
            bus.onDisconnect { [weak self, weak bus] in
                guard let self, let bus, self.bus === bus, !self.stopped else { return }
                self.lost()
            }
            self.bus = bus
            self.client = client
            self.manager = manager
            retryDelay = 1
            // Quietly: the tree is still loading, and BlueZClient itself says so if org.bluez
            // is missing.
            updateDegraded(log: false)
            events.connected(manager)
        } catch {
            failed(error)
        }
    }

    private func failed(_ error: BusError) {
        let why = error.description
        setDegraded("no system D-Bus (\(why))")
        let delay = retryDelay
        retryDelay = min(60, retryDelay * 2)
        logger.info("bluetooth: retrying the system bus in \(Int(delay)) s")
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + delay)
        t.setEventHandler { @Sendable [weak self] in self?.connect() }
        retry = t
        t.resume()
    }

    /// The bus connection broke (dbus-daemon restarted or died): drop everything built on it
    /// and connect again with backoff; the owner rebuilds the links on `connected`.
    private func lost() {
        logger.error("bluetooth: lost the system D-Bus connection; reconnecting")
        events.lost()
        manager?.stop()
        client?.stop()
        let old = bus
        (manager, client, bus) = (nil, nil, nil)
        // Not closed inside its own disconnect callback.
        queue.async { old?.close() }
        failed(.closed)
    }

    /// Whether `event` can change what `updateDegraded` finds: not a notification's
    /// PropertiesChanged (it walked every mirrored object, per notification).
    private static func mayChangeReadiness(_ event: BlueZEvent) -> Bool {
        switch event {
        case .availability: true
        case .interfacesAdded(_, let interfaces), .interfacesRemoved(_, let interfaces): interfaces.contains(BlueZInterface.adapter)
        case .propertiesChanged(_, let interface, _): interface == BlueZInterface.adapter
        case .deviceDisconnected, .characteristicValue: false
        }
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
}
