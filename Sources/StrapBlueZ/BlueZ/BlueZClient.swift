import CSystemd
import Dispatch
import Glibc
import StrapDBus

/// What changed in BlueZ's object tree, delivered on the bus queue after the mirror is updated.
public enum BlueZEvent: Sendable {
    /// org.bluez appeared (true, mirror freshly loaded) or vanished (false, mirror emptied).
    case availability(Bool)
    case interfacesAdded(ObjectPath, [String])
    case interfacesRemoved(ObjectPath, [String])
    case propertiesChanged(ObjectPath, interface: String, changed: [String: DBusValue])
    /// A characteristic's notification under StartNotify (`CharacteristicValueSignal`): its
    /// new `Value`, not kept in the mirror. A `Value` that changes with other properties
    /// arrives as `propertiesChanged` instead.
    case characteristicValue(ObjectPath, value: [UInt8])
    /// `Device1.Disconnected(reason, message)` from BlueZ releases that have it (a newer,
    /// initially experimental signal); older daemons only flip Connected.
    case deviceDisconnected(ObjectPath, reason: String, message: String)
}

/// The BlueZ object mirror kept in sync over one Bus. Survives bluetoothd restarts: when
/// `org.bluez` changes owner the mirror is dropped and reloaded from scratch.
public final class BlueZClient: @unchecked Sendable {
    public let bus: Bus
    public var queue: DispatchQueue { bus.queue }
    public private(set) var mirror = ObjectMirror()
    /// The unique name currently owning org.bluez, nil while bluetoothd is absent.
    public private(set) var owner: String?
    public private(set) var available = false

    private var slots: [BusSlot] = []
    /// In the order they were added (ids only grow): `emit` runs per notification and walks
    /// them without sorting.
    private var observers: [(id: Int, handler: @Sendable (BlueZEvent) -> Void)] = []
    private var nextObserver = 0
    private var generation = 0
    private var retry = Backoff(policy: .init(base: 0.5, cap: 30, jitter: 0.2))
    private var retryTimer: DispatchSourceTimer?

    public init(bus: Bus) {
        self.bus = bus
    }

    /// Restricts everything to one adapter (`hciN` or its address); set before `start`.
    public var onlyAdapter: String? {
        get { mirror.onlyAdapter }
        set { mirror.onlyAdapter = newValue }
    }

