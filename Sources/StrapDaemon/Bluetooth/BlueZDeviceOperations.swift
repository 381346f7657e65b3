import Dispatch
import StrapBlueZ
import StrapDBus
import StrapIngest

/// The `devices.*` operations over BlueZ (docs/protocol.md). Every entry point hops onto the
/// bus queue; completions are called there.
extension BlueZDeviceService {
    public func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
                     finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle {
        let done = Once()
        let end: @Sendable (DeviceError?) -> Void = { [weak self] error in
            guard done.claim() else { return }
            // Runs on the bus queue.
            if let self, let session = self.scanSession {
                session.stop()
                self.scanSession = nil
                // Our StopDiscovery also ended the manager's rediscovery (one session per client).
                self.manager?.resumeDiscovery()
            }
            finished(error)
        }
        queue.async { [self] in
            guard let client = usableClient(end) else { return }
            guard scanSession == nil else { return end(.busy("a scan is already running")) }
            // One `found` per device, again only when its name or services change (not for
            // every RSSI update BlueZ relays while discovering).
            let seen = ScanReports()
            let session = DiscoverySession(client: client) { sensor in
                let device = DiscoveredDevice(address: sensor.address.uppercased(), name: sensor.name, rssi: sensor.rssi.map(Int.init),
                                              services: sensor.services.map(\.service.uuidString))
                if seen.isNew(device) { found(device) }
            }
            scanSession = session
            session.start()
            queue.asyncAfter(deadline: .now() + max(0, timeout)) { end(nil) }
        }
        return ScanHandle { [queue] in queue.async { end(nil) } }
    }

