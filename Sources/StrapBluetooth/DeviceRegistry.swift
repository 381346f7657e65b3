import Dispatch
import StrapBlueZ
import StrapConfig
import StrapDBus
import StrapGATT
import StrapIngest
import StrapSystem

/// What the device service knows about sensors, and the `devices.*` operations on it
/// (docs/protocol.md): the known devices (`known-devices.json`), which sensors stream, why
/// each last disconnected, the `connect` callers waiting, the running scan. Confined to the
/// bus queue; the service passes in the BlueZ objects of the moment and calls completions there.
final class DeviceRegistry {
    /// SIGHUP replaces the reloadable parts.
    private(set) var settings: Settings
    private let logger: Logger
    private var known: KnownDevices
    private var streaming: Set<SensorAddress> = []
    /// BlueZ's reason for the last disconnect (Device1.Disconnected), or ours.
    private var lastDisconnect: [SensorAddress: String] = [:]
    private var waiters = ConnectWaiters()
    private var scanSession: DiscoverySession?
    /// Ended scans whose StopDiscovery may still be in flight, and the starts of scans begun
    /// meanwhile: BlueZ keeps one discovery per D-Bus client, so such a stop arriving after a
    /// new scan's StartDiscovery would end the new scan's discovery too.
    private var scansStopping: Set<Int> = []
    private var startsAfterStops: [() -> Void] = []
    private var scanCount = 0
    /// UUID string → characteristic, parsed once per UUID rather than per notification.
    private var characteristics: [String: GATTCharacteristic?] = [:]

    typealias Settings = BlueZDeviceService.Settings
    typealias Completion = @Sendable (DeviceError?) -> Void

