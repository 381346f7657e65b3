import FoundationEssentials

/// A sensor as a sample's source. A final class so that millions of decoded samples share
/// one instance per device (one retain per copy instead of one per string field).
public final class Device: Codable, Hashable, Sendable, CustomStringConvertible {
    /// Stable identity across reconnects and address rotation.
    public let id: String
    public let address: String
    public let name: String
    public let manufacturer: String?
    public let model: String?
    public let serial: String?
    public let firmware: String?

    public init(id: String, address: String, name: String, manufacturer: String? = nil,
                model: String? = nil, serial: String? = nil, firmware: String? = nil) {
        self.id = id
        self.address = address
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.firmware = firmware
    }

    public static func == (a: Device, b: Device) -> Bool {
        a === b || (a.id == b.id && a.address == b.address && a.name == b.name
            && a.manufacturer == b.manufacturer && a.model == b.model
            && a.serial == b.serial && a.firmware == b.firmware)
    }

    /// Hashes the identity only: equal devices share it, and hashing seven strings per sample
    /// showed up in the store's per-sample stream lookup.
    public func hash(into h: inout Hasher) {
        h.combine(id)
    }

    public var description: String { "\(name) (\(id))" }
}