    /// Subscribes to BlueZ's signals, then loads the tree if org.bluez is present.
    public func start() throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        // Matches go first, so no change between GetManagedObjects and the reply is lost.
        let sender = "sender='\(BlueZInterface.busName)'"
        slots.append(try bus.addMatch("type='signal',sender='\(BlueZInterface.dbus)',interface='\(BlueZInterface.dbus)',member='NameOwnerChanged',arg0='\(BlueZInterface.busName)'") { [weak self] m in
            self?.nameOwnerChanged(m)
        })
        slots.append(try bus.addMatch("type='signal',\(sender),interface='\(BlueZInterface.objectManager)'") { [weak self] m in
            self?.objectManagerSignal(m)
        })
        slots.append(try bus.addMatch("type='signal',\(sender),interface='\(BlueZInterface.properties)',member='PropertiesChanged'",
                                      fast: { [weak self] m in self?.characteristicValue(m) ?? false }) { [weak self] m in
            self?.propertiesChanged(m)
        })
        slots.append(try bus.addMatch("type='signal',\(sender),interface='\(BlueZInterface.device)',member='Disconnected'") { [weak self] m in
            self?.disconnectedSignal(m)
        })
        bus.onDisconnect { [weak self] in
            // Reconnecting to the bus itself is the daemon's job (restart by systemd).
            BusLog.error("lost the D-Bus connection; BlueZ state is no longer tracked")
            self?.ownerVanished()
        }
        lookUpOwner()
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        slots.forEach { $0.cancel() }
        slots = []
        retryTimer?.cancel()
        retryTimer = nil
    }

    @discardableResult
    public func observe(_ handler: @escaping @Sendable (BlueZEvent) -> Void) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        nextObserver += 1
        observers.append((nextObserver, handler))
        return nextObserver
    }

    public func removeObserver(_ id: Int) {
        observers.removeAll { $0.id == id }
    }

    private func emit(_ event: BlueZEvent) {
        // One that an earlier observer of this event removed is not called any more.
        for observer in observers where observers.contains(where: { $0.id == observer.id }) {
            observer.handler(event)
        }
    }

    // MARK: Owner tracking and resynchronisation

    private func lookUpOwner() {
        bus.call(destination: BlueZInterface.dbus, path: ObjectPath(unchecked: "/org/freedesktop/DBus"),
                 interface: BlueZInterface.dbus, member: "GetNameOwner", arguments: [.string(BlueZInterface.busName)]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let body):
                guard let name = body.first?.string else { return self.scheduleRetry("GetNameOwner reply \(body)") }
                self.ownerAppeared(name)
            case .failure(.reply(let e)) where e.freedesktop == .nameHasNoOwner:
                // NameOwnerChanged will announce bluetoothd; the backed-off re-check keeps
                // saying why nothing happens and covers a missed signal.
                self.scheduleRetry("org.bluez is not on the system bus (is bluetoothd running? see docs/operations.md)")
            case .failure(let e):
                self.scheduleRetry("GetNameOwner failed: \(e)")
            }
        }
    }

    private func nameOwnerChanged(_ m: BusMessage) {
        guard m.body.count == 3, m.body[0].string == BlueZInterface.busName, let new = m.body[2].string else {
            BusLog.warning("ignoring malformed NameOwnerChanged \(m.body)")
            return
        }
        if owner != nil { ownerVanished() }
        if !new.isEmpty { ownerAppeared(new) }
    }

    private func ownerVanished() {
        BusLog.notice("org.bluez (\(owner ?? "?")) left the bus; dropping \(mirror.objects.count) objects")
        owner = nil
        generation += 1
        mirror.clear()
        if available {
            available = false
            emit(.availability(false))
        }
    }

    private func ownerAppeared(_ name: String) {
        retryTimer?.cancel()
        retryTimer = nil
        owner = name
        generation += 1
        loadTree(generation: generation)
    }

    private func loadTree(generation expected: Int) {
        guard let owner else { return }
        bus.call(destination: owner, path: .root, interface: BlueZInterface.objectManager, member: "GetManagedObjects") { [weak self] result in
            guard let self, self.generation == expected else { return }
            switch result {
            case .success(let body):
                do throws(ObjectMirror.Problem) {
                    guard let tree = body.first else { throw .unexpectedShape("empty GetManagedObjects reply") }
                    try self.mirror.replaceAll(with: tree)
                } catch {
                    return self.scheduleRetry("GetManagedObjects: \(error)")
                }
                self.retry.reset()
                BusLog.info("org.bluez is \(owner): \(self.mirror.adapters.count) adapter(s), \(self.mirror.devices.count) device(s)")
                self.available = true
                self.emit(.availability(true))
            case .failure(let e):
                self.scheduleRetry("GetManagedObjects failed: \(e)")
            }
        }
    }

    private func scheduleRetry(_ why: String) {
        guard bus.isOpen, !slots.isEmpty else { return }
        let delay = retry.next()
        BusLog.warning("\(why); retrying in \(delay.formatted) s")
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + delay)
        let expected = generation
        t.setEventHandler { @Sendable [weak self] in
            guard let self else { return }
            self.retryTimer = nil
            if self.owner == nil { self.lookUpOwner() } else if self.generation == expected { self.loadTree(generation: expected) }
        }
        retryTimer?.cancel()
        retryTimer = t
        t.resume()
    }

    // MARK: Signals

    private func fromCurrentOwner(_ m: BusMessage) -> Bool {
        // Until the tree is loaded, changes are covered by the GetManagedObjects reply.
        available && (m.sender == nil || m.sender == owner)
    }

    private func objectManagerSignal(_ m: BusMessage) {
        guard fromCurrentOwner(m) else { return }
        switch m.member {
        case "InterfacesAdded":
            guard m.body.count == 2, let path = m.body[0].objectPath else { return badSignal(m) }
            do throws(ObjectMirror.Problem) {
                let names = try mirror.add(path, interfaces: m.body[1])
                emit(.interfacesAdded(path, names))
            } catch {
                BusLog.warning("InterfacesAdded for \(path): \(error)")
            }
        case "InterfacesRemoved":
            guard m.body.count == 2, let path = m.body[0].objectPath, let names = m.body[1].stringArray else { return badSignal(m) }
            mirror.remove(path, interfaces: names)
            emit(.interfacesRemoved(path, names))
        default:
            break
        }
    }

    private func propertiesChanged(_ m: BusMessage) {
        guard fromCurrentOwner(m), let path = m.path else { return }
        guard m.body.count == 3, let interface = m.body[0].string, let changed = m.body[1].stringDictionary else { return badSignal(m) }
        let invalidated = m.body[2].stringArray ?? []
        do throws(ObjectMirror.Problem) {
            try mirror.update(path, interface: interface, changed: changed, invalidated: invalidated)
        } catch {
            BusLog.debug("PropertiesChanged: \(error)")
            return
        }
        emit(.propertiesChanged(path, interface: interface, changed: changed.mapValues(\.unwrapped)))
    }

    /// True when `m` was a notification's PropertiesChanged from the current owner, delivered.
    private func characteristicValue(_ m: OpaquePointer) -> Bool {
        guard available, let owner, let sender = sd_bus_message_get_sender(m), owner.withCString({ strcmp($0, sender) == 0 }),
              let path = sd_bus_message_get_path(m), let value = CharacteristicValueSignal.value(of: m) else { return false }
        emit(.characteristicValue(ObjectPath(unchecked: String(cString: path)), value: [UInt8](value)))
        return true
    }

    private func disconnectedSignal(_ m: BusMessage) {
        guard fromCurrentOwner(m), let path = m.path else { return }
        emit(.deviceDisconnected(path, reason: m.body.first?.string ?? "", message: m.body.dropFirst().first?.string ?? ""))
    }

    private func badSignal(_ m: BusMessage) {
        BusLog.warning("ignoring malformed \(m.interface ?? "?").\(m.member ?? "?") from \(m.sender ?? "?"): \(m.body)")
    }
}