    init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        known = KnownDevices(directory: settings.stateDirectory)
    }

    // MARK: Lifecycle

    func loadKnownDevices() {
        if let problem = known.load() {
            logger.error("known devices \(known.path): \(problem)")
        }
        if let adapter = settings.bluetooth.adapter { logger.info("bluetooth: using adapter \(adapter) only") }
        logger.info("\(known.entries.count) known device(s)\(known.entries.isEmpty ? "" : ": ")\(known.entries.keys.sorted().joined(separator: ", "))")
    }

    /// A link for every known device that is not switched off by `devices.disconnect`.
    func connectKnownDevices(_ manager: SensorManager) {
        for entry in known.entries.values.sorted(by: { $0.address < $1.address }) where entry.autoConnect {
            manager.add(address: entry.address, options: settings.linkOptions(entry.address))
        }
    }

    /// Returns whether auto-connect was switched on.
    func reload(bluetooth: Configuration.Bluetooth, devices: [String: Configuration.DeviceSettings]) -> Bool {
        let enabled = bluetooth.autoConnect && !settings.bluetooth.autoConnect
        settings.bluetooth.autoConnect = bluetooth.autoConnect
        settings.bluetooth.scanTimeout = bluetooth.scanTimeout
        settings.devices = devices
        return enabled
    }

    /// strapd stops: the scan ends, waiting callers are answered, the links' end has a reason.
    func stopping() {
        scanSession?.stop()
        scanSession = nil
        answer(waiters.takeAll(), .unavailable("strapd is stopping"))
        for address in streaming { lastDisconnect[address] = "strapd stopping" }
    }

    /// The bus broke: everything built on it is gone.
    func busLost() {
        for address in streaming { lastDisconnect[address] = "system D-Bus connection lost" }
        scanSession = nil
        scansStopping = []
        startsAfterStops = []
        answer(waiters.takeAll(), .unavailable("lost the system D-Bus connection"))
    }

    func observe(_ event: BlueZEvent, _ client: BlueZClient) {
        if case .deviceDisconnected(let path, let reason, let message) = event,
           let address = client.mirror.device(path)?.address?.uppercased() {
            lastDisconnect[address] = message.isEmpty ? reason : "\(reason) (\(message))"
        }
    }

    // MARK: Links

    func characteristic(_ uuid: String) -> GATTCharacteristic? {
        if let cached = characteristics[uuid] { return cached }
        let parsed = GATTCharacteristic(parsing: uuid)
        characteristics[uuid] = parsed
        return parsed
    }

    /// False when it already streamed.
    func streamingStarted(_ address: SensorAddress) -> Bool {
        guard streaming.insert(address).inserted else { return false }
        lastDisconnect[address] = nil
        return true
    }

    /// The reason a streaming link ended, nil when it was not streaming.
    func streamingStopped(_ address: SensorAddress, phase: LinkPhase, _ client: BlueZClient?) -> String? {
        guard streaming.remove(address) != nil else { return nil }
        let reason: String
        if let known = lastDisconnect[address] {
            reason = known
        } else if let client, !client.available {
            reason = client.bus.isOpen ? "bluetoothd went away" : "system D-Bus connection lost"
        } else if client?.mirror.devices(address: address).contains(where: \.connected) == true {
            reason = "link \(phase)"
        } else if phase == .waitingForDevice {
            // Straight from streaming to no device object: no disconnect came first (a pulled
            // dongle takes its objects with it).
            reason = "device object removed (adapter unplugged, or the device removed from BlueZ)"
        } else {
            // Older BlueZ sends no Disconnected signal, only Connected=false.
            reason = "Connected=false (no reason signal)"
        }
        lastDisconnect[address] = reason
        return reason
    }

    func answerWaiters(_ address: SensorAddress, _ error: DeviceError?) {
        answer(waiters.take(address), error)
    }

    /// Outside any access to `waiters`: a completion may call back in.
    private func answer(_ completions: [Completion], _ error: DeviceError?) {
        for completion in completions { completion(error) }
    }

    /// `[device.ADDR] name`, else BlueZ's alias or name, else the name it was remembered with.
    func displayName(_ address: SensorAddress, _ client: BlueZClient?) -> String {
        if let name = settings.devices[address]?.name { return name }
        if let device = client?.mirror.devices(address: address).first, let name = device.alias ?? device.name { return name }
        return known.entries[address]?.name ?? address
    }

    /// The sensors to read the RSSI of: connected, ours, on an adapter with an HCI index.
    func rssiTargets(_ connection: BlueZConnection) -> [RSSISampler.Target] {
        guard let client = connection.client else { return [] }
        return client.mirror.devices.compactMap { d in
            guard d.connected, let address = d.address?.uppercased(),
                  known.entries[address] != nil || connection.manager?.links[address] != nil,
                  let index = d.adapter.flatMap({ LinkQualityReader.adapterIndex($0.rawValue) }) else { return nil }
            return (address, index)
        }
    }

    // MARK: devices.list / devices.info

    /// The `known` count of `snapshot`: every known address is in it.
    var knownCount: Int { known.entries.count }

    func snapshot(_ connection: BlueZConnection, rssi: (SensorAddress) -> RSSIReading?) -> [DeviceInfo] {
        var addresses = Set(known.entries.keys)
        if let manager = connection.manager { addresses.formUnion(manager.links.keys) }
        if let client = connection.client { addresses.formUnion(client.discoveredSensors.map { $0.address.uppercased() }) }
        return addresses.sorted().map { info($0, connection.client, link: connection.manager?.links[$0], rssi: rssi($0)) }
    }

    private func info(_ address: SensorAddress, _ client: BlueZClient?, link: SensorLink?, rssi reading: RSSIReading?) -> DeviceInfo {
        var info = DeviceInfo(address: address, name: displayName(address, client))
        info.known = known.entries[address] != nil
        let device = inUse(address, client, link: link)
        if let device, let adapter = device.adapter {
            info.adapter = AdapterName.of(adapter)
            info.adapterAddress = client?.mirror.adapter(adapter)?.address
        }
        // Without a device object in use, BlueZ's other objects still say paired and services.
        if let device = device ?? client?.mirror.devices(address: address).first {
            info.connected = device.connected
            info.paired = device.paired
            info.battery = device.batteryPercentage
            var services = device.uuids.map { $0.lowercased() }
            if let client, services.isEmpty { services = client.mirror.services(of: device.path).map(\.uuid) }
            info.services = services.sorted()
        }
        info.lastDisconnectReason = lastDisconnect[address]
        if let reading {
            info.rssi = reading.value
            info.rssiUnavailableReason = reading.reason
        } else {
            info.rssiUnavailableReason = info.connected ? "not measured yet" : "not connected"
        }
        return info
    }

    /// The device object the sensor's link uses, nil while it has none; without a link, the
    /// one connected by someone else (BlueZ's auto-connect, bluetoothctl).
    private func inUse(_ address: SensorAddress, _ client: BlueZClient?, link: SensorLink?) -> BlueZDevice? {
        guard let client else { return nil }
        if let link { return link.devicePath.flatMap { client.mirror.device($0) } }
        return client.mirror.devices(address: address).first(where: \.connected)
    }

    // MARK: devices.scan

    /// False when a scan is already running. One `found` per device, again only when its
    /// name or services change (not for every RSSI update BlueZ relays while discovering).
    func startScan(_ client: BlueZClient, found: @escaping @Sendable (DiscoveredDevice) -> Void) -> Bool {
        guard scanSession == nil else { return false }
        let seen = ScanReports()
        let session = DiscoverySession(client: client) { sensor in
            let device = DiscoveredDevice(address: sensor.address.uppercased(), name: sensor.name, rssi: sensor.rssi.map(Int.init),
                                          services: sensor.services.map(\.service.uuidString))
            if seen.isNew(device) { found(device) }
        }
        scanSession = session
        if scansStopping.isEmpty { session.start() } else { startsAfterStops.append { session.start() } }
        return true
    }

    /// Ends the running scan; `settled` gets its number once its StopDiscovery is through
    /// (which also ended the manager's rediscovery: one discovery per client).
    func endScan(_ settled: @escaping @Sendable (Int) -> Void) {
        guard let session = scanSession else { return }
        scanSession = nil
        scanCount += 1
        let id = scanCount
        scansStopping.insert(id)
        session.stop { settled(id) }
    }

    /// Scans begun while `id` was stopping start discovery once no ended scan is in flight.
    func scanSettled(_ id: Int) {
        guard scansStopping.remove(id) != nil, scansStopping.isEmpty else { return }
        let starts = startsAfterStops
        startsAfterStops = []
        starts.forEach { $0() }
    }
}

