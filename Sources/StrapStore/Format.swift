import StrapModel

/// On-disk constants and the segment header (docs/storage.md has the byte layout).
enum Format {
    static let segmentMagic: [UInt8] = Array("STRPSEG1".utf8)
    static let indexMagic: [UInt8] = Array("STRPIDX1".utf8)
    /// What this build writes in new segments and index files (docs/storage.md, "Format
    /// versions"): 2 added the power quantity type codes.
    static let version: UInt16 = 2
    /// Every version ever shipped is still read; a segment keeps its own until retention drops it.
    static let readableVersions: ClosedRange<UInt16> = 1...version
    static let headerSize = 44
    /// A record body larger than this is taken as a damaged length, not a real record.
    static let maxRecordBody = 64 << 20
    static let checkpointEvery = 32 << 10
    /// Held (flock) by the one process writing the store; holds that process's pid.
    static let lockName = "store.lock"

    static func segmentName(_ firstAnchor: UInt64) -> String {
        "seg-" + hex16(firstAnchor) + ".log"
    }

    static func indexName(_ firstAnchor: UInt64) -> String {
        "seg-" + hex16(firstAnchor) + ".idx"
    }

    static func hex16(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// Parses "seg-<16 hex>.log" into its first anchor.
    static func parseSegmentName(_ name: String) -> UInt64? {
        guard name.hasPrefix("seg-"), name.hasSuffix(".log"), name.utf8.count == 24 else { return nil }
        return UInt64(name.dropFirst(4).prefix(16), radix: 16)
    }
}

/// Record kinds. A reader skips kinds it does not know (advancing anchors by the frame's
/// item count), so newer writers can add kinds without breaking older readers.
enum RecordKind: UInt8 {
    case stream = 1
    case samples = 2
    case tombstone = 3
    case workout = 4
}

struct SegmentHeader: Equatable {
    var storeID: UInt64
    var firstAnchor: UInt64
    var baseTime: Millis
    /// The format the segment was written in; an older one is never appended to (StoreOpener).
    var version: UInt16 = Format.version

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: Format.headerSize)
        w.bytes += Format.segmentMagic
        w.u16(version)
        w.u16(0)
        w.u32(0)
        w.u64(storeID)
        w.u64(firstAnchor)
        w.u64(UInt64(bitPattern: baseTime))
        w.u32(crc32(w.bytes))
        return w.bytes
    }

    enum Problem: Error { case short, magic, checksum, version(UInt16) }

    static func decode(_ b: [UInt8]) -> Result<SegmentHeader, Problem> {
        guard b.count >= Format.headerSize else { return .failure(.short) }
        guard Array(b[0..<8]) == Format.segmentMagic else { return .failure(.magic) }
        return b.withUnsafeBytes { raw in
            var r = CheckedByteReader(raw, from: 8, to: Format.headerSize)
            let version = r.fixed(UInt16.self)!
            _ = r.fixed(UInt16.self); _ = r.fixed(UInt32.self)
            let sid = r.fixed(UInt64.self)!, first = r.fixed(UInt64.self)!
            let base = Int64(bitPattern: r.fixed(UInt64.self)!)
            let crc = r.fixed(UInt32.self)!
            guard crc == crc32(UnsafeRawBufferPointer(rebasing: raw[0..<40])) else { return .failure(.checksum) }
            guard Format.readableVersions.contains(version) else { return .failure(.version(version)) }
            return .success(SegmentHeader(storeID: sid, firstAnchor: first, baseTime: base, version: version))
        }
    }
}

/// Record frame: varint body length, CRC-32 of the body (LE u32), body = kind byte (top bit:
/// exactly one item), varint item count (anchors the record consumes) unless that bit is set,
/// payload.
enum Frame {
    /// Written in place: the checksum is patched in once the body is behind it, so a record
    /// costs no body array of its own (one per record was an allocation per notification).
    static func append(kind: RecordKind, items: Int, payload: [UInt8], to w: inout ByteWriter) {
        payload.withUnsafeBytes { append(kind: kind, items: items, payload: $0, to: &w) }
    }

    static func append(kind: RecordKind, items: Int, payload: UnsafeRawBufferPointer, to w: inout ByteWriter) {
        // One-item records (a 1 Hz sample each) say so in the kind byte's top bit.
        let head = items == 1 ? 1 : 1 + ByteWriter.varintLength(UInt64(items))
        w.varint(UInt64(head + payload.count))
        let crcAt = w.bytes.count
        w.u32(0)
        let bodyAt = w.bytes.count
        if items == 1 { w.u8(kind.rawValue | 0x80) } else { w.u8(kind.rawValue); w.varint(UInt64(items)) }
        w.bytes.append(contentsOf: payload)
        w.bytes.withUnsafeMutableBytes { b in
            let crc = crc32(UnsafeRawBufferPointer(rebasing: b[bodyAt...]))
            withUnsafeBytes(of: crc.littleEndian) { UnsafeMutableRawBufferPointer(rebasing: b[crcAt..<crcAt + 4]).copyMemory(from: $0) }
        }
    }

    struct Parsed {
        var kind: UInt8
        var items: Int
        /// Offset of the record's first byte.
        var start: Int
        /// Payload range within the buffer.
        var payload: Range<Int>
        /// Offset just past the record.
        var next: Int
    }

    enum Outcome { case record(Parsed), incomplete, damaged }

    /// Parses the record at `pos`. `incomplete` means the buffer ends inside the record (a torn
    /// tail when the buffer is the whole file); `damaged` means the checksum or framing is wrong.
    static func parse(_ buf: UnsafeRawBufferPointer, at pos: Int, end: Int) -> Outcome {
        var r = CheckedByteReader(buf, from: pos, to: end)
        guard let len = r.varint() else { return r.pos - pos >= 10 ? .damaged : .incomplete }
        guard len > 0, len <= UInt64(Format.maxRecordBody) else { return .damaged }
        guard let crc = r.fixed(UInt32.self) else { return .incomplete }
        let bodyStart = r.pos, bodyEnd = bodyStart + Int(len)
        guard bodyEnd <= end else { return .incomplete }
        guard crc32(UnsafeRawBufferPointer(rebasing: buf[bodyStart..<bodyEnd])) == crc else { return .damaged }
        var b = CheckedByteReader(buf, from: bodyStart, to: bodyEnd)
        guard let k = b.u8() else { return .damaged }
        let items: UInt64
        if k & 0x80 != 0 { items = 1 } else {
            guard let n = b.varint(), n < 1 << 40 else { return .damaged }
            items = n
        }
        return .record(Parsed(kind: k & 0x7f, items: Int(items), start: pos, payload: b.pos..<bodyEnd, next: bodyEnd))
    }
}
