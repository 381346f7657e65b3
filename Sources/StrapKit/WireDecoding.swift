import FoundationEssentials
import Glibc
import StrapModel
import StrapWire

/// Reads the protocol's shapes (docs/protocol.md *Shapes*) into the model's values. Samples are
/// read by hand from the parsed line: the reply of a catch-up holds thousands, and Foundation's
/// decoder through an intermediate encoding cost several times the parse. Workouts, rare, go
/// through their Codable conformance.
struct WireDecoder {
    /// Devices by id: every sample of a sensor carries the same device object, and the model
    /// shares one `Device` instance per sensor (a class, so millions of samples cost one).
    private var devices: [String: (json: JSONObject, device: Device)] = [:]
    /// The same, by the bytes of the device object (the scanner's lookup): a sensor's object
    /// is written the same way in every sample, so comparing bytes finds it without a parse.
    private var devicesByBytes: [(bytes: [UInt8], device: Device)] = []

    mutating func object(_ value: JSONValue) throws(StrapKitError) -> StoredObject {
        guard case .object(let o) = value else { throw .malformedReply("an added item that is not an object") }
        if o.string("type") == "workout" { return .workout(try Self.decode(Workout.self, from: o)) }
        return .sample(try sample(o))
    }

    mutating func sample(_ o: JSONObject) throws(StrapKitError) -> Sample {
        guard let typeName = o.string("type"), let type = QuantityType(rawValue: typeName) else {
            throw .malformedReply("a sample of unknown type \(o.string("type") ?? "(none)")")
        }
        let start = try o.time("start")
        let end = o["end"] == nil ? start : try o.time("end")
        guard case .object(let d)? = o["device"] else { throw .malformedReply("a sample without device") }
        let device = try self.device(d)
        let uuid = o.string("uuid").flatMap(UUID.init(uuidString:)) ?? .unassigned
        let anchor = o.int("anchor").map { UInt64(max(0, $0)) } ?? 0
        var beats: [Double] = []
        if case .array(let a)? = o["beats"] { beats = a.compactMap(\.number) }
        let value = o["value"]?.number ?? Double(beats.count)
        var metadata: [String: String] = [:]
        if case .object(let m)? = o["metadata"], !m.isEmpty {
            for (k, v) in m.entries { if case .string(let s) = v { metadata[k] = s } }
        }
        if metadata.isEmpty && beats.isEmpty {
            return Sample(uuid: uuid, anchor: anchor, type: type, value: value, start: start, end: end, device: device)
        }
        return Sample(type: type, value: value, start: start, end: end, device: device, metadata: metadata, beats: beats,
                      uuid: uuid, anchor: anchor)
    }

    mutating func device(_ d: JSONObject) throws(StrapKitError) -> Device {
        guard let id = d.string("id") else { throw .malformedReply("a device without id") }
        if let known = devices[id], known.json == d { return known.device }
        let device = Device(id: id, address: d.string("address") ?? id, name: d.string("name") ?? id,
                            manufacturer: d.string("manufacturer"), model: d.string("model"),
                            serial: d.string("serial"), firmware: d.string("firmware"))
        devices[id] = (d, device)
        return device
    }

    /// The device whose object is `bytes`: one seen before, or parsed now (nil: not a device).
    mutating func device(bytes: UnsafeBufferPointer<UInt8>) -> Device? {
        for known in devicesByBytes where known.bytes.count == bytes.count {
            if known.bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) }) == 0 { return known.device }
        }
        guard case .object(let o)? = try? JSONParser.parse(bytes), let device = try? device(o) else { return nil }
        // Bounded: a reader of thousands of sensors falls back to parsing beyond the first 64.
        if devicesByBytes.count < 64 { devicesByBytes.append((Array(bytes), device)) }
        return device
    }

    static func deleted(_ value: JSONValue) throws(StrapKitError) -> DeletedObject {
        guard case .object(let o) = value, let uuid = o.string("uuid").flatMap(UUID.init(uuidString:)),
              let anchor = o.int("anchor"), let type = o.string("type") else {
            throw .malformedReply("a deleted object without uuid, anchor or type")
        }
        let objectType: ObjectType
        if type == "workout" { objectType = .workout } else if let q = QuantityType(rawValue: type) { objectType = .quantity(q) } else {
            throw .malformedReply("a deleted object of unknown type \(type)")
        }
        return DeletedObject(uuid: uuid, anchor: UInt64(max(0, anchor)), type: objectType)
    }

    /// A value through its Codable conformance (the shapes StrapModel writes for the daemon).
    static func decode<T: Decodable>(_ type: T.Type, from object: JSONObject) throws(StrapKitError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(JSONWriter.bytes(.object(object))))
        } catch {
            throw .malformedReply("\(T.self): \(error)")
        }
    }
}

extension Sample {
    /// A sample in the protocol's shape (docs/protocol.md *Shapes*): a `live.subscribe`
    /// event's data, which ``StrapStore/rawStream(_:_:)`` hands over as JSON. A live sample has
    /// no `uuid` or `anchor` yet (`UUID.unassigned`, 0).
    public init(protocolObject o: JSONObject) throws(StrapKitError) {
        var decoder = WireDecoder()
        self = try decoder.sample(o)
    }
}

extension JSONObject {
    func string(_ key: String) -> String? { if case .string(let s)? = self[key] { s } else { nil } }
    func int(_ key: String) -> Int64? { if case .int(let i)? = self[key] { i } else { nil } }
    func bool(_ key: String) -> Bool? { if case .bool(let b)? = self[key] { b } else { nil } }
    func object(_ key: String) -> JSONObject? { if case .object(let o)? = self[key] { o } else { nil } }
    func number(_ key: String) -> Double? { self[key]?.number }

    func time(_ key: String) throws(StrapKitError) -> Millis {
        guard let text = string(key), let ms = try? RFC3339Timestamp.parse(text) else {
            throw .malformedReply("\(key) is not an RFC 3339 time")
        }
        return ms
    }

    func anchor(_ key: String) throws(StrapKitError) -> UInt64 {
        guard let i = int(key), i >= 0 else { throw .malformedReply("\(key) is not an anchor") }
        return UInt64(i)
    }
}

extension JSONValue {
    /// A JSON number as a double: strapd writes whole values as integers (docs/protocol.md *Replies*).
    var number: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }
}

extension Date {
    /// The protocol's form of a time: RFC 3339 UTC with milliseconds.
    var wire: JSONValue { .string(RFC3339Timestamp.format(millisecondsSinceEpoch: millis)) }
}
