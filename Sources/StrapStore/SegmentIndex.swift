import Glibc
import StrapModel
import StrapOS

struct Checkpoint: Sendable, Equatable {
    var offset: Int
    var anchor: UInt64
    /// The samples chain in effect at this record.
    var chain: Chain
}

struct MinuteRollup: Sendable, Equatable {
    var minute: Int64
    var aggregate: Aggregate
}

/// What open needs of a sealed segment, read from the front of its index file.
struct SegmentSummary: Sendable {
    var firstAnchor: UInt64
    var nextAnchor: UInt64
    var length: Int
    var minStart: Millis = .max
    var maxEnd: Millis = .min
    var tombstones: [RecordCodec.DeletedRange] = []
}

/// What queries need of a segment, loaded on first use.
struct SegmentDetail: Sendable {
    var streams: [StreamDef?] = []
    var checkpoints: [Checkpoint] = []
    /// Per stream id, per-minute aggregates sorted by minute.
    var rollups: [[MinuteRollup]] = []

    /// Heap bytes this detail holds, near enough to bound a cache of them (element strides
    /// plus a header per array; a stream's device is shared with the rest of the store).
    var approximateBytes: Int {
        let header = 32
        return header * (3 + rollups.count)
            + streams.count * MemoryLayout<StreamDef?>.stride
            + checkpoints.count * MemoryLayout<Checkpoint>.stride
            + rollups.reduce(0) { $0 + $1.count } * MemoryLayout<MinuteRollup>.stride
    }
}

/// Accumulates a segment's summary and detail, fed by the writer as it appends or by a scan
/// when recovering the open tail or rebuilding a lost index.
struct SegmentBuilder {
    var summary: SegmentSummary
    var streams: [StreamDef?] = []
    var checkpoints: [Checkpoint] = []
    /// The chain after the last record.
    var chain: Chain
    private var lastCheckpoint = -Format.checkpointEvery
    private var minutes: [[Int64: Aggregate]] = []
    private var current: [(minute: Int64, agg: Aggregate)] = []

    init(header: SegmentHeader) {
        summary = SegmentSummary(firstAnchor: header.firstAnchor, nextAnchor: header.firstAnchor, length: Format.headerSize)
        chain = Chain(time: header.baseTime, stream: -1)
    }

    mutating func recordStart(offset: Int, anchor: UInt64, chain: Chain) {
        if offset - lastCheckpoint >= Format.checkpointEvery {
            checkpoints.append(Checkpoint(offset: offset, anchor: anchor, chain: chain))
            lastCheckpoint = offset
        }
    }

    mutating func addStream(_ s: StreamDef) {
        while streams.count <= s.id { streams.append(nil); minutes.append([:]); current.append((.min, Aggregate())) }
        streams[s.id] = s
    }

    mutating func add(_ samples: [Sample], ids: [Int], firstAnchor: UInt64) {
        samples.withUnsafeBufferPointer { sp in
            for k in sp.indices {
                add(value: sp[k].value, start: sp[k].start, end: sp[k].end, anchor: firstAnchor + UInt64(k), stream: ids[k])
            }
        }
    }

    @inline(__always) mutating func add(_ s: Sample, stream: Int) {
        add(value: s.value, start: s.start, end: s.end, anchor: s.anchor, stream: stream)
    }

    @inline(__always) mutating func add(value: Double, start: Millis, end: Millis, anchor: UInt64, stream: Int) {
        if start < summary.minStart { summary.minStart = start }
        if end > summary.maxEnd { summary.maxEnd = end }
        let minute = start.floorDiv(60_000)
        if current[stream].minute != minute {
            flush(stream)
            current[stream].minute = minute
            current[stream].agg = minutes[stream][minute] ?? Aggregate()
        }
        current[stream].agg.add(value, start: start, anchor: anchor)
    }

    private mutating func flush(_ stream: Int) {
        if current[stream].agg.count > 0 { minutes[stream][current[stream].minute] = current[stream].agg }
    }

    mutating func addTombstone(_ ranges: [RecordCodec.DeletedRange]) { summary.tombstones += ranges }

    mutating func finish(nextAnchor: UInt64, length: Int) {
        summary.nextAnchor = nextAnchor
        summary.length = length
    }

