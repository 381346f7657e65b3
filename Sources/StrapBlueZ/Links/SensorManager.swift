import Dispatch
import StrapDBus

/// Owns the sensor links on one BlueZClient: routes mirror events to them, runs discovery
/// while any wanted sensor has no device object, keeps the GattProfile1 application
/// registered on every adapter (again after each bluetoothd restart or adapter re-add),
/// counts each adapter's links for the links' choice of adapter, and says once which
/// sensors an adapter that disappears had.
public final class SensorManager: @unchecked Sendable {
    public let client: BlueZClient
    public let application: GattProfileApplication
    public private(set) var links: [String: SensorLink] = [:]
    private let sink: any SensorSink
    private var wantsDiscovery: Set<String> = []
    private var discovery: [ObjectPath: DiscoveryMachine] = [:]
    private var registered: Set<ObjectPath> = []
    /// The adapters in use as last seen: a removed one's address is gone from the mirror.
    private var adapters: [ObjectPath: BlueZAdapter] = [:]
    private var discoveryRetry: DispatchSourceTimer?
    private var discoveryBackoff = Backoff(policy: BackoffPolicy(base: 0.5, cap: 10))
    private var agent: PairingAgent?
    /// A Just Works pairing takes a few seconds; a sensor found moments ago that does not
    /// answer within this has stopped advertising or gone (`cancelStalledPairing`).
    public var pairingTimeout: Double = 30
    private var observer: Int?
    /// Characteristic path → the link subscribed to it and the UUID: a notification's value
    /// goes to that link alone. Handed to every link, it cost a dictionary lookup per link per
    /// notification (thirty straps, thirty lookups). Rebuilt when a link's subscriptions change.
    private var valueRoutes: [ObjectPath: (link: SensorLink, uuid: String)] = [:]

    public var queue: DispatchQueue { client.queue }

    public init(client: BlueZClient, sink: any SensorSink) {
        self.client = client
        self.sink = sink
        application = GattProfileApplication(bus: client.bus)
    }