// MARK: - devices.pair / connect / disconnect / forget / resetEnergy

extension DeviceRegistry {
    /// Pairs and trusts. With `[bluetooth] pair_agent` strapd registers its own agent
    /// (NoInputNoOutput, Just Works); without it, another agent (bluetoothctl's) must answer.
    func pair(_ address: SensorAddress, _ client: BlueZClient, _ manager: SensorManager, _ completion: @escaping Completion) {
        guard let address = KnownDevices.normalise(address), !client.mirror.devices(address: address).isEmpty else {
            return completion(.notFound(address))
        }
        let agent = settings.bluetooth.pairAgent
        let done: BlueZClient.Completion = { [logger] result in
            switch result {
            case .success:
                logger.notice("[\(address)] paired and trusted", metadata: [LogKey.deviceAddress: address])
                completion(nil)
            case .failure(let e):
                var error = DeviceError(e, address: address)
                if !agent, e.errorName == BlueZErrorName.authenticationFailed.rawValue {
                    error = .failed("\(error) (no pairing agent: set [bluetooth] pair_agent = yes, or run bluetoothctl's agent)")
                }
                completion(error)
            }
        }
        manager.pair(address: address, agent: agent ? .acceptJustWorks : nil, done)
    }

    /// Remembers the sensor (saved before connecting, so a crash can't lose it) and starts its
    /// link. Returns the normalised address and the waiter's id when the caller waits for it to
    /// stream (the service ends the wait after `connectWait`); nil when already answered.
    func connect(_ address: SensorAddress, _ client: BlueZClient, _ manager: SensorManager,
                          _ completion: @escaping Completion) -> (address: SensorAddress, waiter: Int)? {
        guard let address = KnownDevices.normalise(address) else { completion(.notFound(address)); return nil }
        let device = client.mirror.devices(address: address).first
        guard device != nil || known.entries[address] != nil else { completion(.notFound(address)); return nil }
        let entry = KnownDevices.Entry(address: address, name: device?.alias ?? device?.name ?? known.entries[address]?.name,
                                       autoConnect: true)
        do throws(KnownDevicesError) { try remember(entry) } catch {
            completion(.failed("cannot save \(known.path): \(error)"))
            return nil
        }
        if streaming.contains(address) { completion(nil); return nil }
        let id = waiters.add(address, completion)
        manager.add(address: address, options: settings.linkOptions(address))
        return (address, id)
    }

    /// `connectWait` passed: a caller still waiting hears why its sensor does not stream yet.
    func connectWaitEnded(_ address: SensorAddress, waiter id: Int, _ manager: SensorManager) {
        guard let completion = waiters.expire(address, id: id) else { return }
        let phase = manager.links[address]?.phase.description ?? "idle"
        let why = lastDisconnect[address].map { ", last disconnect: \($0)" } ?? ""
        completion(.failed("\(address) is remembered but not streaming yet (\(phase)\(why)); strapd keeps trying"))
    }

