import FoundationEssentials
import StrapWire

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
    /// Its JSON object (docs/protocol.md#shapes), made once: every live and anchored sample
    /// carries its device, and writing the same few strings again for each sample was a
    /// quarter of the instructions of a live event (docs/benchmarks.md, "Instructions, the floor of a wake-up …").
    public let json: [UInt8]

    private enum CodingKeys: String, CodingKey {
        case id, address, name, manufacturer, model, serial, firmware
    }
    public init(id: String, address: String, name: String, manufacturer: String? = nil,
                model: String? = nil, serial: String? = nil, firmware: String? = nil) {
        self.id = id
        self.address = address
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.firmware = firmware
        json = Self.encode(id: id, address: address, name: name,
                           optional: [("manufacturer", manufacturer), ("model", model), ("serial", serial), ("firmware", firmware)])
    }

    public convenience init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), address: try c.decode(String.self, forKey: .address),
                  name: try c.decode(String.self, forKey: .name),
                  manufacturer: try c.decodeIfPresent(String.self, forKey: .manufacturer),
                  model: try c.decodeIfPresent(String.self, forKey: .model),
                  serial: try c.decodeIfPresent(String.self, forKey: .serial),
                  firmware: try c.decodeIfPresent(String.self, forKey: .firmware))
    }

    private static func encode(id: String, address: String, name: String, optional: [(String, String?)]) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &out)
        out.append(contentsOf: #","address":"#.utf8)
        JSONWriter.writeString(address, into: &out)
        out.append(contentsOf: #","name":"#.utf8)
        JSONWriter.writeString(name, into: &out)
        for (key, value) in optional {
            guard let value else { continue }
            out.append(contentsOf: ",\"\(key)\":".utf8)
            JSONWriter.writeString(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
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
