import StrapIngest
import StrapModel
import StrapWire

/// A turn's live events, each encoded once as the tail of its line (`sample","data":{…}}\n`)
/// into one byte buffer that is kept and reused. A subscriber's line is its own prefix
/// (`{"id":N,"event":"`, `LiveStream.linePrefix`) followed by the tail, so the bytes are the
/// ones `Reply.appendEvent` writes around `SampleJSON` (docs/protocol.md#livesubscribe), which
/// `LiveLinesTests` checks for random samples.
///
/// Why not one `[UInt8]` per event: an array per event and per subscriber was most of the live
/// fan-out's cost per notification (docs/benchmarks.md, "Instructions and allocations per
/// notification"); here each event is written once, by `SampleJSON` for samples.
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

    /// A sample's tail: `SampleJSON`'s live form, the one writer of a sample's JSON.
    mutating func append(_ s: Sample) {
        bytes.appendLiteral(#"sample","data":"#)
        SampleJSON.append(s, durable: false, into: &bytes)
        bytes.appendLiteral("}\n")
        entries.append(Entry(address: s.device.address, type: s.type, end: bytes.count))
    }

    /// Appends `prefix` and the tail of every entry `admits` lets through; returns how many.
    func appendLines(prefix: [UInt8], into out: inout [UInt8], admits: (Entry) -> Bool) -> Int {
        var n = 0
        // Both borrowed in place: a `for` over `entries` copied each entry (its address
        // retained and released).
        bytes.withUnsafeBufferPointer { all in
            entries.withUnsafeBufferPointer { entries in
                var start = 0
                for i in entries.indices {
                    let end = entries[i].end
                    defer { start = end }
                    guard admits(entries[i]) else { continue }
                    out.append(contentsOf: prefix)
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: all[start..<end]))
                    n += 1
                }
            }
        }
        return n
    }
}
