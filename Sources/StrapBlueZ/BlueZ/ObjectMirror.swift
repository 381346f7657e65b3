import StrapDBus

/// BlueZ's object tree as last reported: path → interface → property → value.
/// Pure state, fed from GetManagedObjects, InterfacesAdded/Removed and PropertiesChanged.
public struct ObjectMirror: Sendable {
    public private(set) var objects: [ObjectPath: [String: [String: DBusValue]]] = [:]
    /// strapd.conf `[bluetooth] adapter`: only this adapter (`hciN` or its address) and its
    /// devices appear in the typed views below; nil shows every adapter.
    public var onlyAdapter: String?

    public init() {}

    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case unexpectedShape(String)
        case unknownObject(ObjectPath)
        public var description: String {
            switch self {
            case .unexpectedShape(let what): "unexpected shape: \(what)"
            case .unknownObject(let path): "change for unknown object \(path)"
            }
        }
    }

    public mutating func clear() { objects = [:] }

    /// Replaces everything from a GetManagedObjects reply (`a{oa{sa{sv}}}`).
    public mutating func replaceAll(with managed: DBusValue) throws(Problem) {
        guard let byPath = managed.objectPathDictionary else { throw .unexpectedShape("GetManagedObjects \(managed.signature)") }
        var fresh: [ObjectPath: [String: [String: DBusValue]]] = [:]
        for (path, ifaces) in byPath {
            guard let parsed = Self.interfaces(ifaces) else { throw .unexpectedShape("interfaces of \(path)") }
            fresh[path] = parsed
        }
        objects = fresh
    }

    /// Applies InterfacesAdded; returns the interface names added.
    @discardableResult
    public mutating func add(_ path: ObjectPath, interfaces: DBusValue) throws(Problem) -> [String] {
        guard let parsed = Self.interfaces(interfaces) else { throw .unexpectedShape("InterfacesAdded \(interfaces.signature)") }
        for (name, props) in parsed {
            objects[path, default: [:]][name, default: [:]].merge(props) { _, new in new }
        }
        return Array(parsed.keys)
    }

    /// Applies InterfacesRemoved. When an adapter or device goes, everything under it goes
    /// too: bluetoothd does not always announce the children when it crashes.
    public mutating func remove(_ path: ObjectPath, interfaces: [String]) {
        guard var entry = objects[path] else { return }
        for name in interfaces { entry[name] = nil }
        objects[path] = entry.isEmpty ? nil : entry
        if interfaces.contains(BlueZInterface.adapter) || interfaces.contains(BlueZInterface.device) {
            for child in objects.keys where child.isDescendant(of: path) { objects[child] = nil }
        }
    }

    /// Applies PropertiesChanged.
    public mutating func update(_ path: ObjectPath, interface: String, changed: [String: DBusValue],
                                invalidated: [String]) throws(Problem) {
        guard objects[path]?[interface] != nil else { throw .unknownObject(path) }
        for (k, v) in changed { objects[path]![interface]![k] = v.unwrapped }
        for k in invalidated { objects[path]![interface]![k] = nil }
    }

    public func properties(_ path: ObjectPath, _ interface: String) -> [String: DBusValue]? {
        objects[path]?[interface]
    }

    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]]? {
        guard let ifaces = value.stringDictionary else { return nil }
        var out: [String: [String: DBusValue]] = [:]
        for (name, props) in ifaces {
            guard let dict = props.stringDictionary else { return nil }
            out[name] = dict.mapValues(\.unwrapped)
        }
        return out
    }

    // MARK: Typed views (lenient: a missing or mistyped property is nil, never a crash)

    public var adapters: [BlueZAdapter] {
        objects.compactMap { path, ifaces in ifaces[BlueZInterface.adapter].map { BlueZAdapter(path: path, properties: $0) } }
            .filter(isUsable).sorted { $0.path < $1.path }
    }

    public var devices: [BlueZDevice] {
        objects.compactMap { path, ifaces in
            ifaces[BlueZInterface.device].map { BlueZDevice(path: path, properties: $0, battery: ifaces[BlueZInterface.battery]) }
        }.filter(isUsable).sorted { $0.path < $1.path }
    }

    public func device(_ path: ObjectPath) -> BlueZDevice? {
        objects[path].flatMap { ifaces in
            ifaces[BlueZInterface.device].map { BlueZDevice(path: path, properties: $0, battery: ifaces[BlueZInterface.battery]) }
        }.flatMap { isUsable($0) ? $0 : nil }
    }

    public func adapter(_ path: ObjectPath) -> BlueZAdapter? {
        objects[path]?[BlueZInterface.adapter].map { BlueZAdapter(path: path, properties: $0) }.flatMap { isUsable($0) ? $0 : nil }
    }

    private func isUsable(_ adapter: BlueZAdapter) -> Bool {
        guard let only = onlyAdapter else { return true }
        return adapter.matches(only)
    }

    private func isUsable(_ device: BlueZDevice) -> Bool {
        guard onlyAdapter != nil else { return true }
        return device.adapter.flatMap { adapter($0) } != nil
    }

    /// Devices with this address, on any adapter (a sensor may be known to several).
    public func devices(address: String) -> [BlueZDevice] {
        devices.filter { $0.address?.uppercased() == address.uppercased() }
    }

    public func services(of device: ObjectPath) -> [BlueZGattService] {
        objects.compactMap { path, ifaces -> BlueZGattService? in
            guard path.isDescendant(of: device), let props = ifaces[BlueZInterface.gattService] else { return nil }
            return BlueZGattService(path: path, properties: props)
        }.sorted { $0.path < $1.path }
    }

    public func characteristics(of device: ObjectPath) -> [BlueZCharacteristic] {
        objects.compactMap { path, ifaces -> BlueZCharacteristic? in
            guard path.isDescendant(of: device), let props = ifaces[BlueZInterface.gattCharacteristic] else { return nil }
            return BlueZCharacteristic(path: path, properties: props)
        }.sorted { $0.path < $1.path }
    }
}