    public func start() throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        try application.export()
        observer = client.observe { [weak self] event in self?.handle(event) }
        if client.available { handle(.availability(true)) }
    }

    /// Stops every link (disconnecting its sensor) and withdraws the exported objects.
    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        for address in Array(links.keys) { remove(address: address) }
        if let observer { client.removeObserver(observer) }
        observer = nil
        discoveryRetry?.cancel()
        discoveryRetry = nil
        application.unexport()
        agent?.unexport()
        agent = nil
    }

    @discardableResult
    public func add(address: String, options: SensorLinkOptions = SensorLinkOptions()) -> SensorLink {
        dispatchPrecondition(condition: .onQueue(queue))
        if let existing = links[address.uppercased()] { return existing }
        let link = SensorLink(address: address, options: options, client: client, sink: sink)
        link.discoveryHook = { [weak self] address, wanted in self?.discovery(for: address, wanted) }
        link.adapterLoad = { [weak self, weak link] adapter in
            guard let self, let link else { return 0 }
            return self.load(on: adapter, except: link)
        }
        link.subscriptionsChanged = { [weak self] in self?.routeValues() }
        links[link.address] = link
        link.start()
        return link
    }

    public func remove(address: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let link = links.removeValue(forKey: address.uppercased()) else { return }
        link.subscriptionsChanged = nil
        link.stop()
        routeValues()
        discovery(for: link.address, false)
    }

    /// Stops the link and removes the device from BlueZ on every adapter (bond and GATT
    /// cache included), like `bluetoothctl remove`.
    public func forget(address: String, _ done: @escaping BlueZClient.Completion) {
        dispatchPrecondition(condition: .onQueue(queue))
        remove(address: address)
        removeDevices(client.mirror.devices(address: address).map(\.path)[...], firstFailure: nil, done)
    }

    private func removeDevices(_ paths: ArraySlice<ObjectPath>, firstFailure: BusError?, _ done: @escaping BlueZClient.Completion) {
        guard let path = paths.first else { return done(firstFailure.map { .failure($0) } ?? .success(())) }
        client.remove(device: path) { [weak self] result in
            var failure = firstFailure
            if case .failure(let e) = result, failure == nil { failure = e }
            guard let self else { return done(failure.map { .failure($0) } ?? .success(())) }
            self.removeDevices(paths.dropFirst(), firstFailure: failure, done)
        }
    }

    // MARK: Pairing (opt-in)

    /// Pairs, then marks the device trusted. With an `agent` policy strapd's own agent
    /// (registered if needed) answers BlueZ; with nil the agent someone else registered
    /// (bluetoothctl's) does.
    public func pair(address: String, agent policy: PairingAgent.Policy? = .acceptJustWorks, _ done: @escaping BlueZClient.Completion) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let device = client.mirror.devices(address: address).first else {
            return done(.failure(.reply(DBusErrorReply(name: BlueZErrorName.doesNotExist.rawValue, message: "no device \(address)"))))
        }
        guard let policy else { return pairAndTrust(address: address, device: device.path, done) }
        let agent: PairingAgent
        if let existing = self.agent {
            agent = existing
        } else {
            agent = PairingAgent(bus: client.bus)
            do throws(BusError) { try agent.export() } catch { return done(.failure(error)) }
            self.agent = agent
        }
        agent.policy = policy
        client.registerAgent(path: agent.path, capability: agent.capability) { [weak self] result in
            guard let self else { return }
            if case .failure(let e) = result, e.errorName != BlueZErrorName.alreadyExists.rawValue { return done(.failure(e)) }
            self.pairAndTrust(address: address, device: device.path, done)
        }
    }

    private func pairAndTrust(address: String, device: ObjectPath, _ done: @escaping BlueZClient.Completion) {
        client.pair(device: device, timeoutSeconds: pairingTimeout) { [weak self] result in
            guard let self else { return done(result) }
            if case .failure(let e) = result {
                if e.errorName == FreedesktopErrorName.noReply.rawValue {
                    return self.cancelStalledPairing(address: address, device: device, done)
                }
                BusLog.warning("pairing \(address) failed: \(e)", metadata: BusLog.device(address))
                return done(.failure(e))
            }
            self.client.setTrusted(device: device, true, done)
        }
    }

    /// A pairing BlueZ has not finished in `pairingTimeout` is cancelled. The kernel looks for
    /// the sensor with a passive scan that has no time limit of its own; bluetoothd gives up
    /// only after two minutes, and until then its one management-command queue is held by the
    /// pending Pair Device, so the adapter can neither scan nor change its advertising. Its
    /// CancelPairing goes out as a reply that may jump that queue, and frees it.
    private func cancelStalledPairing(address: String, device: ObjectPath, _ done: @escaping BlueZClient.Completion) {
        let seconds = Int(pairingTimeout.rounded())
        BusLog.warning("pairing \(address): BlueZ did not finish it in \(seconds) s (is the sensor still advertising?); cancelling it",
                       metadata: BusLog.device(address))
        client.cancelPairing(device: device) { result in
            if case .failure(let e) = result {
                BusLog.warning("pairing \(address): CancelPairing failed: \(e)", metadata: BusLog.device(address))
            }
            done(.failure(.reply(DBusErrorReply(name: BlueZErrorName.authenticationTimeout.rawValue,
                                                message: "pairing did not finish within \(seconds) s and was cancelled"))))
        }
    }

    /// strapd's links connected or connecting through `adapter`, `link` aside.
    func load(on adapter: ObjectPath, except link: SensorLink) -> Int {
        links.values.filter { $0 !== link && $0.adapterPath == adapter && $0.phase.occupiesAdapter }.count
    }

    // MARK: Events

    private func routeValues() {
        valueRoutes.removeAll(keepingCapacity: true)
        for link in links.values {
            for (path, uuid) in link.subscribed { valueRoutes[path] = (link, uuid) }
        }
    }

    private func handle(_ event: BlueZEvent) {
        if case .characteristicValue(let path, let value) = event {
            // No link's state depends on another's values (the mirror is not updated by them).
            valueRoutes[path].map { $0.link.deliver(uuid: $0.uuid, value: value) }
            return
        }
        switch event {
        case .availability(let up):
            for path in Array(discovery.keys) { drive(path, .lost) }
            registered = []
            adapters = [:]
            if up { client.mirror.adapters.forEach(adapterAppeared) }
        case .interfacesAdded(let path, let names) where names.contains(BlueZInterface.adapter):
            if let adapter = client.mirror.adapter(path) {
                BusLog.notice("adapter \(adapter.name)\(adapter.address.map { " (\($0))" } ?? "") appeared")
                adapterAppeared(adapter)
            }
        case .interfacesRemoved(let path, let names) where names.contains(BlueZInterface.adapter):
            // Before the links see the event: until then a link on it still says so.
            if let adapter = adapters.removeValue(forKey: path) { reportLoss(of: adapter) }
            drive(path, .lost)
            registered.remove(path)
        case .propertiesChanged(let path, BlueZInterface.adapter, let changed):
            if let powered = changed["Powered"]?.bool {
                BusLog.notice("adapter \(AdapterName.of(path)) powered \(powered ? "on" : "off")")
                if !powered { drive(path, .lost) }
                if powered { updateDiscovery() }
            }
            // Ended behind our back (a scan's StopDiscovery ends ours too); ignored while our
            // own calls are in flight, whose replies say where discovery is.
            if changed["Discovering"]?.bool == false, discovery[path]?.phase == .running { drive(path, .lost) }
        default:
            break
        }
        for link in links.values { link.handle(event) }
    }

    private func reportLoss(of adapter: BlueZAdapter) {
        let onIt = links.values.filter { $0.adapterPath == adapter.path || $0.lostAdapter == adapter.path }
        let pinned = onIt.filter { link in link.options.adapter.map(adapter.matches) ?? false }
        let report = AdapterLossReport(adapter: adapter.name, address: adapter.address,
                                       moving: onIt.filter { link in !pinned.contains { $0 === link } }.map(\.address).sorted(),
                                       pinned: pinned.map(\.address).sorted(),
                                       remaining: client.mirror.adapters.filter(\.powered).map(\.name))
        BusLog.log(report.level, report.text)
        onIt.forEach { $0.adapterLossReported() }
    }

    private func adapterAppeared(_ adapter: BlueZAdapter) {
        adapters[adapter.path] = adapter
        if !registered.contains(adapter.path) {
            registered.insert(adapter.path)
            client.registerApplication(adapter: adapter.path, root: application.root) { [weak self] result in
                switch result {
                case .success: BusLog.info("GattProfile1 registered on \(adapter.path) for \(self?.application.uuids ?? [])")
                case .failure(let e):
                    BusLog.warning("RegisterApplication on \(adapter.path) failed: \(e); auto-connect relies on strapd's own reconnects")
                }
            }
        }
        updateDiscovery()
    }

    // MARK: Discovery

    private func discovery(for address: String, _ wanted: Bool) {
        if wanted { wantsDiscovery.insert(address) } else { wantsDiscovery.remove(address) }
        updateDiscovery()
    }

    private func updateDiscovery() {
        guard client.available else { return }
        if wantsDiscovery.isEmpty {
            for path in Array(discovery.keys) { drive(path, .want(false)) }
            return
        }
        for adapter in client.mirror.adapters where adapter.powered { drive(adapter.path, .want(true)) }
    }

    /// Feeds one adapter's `DiscoveryMachine` and sends what it asks for (see there why a
    /// change of mind waits for the reply of a call in flight).
    private func drive(_ path: ObjectPath, _ input: DiscoveryMachine.Input) {
        var machine = discovery[path] ?? DiscoveryMachine()
        let command = machine.handle(input)
        discovery[path] = machine
        guard let command else { return }
        if command == .setDiscoveryFilter { BusLog.info("discovering on \(path) for \(wantsDiscovery.sorted())") }
        client.send(command, adapter: path, epoch: machine.epoch) { [weak self] input, error in
            guard let self else { return }
            self.drive(path, input)
            switch (input, error) {
            case (.stopFinished, _): break
            case (_, nil): if case .startFinished = input { self.discoveryBackoff.reset() }
            // An adapter that is gone (unplugged meanwhile) failed for good: nothing to retry.
            case (_, let e?) where self.client.mirror.adapter(path) != nil: self.retryDiscovery("\(command) on \(path) failed: \(e)")
            default: break
            }
        }
    }

    /// BlueZ keeps one discovery session per D-Bus client, so a `DiscoverySession` that
    /// stops also ends the discovery this manager runs for missing sensors: call this after
    /// its stop is through to start it again where still wanted.
    public func resumeDiscovery() {
        dispatchPrecondition(condition: .onQueue(queue))
        for path in Array(discovery.keys) { drive(path, .lost) }
        updateDiscovery()
    }

    private func retryDiscovery(_ why: String) {
        let delay = discoveryBackoff.next()
        BusLog.warning("\(why); retrying in \(delay.formatted) s")
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + delay)
        t.setEventHandler { @Sendable [weak self] in
            self?.discoveryRetry = nil
            self?.updateDiscovery()
        }
        discoveryRetry?.cancel()
        discoveryRetry = t
        t.resume()
    }
}
