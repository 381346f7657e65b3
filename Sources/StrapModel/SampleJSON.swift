import FoundationEssentials
import StrapWire

/// Hand-written JSON for the hot paths (anchored pages, follow and live): one pass into a
/// byte buffer, no intermediate `JSONValue` tree, no Foundation encoder. The shape is the
/// one `Sample`'s Codable conformance defines (docs/protocol.md#shapes).
public enum SampleJSON {
    /// `durable` is false for live samples: not stored yet, they have neither an anchor nor
    /// their UUID (which the store derives from the anchor).
    ///
    /// Every path that writes a sample (the live fan-out, anchored and follow pages, MQTT)
    /// comes here, so the cost is kept low: the type's fixed fragments are made once, numbers
    /// and times are written as digits without a `String`, two equal times are one copy, and
    /// one or two metadata pairs (the decoders' tags) are put in order without sorting an
    /// array of keys (docs/benchmarks.md, "Instructions and allocations per notification").
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
        let fragments = TypeFragments.table[Int(s.type.code)]
        out.append(contentsOf: fragments.head)
        if s.type == .heartbeatSeries {
            let beats = s.beats
            for i in beats.indices {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendNumber(beats[i], into: &out)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            JSONWriter.appendNumber(s.value, into: &out)
        }
        out.append(contentsOf: fragments.unit)
        appendTimes(start: s.start, end: s.end, into: &out)
        appendDevice(s.device, into: &out)
        guard s.hasExtras else {
            out.appendLiteral(#","metadata":{}}"#)
            return
        }
        let metadata = s.metadata
        out.appendLiteral(#","metadata":{"#)
        if metadata.count <= 2 {
            var pairs = metadata.makeIterator()
            if let first = pairs.next(), let second = pairs.next() {
                let (a, b) = first.key < second.key ? (first, second) : (second, first)
                appendPair(a.key, a.value, into: &out)
                out.append(UInt8(ascii: ","))
                appendPair(b.key, b.value, into: &out)
            } else if let only = metadata.first {
                appendPair(only.key, only.value, into: &out)
            }
        } else {
            for (i, key) in metadata.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                appendPair(key, metadata[key]!, into: &out)
            }
        }
        out.appendLiteral("}}")
    }

    private static func appendPair(_ key: String, _ value: String, into out: inout [UInt8]) {
        JSONWriter.writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        JSONWriter.writeString(value, into: &out)
    }

    /// `<start>","end":"<end>","device":`: what follows a sample's `"start":"`, as one copy.
    private static func appendTimes(start: Millis, end: Millis, into out: inout [UInt8]) {
        let endOpen: StaticString = #"","end":""#
        let deviceOpen: StaticString = #"","device":"#
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 80) { buf in
            var p = buf.baseAddress!
            RFC3339Timestamp.write(millisecondsSinceEpoch: start, to: p)
            p += 24
            p.update(from: endOpen.utf8Start, count: endOpen.utf8CodeUnitCount)
            p += endOpen.utf8CodeUnitCount
            // Most samples are an instant (a heart rate, a power reading): the same 24 bytes.
            if end == start {
                p.update(from: buf.baseAddress!, count: 24)
            } else {
                RFC3339Timestamp.write(millisecondsSinceEpoch: end, to: p)
            }
            p += 24
            p.update(from: deviceOpen.utf8Start, count: deviceOpen.utf8CodeUnitCount)
            p += deviceOpen.utf8CodeUnitCount
            out.append(contentsOf: UnsafeBufferPointer(start: buf.baseAddress!, count: p - buf.baseAddress!))
        }
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

/// A sample's fixed fragments per type, made once by the general writer: after `"type":"`,
/// the name and the opening of the value (`heartRate","value":`, or
/// `heartbeatSeries","beats":[`); after the value, the unit up to the start time's quote.
private struct TypeFragments {
    let head: [UInt8]
    let unit: [UInt8]

    /// Indexed by `QuantityType.code` (the on-disk identity, never reused).
    static let table: [TypeFragments] = {
        var table = [TypeFragments](repeating: TypeFragments(head: [], unit: []), count: 256)
        for type in QuantityType.allCases {
            var head = Array(type.rawValue.utf8)
            head.append(UInt8(ascii: "\""))
            head.appendLiteral(type == .heartbeatSeries ? #","beats":["# : #","value":"#)
            var unit: [UInt8] = []
            unit.appendLiteral(#","unit":"#)
            JSONWriter.writeString(type.unit, into: &unit)
            unit.appendLiteral(#","start":""#)
            table[Int(type.code)] = TypeFragments(head: head, unit: unit)
        }
        return table
    }()
}
