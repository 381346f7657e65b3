import StrapIngest
import StrapModel
import StrapWire

/// A turn's live events, each encoded once as the tail of its line (`sample","data":{…}}\n`)
/// into one byte buffer that is kept and reused. A subscriber's line is its own prefix
/// (`{"id":N,"event":"`, `LiveStream.linePrefix`) followed by the tail, so the bytes are the
/// ones `Reply.appendEvent` writes around `SampleJSON` (docs/protocol.md#livesubscribe), which
/// `LiveLinesTests` checks for random samples.
///
/// Why not one `[UInt8]` per event through the general encoders: that was most of the live
/// fan-out's cost per notification (an array, a dozen generic appends, two timestamps and a
/// number through `String`, a sorted copy of the metadata keys; docs/benchmarks.md,
/// "Instructions and allocations per notification"). Here a sample is a few copies of
/// fragments made once per type, its number and timestamps written by small integer routines.
struct LiveLines {
    /// What a subscriber's filter needs of an event, and where its tail ends in `bytes`.
    struct Entry {
        let address: SensorAddress
        /// Only samples have a type; the other events pass every type filter.
        let type: QuantityType?
        let end: Int
    }

    private(set) var bytes: [UInt8] = []
    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Empties the buffers, keeping their storage for the next turn.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    func tail(_ i: Int) -> Range<Int> {
        (i == 0 ? 0 : entries[i - 1].end)..<entries[i].end
    }

    /// One entry per sample, device change or link event; quiet notifications have none.
    mutating func append(_ event: LiveEvent) {
        switch event {
        case .samples(let samples):
            for s in samples { append(s) }
        case let .change(address, change):
            appendObject(address, kind: #"device","data":"#, .object(DaemonJSON.change(address, change)))
        case let .link(address, up, reason, time):
            appendObject(address, kind: #"link","data":"#, .object(DaemonJSON.link(address, up: up, reason: reason, time: time)))
        case let .linkQuality(address, rssi, reason):
            var o: JSONObject = ["address": .string(address), "change": .string("rssi"), "rssi": rssi.map { .int(Int64($0)) } ?? .null]
            if rssi == nil, let reason { o["rssiUnavailable"] = .string(reason) }
            appendObject(address, kind: #"device","data":"#, .object(o))
        case .quietNotification:
            break
        }
    }

    /// Device and link events are rare: the general writer, straight into the buffer.
    private mutating func appendObject(_ address: SensorAddress, kind: StaticString, _ data: JSONValue) {
        bytes.appendLiteral(kind)
        JSONWriter.write(data, into: &bytes)
        bytes.appendLiteral("}\n")
        entries.append(Entry(address: address, type: nil, end: bytes.count))
    }

    /// `SampleJSON.append(s, durable: false)` inside the event's tail, byte for byte.
    mutating func append(_ s: Sample) {
        let fragments = TypeFragments.table[Int(s.type.code)]
        bytes.appendLiteral(#"sample","data":{"type":""#)
        bytes.append(contentsOf: fragments.head)
        if s.type == .heartbeatSeries {
            let beats = s.beats
            for i in beats.indices {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONWriter.appendNumber(beats[i], into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        } else {
            JSONWriter.appendNumber(s.value, into: &bytes)
        }
        bytes.append(contentsOf: fragments.unit)
        LiveNumbers.appendTimes(start: s.start, end: s.end, into: &bytes)
        bytes.append(contentsOf: s.device.json)
        if !s.hasExtras {
            bytes.appendLiteral(#","metadata":{}}}"#)
        } else {
            let metadata = s.metadata
            bytes.appendLiteral(#","metadata":{"#)
            // The decoders' tags are one or two pairs (`running`, `cadenceUnit`, `reference`):
            // put in order by hand, without the sorted array of keys (an allocation).
            if metadata.count <= 2 {
                var pairs = metadata.makeIterator()
                if let first = pairs.next(), let second = pairs.next() {
                    let (a, b) = first.key < second.key ? (first, second) : (second, first)
                    appendPair(a.key, a.value)
                    bytes.append(UInt8(ascii: ","))
                    appendPair(b.key, b.value)
                } else if let only = metadata.first {
                    appendPair(only.key, only.value)
                }
            } else {
                for (i, key) in metadata.keys.sorted().enumerated() {
                    if i > 0 { bytes.append(UInt8(ascii: ",")) }
                    appendPair(key, metadata[key]!)
                }
            }
            bytes.appendLiteral("}}}")
        }
        bytes.append(UInt8(ascii: "\n"))
        entries.append(Entry(address: s.device.address, type: s.type, end: bytes.count))
    }

    private mutating func appendPair(_ key: String, _ value: String) {
        JSONWriter.writeString(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        JSONWriter.writeString(value, into: &bytes)
    }

    /// Appends `prefix` and the tail of every entry `admits` lets through; returns how many.
    func appendLines(prefix: [UInt8], into out: inout [UInt8], admits: (Entry) -> Bool) -> Int {
        var n = 0
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            for e in entries {
                defer { start = e.end }
                guard admits(e) else { continue }
                out.append(contentsOf: prefix)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[start..<e.end]))
                n += 1
            }
        }
        return n
    }
}

/// A sample's fixed fragments per type, made once by the general writer (so escaping and
/// names are the ones `SampleJSON` writes): after `"type":"`, the name and the opening of the
/// value (`heartRate","value":`, or `heartbeatSeries","beats":[`); after the value, the unit up
/// to the start time's opening quote.
private struct TypeFragments {
    let head: [UInt8]
    let unit: [UInt8]

    /// Indexed by `QuantityType.code` (1...15, the on-disk identity, never reused).
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