public struct BlueZAdapter: Sendable, Equatable {
    public let path: ObjectPath
    public let address: String?
    public let powered: Bool
    public let discovering: Bool

    init(path: ObjectPath, properties p: [String: DBusValue]) {
        self.path = path
        address = p["Address"]?.string
        powered = p["Powered"]?.bool ?? false
        discovering = p["Discovering"]?.bool ?? false
    }
}

public struct BlueZDevice: Sendable, Equatable {
    public let path: ObjectPath
    public let adapter: ObjectPath?
    public let address: String?
    public let name: String?
    public let alias: String?
    public let rssi: Int16?
    public let uuids: [String]
    public let connected: Bool
    public let servicesResolved: Bool
    public let paired: Bool
    public let bonded: Bool
    public let trusted: Bool
    public let batteryPercentage: UInt8?

    init(path: ObjectPath, properties p: [String: DBusValue], battery: [String: DBusValue]?) {
        self.path = path
        adapter = p["Adapter"]?.objectPath
        address = p["Address"]?.string
        name = p["Name"]?.string
        alias = p["Alias"]?.string
        rssi = p["RSSI"]?.integer.flatMap { Int16(exactly: $0) }
        uuids = p["UUIDs"]?.stringArray ?? []
        servicesResolved = p["ServicesResolved"]?.bool ?? false
        // ServicesResolved is true only on a live link. bluetoothd 5.66 can skip the Connected
        // signal when the ATT bearer of a reconnect attaches before the kernel's Device
        // Connected event ("Device … is already connected" in its log): its getter says true,
        // no PropertiesChanged says so. Seen in the lab's link-loss scenario, where strapd
        // then waited out the resolve timeout and disconnected a working link.
        connected = (p["Connected"]?.bool ?? false) || servicesResolved
        paired = p["Paired"]?.bool ?? false
        // Bonded appeared in BlueZ 5.71; older daemons only say Paired.
        bonded = p["Bonded"]?.bool ?? paired
        trusted = p["Trusted"]?.bool ?? false
        batteryPercentage = battery?["Percentage"]?.integer.flatMap { UInt8(exactly: $0) }
    }
}

public struct BlueZGattService: Sendable, Equatable {
    public let path: ObjectPath
    public let uuid: String
    public let device: ObjectPath?
    public let primary: Bool

    init?(path: ObjectPath, properties p: [String: DBusValue]) {
        guard let uuid = p["UUID"]?.string else { return nil }
        self.path = path
        self.uuid = uuid.lowercased()
        device = p["Device"]?.objectPath
        primary = p["Primary"]?.bool ?? true
    }
}

public struct BlueZCharacteristic: Sendable, Equatable {
    public let path: ObjectPath
    public let uuid: String
    public let service: ObjectPath?
    public let flags: [String]
    public let notifying: Bool

    init?(path: ObjectPath, properties p: [String: DBusValue]) {
        guard let uuid = p["UUID"]?.string else { return nil }
        self.path = path
        self.uuid = uuid.lowercased()
        service = p["Service"]?.objectPath
        flags = p["Flags"]?.stringArray ?? []
        notifying = p["Notifying"]?.bool ?? false
    }
}
