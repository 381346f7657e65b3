import FoundationEssentials
import StrapIngest
import StrapModel
import StrapWire

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
        o["adapter"] = d.adapter.map(JSONValue.string) ?? .null
        o["adapterAddress"] = d.adapterAddress.map(JSONValue.string) ?? .null
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