    /// Pairs and trusts. With `[bluetooth] pair_agent` strapd registers its own agent
    /// (NoInputNoOutput, Just Works); without it, another agent (bluetoothctl's) must answer.
    public func pair(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager else { return }
            guard let address = KnownDevices.normalise(address), let device = client.mirror.devices(address: address).first else {
                return completion(.notFound(address))
            }
            let agent = settings.bluetooth.pairAgent
            let done: BlueZClient.Completion = { [logger] result in
                switch result {
                case .success:
                    logger.notice("[\(address)] paired and trusted", fields: ["DEVICE_ADDRESS": address])
                    completion(nil)
                case .failure(let e):
                    var error = Self.deviceError(e, address)
                    if !agent, e.errorName == BlueZErrorName.authenticationFailed.rawValue {
                        error = .failed("\(error) (no pairing agent: set [bluetooth] pair_agent = yes, or run bluetoothctl's agent)")
                    }
                    completion(error)
                }
            }
            if agent {
                manager.pair(address: address, done)
            } else {
                client.pair(device: device.path) { result in
                    if case .failure = result { return done(result) }
                    client.setTrusted(device: device.path, true, done)
                }
            }
        }
    }

    /// Remembers the sensor (saved before connecting, so a crash can't lose it), starts its
    /// link, and answers once it streams, or after `connectWait` with the reason it doesn't.
    public func connect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager else { return }
            guard let address = KnownDevices.normalise(address) else { return completion(.notFound(address)) }
            let device = client.mirror.devices(address: address).first
            guard device != nil || known.entries[address] != nil else { return completion(.notFound(address)) }
            let entry = KnownDevices.Entry(address: address, name: device?.alias ?? device?.name ?? known.entries[address]?.name,
                                           autoConnect: true)
            do throws(KnownDevicesError) { try remember(entry) } catch {
                return completion(.failed("cannot save \(known.path): \(error)"))
            }
            if streaming.contains(address) { return completion(nil) }
            nextWaiter += 1
            let id = nextWaiter
            connectWaiters[address, default: []].append(Waiter(id: id, completion: completion))
            manager.add(address: address, options: linkOptions(address))
            queue.asyncAfter(deadline: .now() + settings.connectWait) { [weak self] in
                guard let self, let index = self.connectWaiters[address]?.firstIndex(where: { $0.id == id }) else { return }
                let waiter = self.connectWaiters[address]!.remove(at: index)
                let phase = manager.links[address]?.phase.description ?? "idle"
                let why = self.lastDisconnect[address].map { ", last disconnect: \($0)" } ?? ""
                waiter.completion(.failed("\(address) is remembered but not streaming yet (\(phase)\(why)); strapd keeps trying"))
            }
        }
    }

    /// Stops the link and disconnects. The sensor stays known but is not reconnected (not
    /// even after a restart) until `devices.connect`.
    public func disconnect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager else { return }
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
            answerWaiters(address, .failed("disconnected by request"))
            if manager.links[address] != nil {
                manager.remove(address: address)
                return completion(nil)
            }
            // Connected by someone else (BlueZ's auto-connect, bluetoothctl): disconnect anyway.
            guard let device = client.mirror.devices(address: address).first(where: \.connected) else { return completion(nil) }
            client.disconnect(device: device.path) { result in
                if case .failure(let e) = result { return completion(Self.deviceError(e, address)) }
                completion(nil)
            }
        }
    }

    /// Stops the link, removes the device from BlueZ (bond and GATT cache) and forgets it.
    public func forget(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard let client = usableClient(completion), let manager else { return }
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
            answerWaiters(address, .failed("forgotten"))
            manager.forget(address: address) { [logger] result in
                if case .failure(let e) = result {
                    // Known to us but already gone from BlueZ: forgetting still succeeded.
                    if e.errorName == BlueZErrorName.doesNotExist.rawValue, wasKnown { return completion(nil) }
                    return completion(Self.deviceError(e, address))
                }
                logger.notice("[\(address)] forgotten", fields: ["DEVICE_ADDRESS": address])
                completion(nil)
            }
        }
    }

    public func resetEnergy(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) {
        queue.async { [self] in
            guard usableClient(completion) != nil, let manager else { return }
            guard let address = KnownDevices.normalise(address), let link = manager.links[address] else {
                return completion(.notFound(address))
            }
            guard streaming.contains(address) else { return completion(.unavailable("\(address) is not connected")) }
            link.resetEnergyExpended { result in
                if case .failure(let e) = result { return completion(Self.deviceError(e, address)) }
                completion(nil)
            }
        }
    }

    // MARK: Helpers

    /// The client when BlueZ can be used; otherwise answers `unavailable` and returns nil.
    func usableClient(_ completion: @Sendable (DeviceError?) -> Void) -> BlueZClient? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client, client.available else {
            completion(.unavailable(degraded ?? "bluetoothd is not running"))
            return nil
        }
        guard !client.mirror.adapters.isEmpty else {
            completion(.unavailable("no Bluetooth adapter"))
            return nil
        }
        return client
    }

    func remember(_ entry: KnownDevices.Entry) throws(KnownDevicesError) {
        let previous = known.entries[entry.address]
        guard previous != entry else { return }
        known.set(entry)
        do { try known.save() } catch {
            if let previous { known.set(previous) } else { known.remove(entry.address) }
            throw error
        }
    }

    func answerWaiters(_ address: SensorAddress, _ error: DeviceError?) {
        guard let waiters = connectWaiters.removeValue(forKey: address) else { return }
        for w in waiters { w.completion(error) }
    }

    /// BlueZ's error names → protocol errors; the name stays in the message.
    static func deviceError(_ error: BusError, _ address: SensorAddress) -> DeviceError {
        guard case .reply(let reply) = error else { return .unavailable("D-Bus: \(error)") }
        switch reply.name {
        case BlueZErrorName.doesNotExist.rawValue, FreedesktopErrorName.unknownObject.rawValue: return .notFound(address)
        case BlueZErrorName.inProgress.rawValue: return .busy("\(reply.name): \(reply.message)")
        case BlueZErrorName.notReady.rawValue, FreedesktopErrorName.serviceUnknown.rawValue, FreedesktopErrorName.nameHasNoOwner.rawValue:
            return .unavailable("\(reply.name): \(reply.message)")
        default: return .failed("\(reply.name): \(reply.message)")
        }
    }
}

/// What a scan has reported, per address. Confined to the bus queue.
final class ScanReports: @unchecked Sendable {
    private var reported: [SensorAddress: (name: String?, services: [String])] = [:]

    func isNew(_ d: DiscoveredDevice) -> Bool {
        if let r = reported[d.address], r.name == d.name, r.services == d.services { return false }
        reported[d.address] = (d.name, d.services)
        return true
    }
}
