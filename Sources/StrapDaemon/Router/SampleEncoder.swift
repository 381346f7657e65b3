import FoundationEssentials
import StrapIngest
import StrapModel
import StrapWire

/// Hand-written JSON for the hot paths (anchored pages, follow and live): one pass into a
/// byte buffer, no intermediate `JSONValue` tree, no Foundation encoder. The shape is the
/// one `Sample`'s Codable conformance defines (docs/protocol.md#shapes).
enum SampleEncoder {
    /// `durable` is false for live samples: not stored yet, they have neither an anchor nor
    /// their UUID (which the store derives from the anchor).
    static func append(_ s: Sample, durable: Bool = true, into out: inout [UInt8]) {
        if durable {
            out.append(contentsOf: #"{"uuid":""#.utf8)
            out.append(contentsOf: s.uuid.uuidString.utf8)
            out.append(contentsOf: #"","anchor":"#.utf8)
            out.append(contentsOf: String(s.anchor).utf8)
            out.append(contentsOf: #","type":""#.utf8)
        } else {
            out.append(contentsOf: #"{"type":""#.utf8)
        }
        out.append(contentsOf: s.type.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if s.type == .heartbeatSeries {
            out.append(contentsOf: #","beats":["#.utf8)
            for (i, b) in s.beats.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.write(.double(b), into: &out)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            out.append(contentsOf: #","value":"#.utf8)
            JSONWriter.write(.double(s.value), into: &out)
        }
        out.append(contentsOf: #","unit":"#.utf8)
        JSONWriter.writeString(s.type.unit, into: &out)
        out.append(contentsOf: #","start":""#.utf8)
        out.append(contentsOf: RFC3339Timestamp.format(millisecondsSinceEpoch: s.start).utf8)
        out.append(contentsOf: #"","end":""#.utf8)
        out.append(contentsOf: RFC3339Timestamp.format(millisecondsSinceEpoch: s.end).utf8)
        out.append(contentsOf: #"","device":"#.utf8)
        appendDevice(s.device, into: &out)
        out.append(contentsOf: #","metadata":{"#.utf8)
        for (i, key) in s.metadata.keys.sorted().enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.writeString(s.metadata[key]!, into: &out)
        }
        out.append(contentsOf: "}}".utf8)
    }

    static func bytes(_ s: Sample, durable: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(320)
        append(s, durable: durable, into: &out)
        return out
    }

    static func appendDevice(_ d: Device, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(d.id, into: &out)
        out.append(contentsOf: #","address":"#.utf8)
        JSONWriter.writeString(d.address, into: &out)
        out.append(contentsOf: #","name":"#.utf8)
        JSONWriter.writeString(d.name, into: &out)
        for (key, value) in [("manufacturer", d.manufacturer), ("model", d.model), ("serial", d.serial), ("firmware", d.firmware)] {
            guard let value else { continue }
            out.append(contentsOf: ",\"\(key)\":".utf8)
            JSONWriter.writeString(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func append(_ d: DeletedObject, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"uuid":""#.utf8)
        out.append(contentsOf: d.uuid.uuidString.utf8)
        out.append(contentsOf: #"","anchor":"#.utf8)
        out.append(contentsOf: String(d.anchor).utf8)
        out.append(contentsOf: #","type":"#.utf8)
        switch d.type {
        case .workout: JSONWriter.writeString("workout", into: &out)
        case .quantity(let q): JSONWriter.writeString(q.rawValue, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Workouts are rare and shaped by their own Codable conformance.
    static func append(_ object: StoredObject, into out: inout [UInt8]) {
        switch object {
        case .sample(let s): append(s, into: &out)
        case .workout(let w):
            let data = (try? JSONEncoder().encode(w)) ?? Data("{}".utf8)
            out.append(contentsOf: data)
        }
    }
}

/// One item of an anchored page, in the anchor order the two lists interleave in.
enum AnchoredItem {
    case added(StoredObject)
    case deleted(DeletedObject)

    var anchor: UInt64 {
        switch self {
        case .added(let o): o.anchor
        case .deleted(let d): d.anchor
        }
    }

    static func merged(_ r: AnchoredResult) -> [AnchoredItem] {
        var out: [AnchoredItem] = []
        out.reserveCapacity(r.added.count + r.deleted.count)
        var i = 0, j = 0
        while i < r.added.count || j < r.deleted.count {
            if j == r.deleted.count || (i < r.added.count && r.added[i].anchor < r.deleted[j].anchor) {
                out.append(.added(r.added[i])); i += 1
            } else {
                out.append(.deleted(r.deleted[j])); j += 1
            }
        }
        return out
    }
}

/// JSON of the non-sample live events and of devices (rarely hot; built as values).
enum DaemonJSON {
    static func device(_ d: DeviceInfo) -> JSONObject {
        var o: JSONObject = ["address": .string(d.address), "name": .string(d.name), "known": .bool(d.known),
                             "connected": .bool(d.connected), "paired": .bool(d.paired),
                             "services": .array(d.services.map(JSONValue.string))]
        o["battery"] = d.battery.map { .int(Int64($0)) } ?? .null
        o["contact"] = d.contact.map(JSONValue.string) ?? .null
        o["bodySensorLocation"] = d.bodySensorLocation.map(JSONValue.string) ?? .null
        o["sensorLocation"] = d.sensorLocation.map(JSONValue.string) ?? .null
        o["manufacturer"] = d.manufacturer.map(JSONValue.string) ?? .null
        o["model"] = d.model.map(JSONValue.string) ?? .null
        o["serial"] = d.serial.map(JSONValue.string) ?? .null
        o["firmware"] = d.firmware.map(JSONValue.string) ?? .null
        o["rssi"] = d.rssi.map { .int(Int64($0)) } ?? .null
        if d.rssi == nil, let why = d.rssiUnavailableReason { o["rssiUnavailable"] = .string(why) }
        o["lastSeen"] = d.lastSeen.map { .string(RFC3339Timestamp.format(millisecondsSinceEpoch: $0)) } ?? .null
        o["lastDisconnectReason"] = d.lastDisconnectReason.map(JSONValue.string) ?? .null
        o["notifications"] = .int(Int64(d.notifications))
        return o
    }

    static func discovered(_ d: DiscoveredDevice) -> JSONObject {
        ["address": .string(d.address), "name": d.name.map(JSONValue.string) ?? .null,
         "rssi": d.rssi.map { .int(Int64($0)) } ?? .null, "services": .array(d.services.map(JSONValue.string))]
    }

    /// `device` event data for a device change.
    static func change(_ address: SensorAddress, _ change: DeviceIngest.Change) -> JSONObject {
        var o: JSONObject = ["address": .string(address)]
        switch change {
        case .identity(let d):
            o["change"] = .string("identity")
            o["manufacturer"] = d.manufacturer.map(JSONValue.string) ?? .null
            o["model"] = d.model.map(JSONValue.string) ?? .null
            o["serial"] = d.serial.map(JSONValue.string) ?? .null
            o["firmware"] = d.firmware.map(JSONValue.string) ?? .null
        case .contact(let c): o["change"] = .string("contact"); o["contact"] = .string(c.name)
        case .battery(let b): o["change"] = .string("battery"); o["battery"] = .int(Int64(b))
        case .energySaturated: o["change"] = .string("energySaturated")
        case .bodySensorLocation(let l): o["change"] = .string("bodySensorLocation"); o["location"] = .string(l)
        case .sensorLocation(let l): o["change"] = .string("sensorLocation"); o["location"] = .string(l)
        }
        return o
    }

    static func link(_ address: SensorAddress, up: Bool, reason: String?, time: Millis) -> JSONObject {
        ["address": .string(address), "up": .bool(up), "reason": reason.map(JSONValue.string) ?? .null,
         "time": .string(RFC3339Timestamp.format(millisecondsSinceEpoch: time))]
    }
}