    /// Stops the link and disconnects. The sensor stays known but is not reconnected (not
    /// even after a restart) until `devices.connect`.
    func disconnect(_ address: SensorAddress, _ client: BlueZClient, _ manager: SensorManager,
                             _ completion: @escaping Completion) {
        guard let address = KnownDevices.normalise(address),
              known.entries[address] != nil || manager.links[address] != nil || !client.mirror.devices(address: address).isEmpty else {
            return completion(.notFound(address))
        }
        if var entry = known.entries[address], entry.autoConnect {
            entry.autoConnect = false
            do throws(KnownDevicesError) { try remember(entry) } catch {
                return completion(.failed("cannot save \(known.path): \(error)"))
            }
        }
        lastDisconnect[address] = "disconnected by request"
        answer(waiters.take(address), .failed("disconnected by request"))
        if manager.links[address] != nil {
            manager.remove(address: address)
            return completion(nil)
        }
        // Connected by someone else (BlueZ's auto-connect, bluetoothctl): disconnect anyway.
        guard let device = client.mirror.devices(address: address).first(where: \.connected) else { return completion(nil) }
        client.disconnect(device: device.path) { result in
            if case .failure(let e) = result { return completion(DeviceError(e, address: address)) }
            completion(nil)
        }
    }

    /// Stops the link, removes the device from BlueZ (bond and GATT cache) and forgets it.
    func forget(_ address: SensorAddress, _ client: BlueZClient, _ manager: SensorManager,
                         _ completion: @escaping Completion) {
        guard let address = KnownDevices.normalise(address) else { return completion(.notFound(address)) }
        let wasKnown = known.entries[address] != nil
        guard wasKnown || !client.mirror.devices(address: address).isEmpty else { return completion(.notFound(address)) }
        if wasKnown {
            known.remove(address)
            do throws(KnownDevicesError) { try known.save() } catch {
                return completion(.failed("cannot save \(known.path): \(error)"))
            }
        }
        lastDisconnect[address] = "forgotten"
        answer(waiters.take(address), .failed("forgotten"))
        manager.forget(address: address) { [logger] result in
            if case .failure(let e) = result {
                // Known to us but already gone from BlueZ: forgetting still succeeded.
                if e.errorName == BlueZErrorName.doesNotExist.rawValue, wasKnown { return completion(nil) }
                return completion(DeviceError(e, address: address))
            }
            logger.notice("[\(address)] forgotten", metadata: [LogKey.deviceAddress: address])
            completion(nil)
        }
    }

    func resetEnergy(_ address: SensorAddress, _ manager: SensorManager, _ completion: @escaping Completion) {
        guard let address = KnownDevices.normalise(address), let link = manager.links[address] else {
            return completion(.notFound(address))
        }
        guard streaming.contains(address) else { return completion(.unavailable("\(address) is not connected")) }
        link.resetEnergyExpended { result in
            if case .failure(let e) = result { return completion(DeviceError(e, address: address)) }
            completion(nil)
        }
    }

    /// A control point write (docs/trainer.md) through the link of a device that streams.
    func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8], _ client: BlueZClient,
               _ manager: SensorManager, _ completion: @escaping Completion) {
        guard let address = KnownDevices.normalise(address),
              manager.links[address] != nil || !client.mirror.devices(address: address).isEmpty else { return completion(.notFound(address)) }
        guard let link = manager.links[address], streaming.contains(address) else {
            return completion(.unavailable("\(address) is not connected: cannot write \(characteristic.name)"))
        }
        link.write(characteristic, value) { result in
            switch result {
            case .success: completion(nil)
            case .failure(.noCharacteristic(let why)): completion(.unavailable(why))
            case .failure(.bus(let e)): completion(DeviceError(e, address: address))
            }
        }
    }

    /// Saves `entry`; on failure the list in memory stays as it was on disk.
    private func remember(_ entry: KnownDevices.Entry) throws(KnownDevicesError) {
        let previous = known.entries[entry.address]
        guard previous != entry else { return }
        known.set(entry)
        do { try known.save() } catch {
            if let previous { known.set(previous) } else { known.remove(entry.address) }
            throw error
        }
    }
}