    mutating func detail() -> SegmentDetail {
        for i in current.indices { flush(i) }
        let rollups = minutes.map { m in m.map { MinuteRollup(minute: $0.key, aggregate: $0.value) }.sorted { $0.minute < $1.minute } }
        return SegmentDetail(streams: streams, checkpoints: checkpoints, rollups: rollups)
    }
}

/// The index file written when a segment is sealed (layout in docs/storage.md): a fixed
/// header, the summary section (tombstones) and the detail section, each with its own CRC so
/// open reads only the small front part.
enum IndexFile {
    static let headerSize = 92

    static func encode(storeID: UInt64, summary s: SegmentSummary, detail d: SegmentDetail) -> [UInt8] {
        var sum = ByteWriter()
        sum.varint(UInt64(s.tombstones.count))
        for t in s.tombstones { sum.u8(t.typeCode); sum.varint(t.first); sum.varint(t.count) }

        var det = ByteWriter()
        det.varint(UInt64(d.streams.count))
        for st in d.streams {
            if let st { det.u8(1); det.blob(RecordCodec.encodeStream(st)) } else { det.u8(0) }
        }
        det.varint(UInt64(d.checkpoints.count))
        var prev = Checkpoint(offset: 0, anchor: s.firstAnchor, chain: Chain(time: 0, stream: -1))
        for c in d.checkpoints {
            det.varint(UInt64(c.offset - prev.offset)); det.varint(c.anchor - prev.anchor)
            det.zigzag(c.chain.time &- prev.chain.time); det.varint(UInt64(c.chain.stream + 1))
            prev = c
        }
        det.varint(UInt64(d.rollups.count))
        for r in d.rollups {
            det.varint(UInt64(r.count))
            var prevMinute: Int64 = 0
            for m in r {
                let a = m.aggregate
                det.zigzag(m.minute - prevMinute); prevMinute = m.minute
                det.varint(UInt64(a.count))
                ValueCoding.write(a.sum, to: &det)
                ValueCoding.write(a.min, to: &det)
                ValueCoding.write(a.max, to: &det)
                ValueCoding.write(a.lastValue, to: &det)
                det.zigzag(a.lastStart - m.minute * 60_000)
                det.varint(a.lastAnchor - s.firstAnchor)
            }
        }

        var w = ByteWriter(capacity: headerSize + sum.bytes.count + det.bytes.count)
        w.bytes += Format.indexMagic
        w.u16(Format.version); w.u16(0); w.u32(0)
        w.u64(storeID); w.u64(s.firstAnchor); w.u64(s.nextAnchor); w.u64(UInt64(s.length))
        w.u64(UInt64(bitPattern: s.minStart)); w.u64(UInt64(bitPattern: s.maxEnd)); w.u64(0)
        w.u32(UInt32(sum.bytes.count)); w.u32(UInt32(det.bytes.count))
        w.u32(crc32(sum.bytes)); w.u32(crc32(det.bytes))
        w.u32(crc32(w.bytes))
        w.bytes += sum.bytes
        w.bytes += det.bytes
        return w.bytes
    }

    struct Header {
        var storeID: UInt64
        var summary: SegmentSummary
        var detailOffset: Int
        var detailLength: Int
        var detailCRC: UInt32
    }

