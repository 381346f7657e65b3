import FoundationEssentials
import StrapWire

/// Hand-written JSON for the hot paths (anchored pages, follow and live): one pass into a
/// byte buffer, no intermediate `JSONValue` tree, no Foundation encoder. The shape is the
/// one `Sample`'s Codable conformance defines (docs/protocol.md#shapes).
public enum SampleJSON {
    /// `durable` is false for live samples: not stored yet, they have neither an anchor nor
    /// their UUID (which the store derives from the anchor).
    public static func append(_ s: Sample, durable: Bool = true, into out: inout [UInt8]) {
        if durable {
            out.appendLiteral(#"{"uuid":""#)
            out.append(contentsOf: s.uuid.uuidString.utf8)
            out.appendLiteral(#"","anchor":"#)
            out.append(contentsOf: String(s.anchor).utf8)
            out.appendLiteral(#","type":""#)
        } else {
            out.appendLiteral(#"{"type":""#)
        }
        out.append(contentsOf: s.type.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if s.type == .heartbeatSeries {
            out.appendLiteral(#","beats":["#)
            for (i, b) in s.beats.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.write(.double(b), into: &out)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            out.appendLiteral(#","value":"#)
            JSONWriter.write(.double(s.value), into: &out)
        }
        out.appendLiteral(#","unit":"#)
        JSONWriter.writeString(s.type.unit, into: &out)
        out.appendLiteral(#","start":""#)
        RFC3339Timestamp.append(millisecondsSinceEpoch: s.start, into: &out)
        out.appendLiteral(#"","end":""#)
        RFC3339Timestamp.append(millisecondsSinceEpoch: s.end, into: &out)
        out.appendLiteral(#"","device":"#)
        appendDevice(s.device, into: &out)
        out.appendLiteral(#","metadata":{"#)
        for (i, key) in s.metadata.keys.sorted().enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.writeString(s.metadata[key]!, into: &out)
        }
        out.appendLiteral("}}")
    }

    public static func bytes(_ s: Sample, durable: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(320)
        append(s, durable: durable, into: &out)
        return out
    }

    public static func appendDevice(_ d: Device, into out: inout [UInt8]) {
        out.append(contentsOf: d.json)
    }

    public static func append(_ d: DeletedObject, into out: inout [UInt8]) {
        out.appendLiteral(#"{"uuid":""#)
        out.append(contentsOf: d.uuid.uuidString.utf8)
        out.appendLiteral(#"","anchor":"#)
        out.append(contentsOf: String(d.anchor).utf8)
        out.appendLiteral(#","type":"#)
        switch d.type {
        case .workout: JSONWriter.writeString("workout", into: &out)
        case .quantity(let q): JSONWriter.writeString(q.rawValue, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Workouts are rare and shaped by their own Codable conformance.
    public static func append(_ object: StoredObject, into out: inout [UInt8]) {
        switch object {
        case .sample(let s): append(s, into: &out)
        case .workout(let w):
            let data = (try? JSONEncoder().encode(w)) ?? Data("{}".utf8)
            out.append(contentsOf: data)
        }
    }
}