    /// Reads and verifies the header and summary; nil when absent or damaged.
    static func readSummary(path: String, syscalls: Syscalls) -> Header? {
        guard let f = try? OpenFile(path: path, flags: O_RDONLY, syscalls: syscalls),
              let head = try? f.read(at: 0, count: 4096), head.count >= headerSize,
              Array(head[0..<8]) == Format.indexMagic else { return nil }
        return head.withUnsafeBytes { raw -> Header? in
            var r = CheckedByteReader(raw, from: 8, to: headerSize)
            guard let v = r.fixed(UInt16.self), Format.readableVersions.contains(v) else { return nil }
            _ = r.fixed(UInt16.self); _ = r.fixed(UInt32.self)
            let sid = r.fixed(UInt64.self)!, first = r.fixed(UInt64.self)!, next = r.fixed(UInt64.self)!
            // Read before the header's CRC is checked: a flipped bit must not trap.
            guard let len = Int(exactly: r.fixed(UInt64.self)!) else { return nil }
            let minS = Int64(bitPattern: r.fixed(UInt64.self)!), maxE = Int64(bitPattern: r.fixed(UInt64.self)!)
            _ = r.fixed(UInt64.self)
            let sumLen = Int(r.fixed(UInt32.self)!), detLen = Int(r.fixed(UInt32.self)!)
            let sumCRC = r.fixed(UInt32.self)!, detCRC = r.fixed(UInt32.self)!
            guard r.fixed(UInt32.self)! == crc32(UnsafeRawBufferPointer(rebasing: raw[0..<headerSize - 4])) else { return nil }
            let sumBytes: [UInt8]
            if headerSize + sumLen <= head.count {
                sumBytes = Array(head[headerSize..<headerSize + sumLen])
            } else {
                guard let b = try? f.read(at: headerSize, count: sumLen), b.count == sumLen else { return nil }
                sumBytes = b
            }
            guard crc32(sumBytes) == sumCRC else { return nil }
            var summary = SegmentSummary(firstAnchor: first, nextAnchor: next, length: len, minStart: minS, maxEnd: maxE)
            let ok = sumBytes.withUnsafeBytes { sraw -> Bool in
                var sr = CheckedByteReader(sraw)
                guard let n = sr.varint() else { return false }
                for _ in 0..<n {
                    guard let t = sr.u8(), let f = sr.varint(), let c = sr.varint() else { return false }
                    summary.tombstones.append(.init(typeCode: t, first: f, count: c))
                }
                return true
            }
            guard ok else { return nil }
            return Header(storeID: sid, summary: summary, detailOffset: headerSize + sumLen,
                          detailLength: detLen, detailCRC: detCRC)
        }
    }

    /// Reads and verifies the detail section; nil when damaged.
    static func readDetail(path: String, header h: Header, syscalls: Syscalls) -> SegmentDetail? {
        guard let f = try? OpenFile(path: path, flags: O_RDONLY, syscalls: syscalls),
              let bytes = try? f.read(at: h.detailOffset, count: h.detailLength),
              bytes.count == h.detailLength, crc32(bytes) == h.detailCRC else { return nil }
        let first = h.summary.firstAnchor
        return bytes.withUnsafeBytes { raw -> SegmentDetail? in
            var r = CheckedByteReader(raw)
            var d = SegmentDetail()
            guard let ns = r.varint() else { return nil }
            for _ in 0..<ns {
                guard let flag = r.u8() else { return nil }
                if flag == 0 { d.streams.append(nil); continue }
                guard let b = r.blob() else { return nil }
                let s = b.withUnsafeBytes { br -> StreamDef? in var x = CheckedByteReader(br); return RecordCodec.decodeStream(&x) }
                guard let s else { return nil }
                d.streams.append(s)
            }
            guard let nc = r.varint() else { return nil }
            var prev = Checkpoint(offset: 0, anchor: first, chain: Chain(time: 0, stream: -1))
            for _ in 0..<nc {
                guard let o = r.varint(), let a = r.varint(), let t = r.zigzag(), let st = r.varint(), st < 1 << 20
                else { return nil }
                prev = Checkpoint(offset: prev.offset + Int(o), anchor: prev.anchor + a,
                                  chain: Chain(time: prev.chain.time &+ t, stream: Int(st) - 1))
                d.checkpoints.append(prev)
            }
            guard let nr = r.varint() else { return nil }
            for _ in 0..<nr {
                guard let n = r.varint() else { return nil }
                var list: [MinuteRollup] = []
                list.reserveCapacity(Int(n))
                var minute: Int64 = 0
                for _ in 0..<n {
                    guard let dm = r.zigzag(), let c = r.varint(), let sum = ValueCoding.read(from: &r),
                          let mn = ValueCoding.read(from: &r), let mx = ValueCoding.read(from: &r),
                          let lv = ValueCoding.read(from: &r), let ls = r.zigzag(), let la = r.varint()
                    else { return nil }
                    minute += dm
                    var a = Aggregate()
                    a.count = Int(c); a.sum = sum; a.min = mn; a.max = mx; a.lastValue = lv
                    a.lastStart = minute * 60_000 + ls; a.lastAnchor = first + la
                    list.append(MinuteRollup(minute: minute, aggregate: a))
                }
                d.rollups.append(list)
            }
            return d
        }
    }
}
