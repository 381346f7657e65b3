import FoundationEssentials
import StrapModel

/// A (type, device) pair declared once per segment and referenced by a small id, so a
/// sample costs one id byte instead of its device strings.
struct StreamDef: Sendable {
    var id: Int
    var type: QuantityType
    var device: Device
}

/// Sample UUIDs are derived, not stored: 60 bits of store id, version 8 (custom), variant
/// bits, and the 62-bit anchor. Unique across stores, and the anchor is recoverable from it.
struct UUIDScheme: Sendable {
    let storeID: UInt64

    func uuid(for anchor: UInt64) -> UUID {
        let s = storeID, a = anchor
        return UUID(uuid: (UInt8(truncatingIfNeeded: s >> 52), UInt8(truncatingIfNeeded: s >> 44),
                           UInt8(truncatingIfNeeded: s >> 36), UInt8(truncatingIfNeeded: s >> 28),
                           UInt8(truncatingIfNeeded: s >> 20), UInt8(truncatingIfNeeded: s >> 12),
                           0x80 | UInt8(truncatingIfNeeded: (s >> 8) & 0x0f), UInt8(truncatingIfNeeded: s),
                           0x80 | UInt8(truncatingIfNeeded: (a >> 56) & 0x3f), UInt8(truncatingIfNeeded: a >> 48),
                           UInt8(truncatingIfNeeded: a >> 40), UInt8(truncatingIfNeeded: a >> 32),
                           UInt8(truncatingIfNeeded: a >> 24), UInt8(truncatingIfNeeded: a >> 16),
                           UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a)))
    }

    /// The anchor a UUID of this store encodes, or nil for a foreign UUID.
    func anchor(of uuid: UUID) -> UInt64? {
        let u = uuid.uuid, p = self.uuid(for: 0).uuid
        guard u.0 == p.0, u.1 == p.1, u.2 == p.2, u.3 == p.3, u.4 == p.4, u.5 == p.5,
              u.6 == p.6, u.7 == p.7, u.8 & 0xc0 == 0x80 else { return nil }
        var a = UInt64(u.8 & 0x3f)
        for b in [u.9, u.10, u.11, u.12, u.13, u.14, u.15] { a = a << 8 | UInt64(b) }
        return a
    }
}

/// Values are stored exactly: as an integer when the double is one, as thousandths when
/// that round-trips, else as the raw IEEE bits. Heart rate costs one or two bytes.
enum ValueCoding {
    static let uint: UInt8 = 0, negUint: UInt8 = 1, milli: UInt8 = 2, raw: UInt8 = 3

    @inline(__always) static func mode(_ v: Double) -> (UInt8, UInt64) {
        if v >= 0, v < 9e15, v == v.rounded(.towardZero), !(v == 0 && v.sign == .minus) {
            return (uint, UInt64(v))
        }
        if v < 0, v > -9e15, v == v.rounded(.towardZero) { return (negUint, UInt64(-v)) }
        let m = (v * 1000).rounded()
        if abs(m) < 9e15, m / 1000 == v, !(v == 0) {
            let i = Int64(m)
            return (milli, UInt64(bitPattern: (i << 1) ^ (i >> 63)))
        }
        return (raw, v.bitPattern)
    }

    @inline(__always) static func write(_ mode: UInt8, _ bits: UInt64, to w: inout ByteWriter) {
        if mode == raw { w.u64(bits) } else { w.varint(bits) }
    }

    @inline(__always) static func read(_ mode: UInt8, from r: inout CheckedByteReader) -> Double? {
        switch mode {
        case uint: return r.varint().map { Double($0) }
        case negUint: return r.varint().map { -Double($0) }
        case milli: return r.zigzag().map { Double($0) / 1000 }
        default: return r.f64()
        }
    }

    static func write(_ v: Double, to w: inout ByteWriter) {
        let (m, b) = mode(v)
        w.u8(m); write(m, b, to: &w)
    }

    static func read(from r: inout CheckedByteReader) -> Double? {
        guard let m = r.u8(), m <= raw else { return nil }
        return read(m, from: &r)
    }
}

/// What a samples record is decoded against: the first start time and the first stream of the
/// previous samples record in the segment (or the header's base time and no stream). A 1 Hz
/// sample then costs a two-byte time delta and no stream id.
struct Chain: Sendable, Equatable {
    var time: Millis
    var stream: Int
}

enum RecordCodec {
    // Sample tag bits.
    static let hasStream: UInt8 = 0x01
    static let modeShift: UInt8 = 1      // two bits
    static let hasDuration: UInt8 = 0x08
    static let hasExtras: UInt8 = 0x10

    static func encodeStream(_ s: StreamDef) -> [UInt8] {
        var w = ByteWriter()
        w.varint(UInt64(s.id))
        w.u8(s.type.code)
        let d = s.device
        w.string(d.id); w.string(d.address); w.string(d.name)
        for opt in [d.manufacturer, d.model, d.serial, d.firmware] {
            if let o = opt { w.u8(1); w.string(o) } else { w.u8(0) }
        }
        return w.bytes
    }

    static func decodeStream(_ r: inout CheckedByteReader) -> StreamDef? {
        guard let id = r.varint(), id < 1 << 20, let code = r.u8(), let type = QuantityType(code: code),
              let did = r.string(), let addr = r.string(), let name = r.string() else { return nil }
        var opts: [String?] = []
        for _ in 0..<4 {
            guard let flag = r.u8() else { return nil }
            if flag == 1 { guard let s = r.string() else { return nil }; opts.append(s) } else { opts.append(nil) }
        }
        return StreamDef(id: Int(id), type: type, device: Device(id: did, address: addr, name: name,
                                                                 manufacturer: opts[0], model: opts[1],
                                                                 serial: opts[2], firmware: opts[3]))
    }

    /// Encodes samples (with their segment-local stream ids) as one `samples` payload.
    /// `x`: scratch for one run's extras, emptied before use; the writer hands in a kept one, so
    /// a sample with metadata allocates no buffer of its own (it did, per notification).
    static func encodeSamples(_ samples: [Sample], ids: [Int], range: Range<Int>, chain: inout Chain,
                              into w: inout ByteWriter, extras x: inout ByteWriter) {
        let first = range.lowerBound
        var prevStream = chain.stream
        var prevStart = samples[first].start
        w.zigzag(prevStart &- chain.time)
        chain = Chain(time: samples[first].start, stream: ids[first])
        var isFirst = true
        // Whose extras `x` holds. Sound within this call: the samples hold their extras alive,
        // so an identifier cannot be reused for different storage meanwhile.
        var encodedExtras: UInt = 0
        // Borrow samples in place: copying each one out retains and releases its device.
        samples.withUnsafeBufferPointer { sp in
        for k in range {
            let stream = ids[k]
            let s = UnsafePointer(sp.baseAddress! + k)
            let (mode, bits) = ValueCoding.mode(s.pointee.value)
            var tag = mode << modeShift
            if stream != prevStream { tag |= hasStream }
            if s.pointee.end != s.pointee.start { tag |= hasDuration }
            let extrasIdentity = Sample.identities(at: s).extras
            let extras = extrasIdentity != 0
            if extras { tag |= hasExtras }
            w.u8(tag)
            if stream != prevStream { w.varint(UInt64(stream)); prevStream = stream }
            if !isFirst { w.zigzag(s.pointee.start &- prevStart) }
            isFirst = false
            prevStart = s.pointee.start
            ValueCoding.write(mode, bits, to: &w)
            if s.pointee.end != s.pointee.start { w.zigzag(s.pointee.end &- s.pointee.start) }
            if extras {
                // A foot pod tags every speed sample with one shared map: encoded once per
                // run of it, not read (retaining its storage) for every sample.
                if extrasIdentity != encodedExtras {
                    encodedExtras = extrasIdentity
                    x.bytes.removeAll(keepingCapacity: true)
                    let metadata = s.pointee.metadata
                    x.varint(UInt64(metadata.count))
                    if metadata.count == 1, let (k, v) = metadata.first {
                        x.string(k); x.string(v)
                    } else {
                        for (k, v) in metadata.sorted(by: { $0.key < $1.key }) { x.string(k); x.string(v) }
                    }
                    let beats = s.pointee.beats
                    x.varint(UInt64(beats.count))
                    for b in beats { x.f64(b) }
                }
                w.blob(x.bytes)
            }
        }
        }
    }

    /// Decodes a `samples` payload of `count` samples; returns false when malformed.
    /// `visit` returns false to stop early.
    @inline(__always)
    static func decodeSamples(_ r: CheckedByteReader, count: Int, firstAnchor: UInt64, chain: inout Chain,
                              streams: [StreamDef?], uuids: UUIDScheme,
                              visit: (consuming Sample, Int) -> Bool) -> Bool {
        guard var reader = SampleRecordReader(r, count: count, firstAnchor: firstAnchor, chain: chain, streams: streams)
        else { return false }
        defer { chain = reader.chain }
        while true {
            switch reader.next(uuids: uuids) {
            case .sample(let s, let stream): if !visit(s, stream) { return true }
            case .end: return true
            case .damaged: return false
            }
        }
    }

    /// Moves `chain` past a samples record without decoding its samples (records skipped by a
    /// reader that starts mid-segment).
    static func advanceChain(_ r: inout CheckedByteReader, chain: inout Chain) -> Bool {
        guard let base = r.zigzag(), let tag = r.u8() else { return false }
        var stream = chain.stream
        if tag & hasStream != 0 { guard let id = r.varint(), id < 1 << 20 else { return false }; stream = Int(id) }
        chain = Chain(time: chain.time &+ base, stream: stream)
        return true
    }

    /// Tombstone payload: ranges of deleted anchors, each with the deleted objects' type code
    /// (0 = workout) so anchored readers can filter deletions by type.
    struct DeletedRange: Sendable, Equatable {
        var typeCode: UInt8
        var first: UInt64
        var count: UInt64
    }

    static func encodeTombstone(_ ranges: [DeletedRange]) -> [UInt8] {
        var w = ByteWriter()
        w.varint(UInt64(ranges.count))
        for r in ranges { w.u8(r.typeCode); w.varint(r.first); w.varint(r.count) }
        return w.bytes
    }

    static func decodeTombstone(_ r: inout CheckedByteReader) -> [DeletedRange]? {
        guard let n = r.varint(), n < 1 << 32 else { return nil }
        var out: [DeletedRange] = []
        for _ in 0..<n {
            guard let t = r.u8(), let f = r.varint(), let c = r.varint() else { return nil }
            out.append(DeletedRange(typeCode: t, first: f, count: c))
        }
        return out
    }

    static func encodeWorkout(_ w: Workout) -> [UInt8] {
        let enc = JSONEncoder()
        enc.outputFormatting = .sortedKeys
        return Array((try? enc.encode(w)) ?? Data())
    }

    static func decodeWorkout(_ bytes: [UInt8], anchor: UInt64, uuids: UUIDScheme) -> Workout? {
        guard var w = try? JSONDecoder().decode(Workout.self, from: Data(bytes)) else { return nil }
        w.anchor = anchor
        w.uuid = uuids.uuid(for: anchor)
        return w
    }
}

/// A `samples` payload decoded one sample per `next()` (the log cursor's step).
struct SampleRecordReader {
    enum Step {
        case sample(Sample, stream: Int)
        case end
        /// The payload is malformed here; samples before it were good.
        case damaged
    }

    private var r: CheckedByteReader
    private let count: Int
    private let firstAnchor: UInt64
    private let streams: [StreamDef?]
    private var index = 0
    private var start: Millis
    // The current stream's device is held unretained: `streams` keeps it alive, and a
    // retain/release pair per sample was a third of catch-up time.
    private var device: Unmanaged<Device>? = nil
    private var type = QuantityType.heartRate
    private var streamID: Int
    /// The chain the next record continues from: this record's first sample once read.
    private(set) var chain: Chain

    /// Nil when the payload's head is malformed.
    @inline(__always)
    init?(_ r: CheckedByteReader, count: Int, firstAnchor: UInt64, chain: Chain, streams: [StreamDef?]) {
        var r = r
        guard let base = r.zigzag() else { return nil }
        self.r = r
        self.count = count
        self.firstAnchor = firstAnchor
        self.streams = streams
        self.chain = chain
        start = chain.time &+ base
        streamID = chain.stream
        if streamID >= 0 {
            guard streamID < streams.count, let s = streams[streamID] else { return nil }
            device = Unmanaged.passUnretained(s.device)
            type = s.type
        }
    }

    @inline(__always)
    mutating func next(uuids: UUIDScheme) -> Step {
        guard index < count else { return .end }
        let i = index
        index += 1
        guard let tag = r.u8() else { return .damaged }
        if tag & RecordCodec.hasStream != 0 {
            guard let id = r.varint(), id < UInt64(streams.count), let s = streams[Int(id)] else { return .damaged }
            device = Unmanaged.passUnretained(s.device)
            type = s.type
            streamID = s.id
        }
        guard let dev = device else { return .damaged }
        if i == 0 {
            chain = Chain(time: start, stream: streamID)
        } else {
            guard let delta = r.zigzag() else { return .damaged }
            start &+= delta
        }
        guard let value = ValueCoding.read((tag >> RecordCodec.modeShift) & 3, from: &r) else { return .damaged }
        var end = start
        if tag & RecordCodec.hasDuration != 0 { guard let d = r.zigzag() else { return .damaged }; end = start &+ d }
        let anchor = firstAnchor + UInt64(i)
        guard tag & RecordCodec.hasExtras != 0 else {
            return .sample(Sample(uuid: uuids.uuid(for: anchor), anchor: anchor, type: type, value: value,
                                  start: start, end: end, device: dev.takeUnretainedValue()), stream: streamID)
        }
        guard let x = r.blob() else { return .damaged }
        var metadata: [String: String] = [:], beats: [Double] = []
        let ok = x.withUnsafeBytes { raw -> Bool in
            var xr = CheckedByteReader(raw)
            guard let n = xr.varint(), n < 1 << 20 else { return false }
            for _ in 0..<n {
                guard let k = xr.string(), let v = xr.string() else { return false }
                metadata[k] = v
            }
            guard let nb = xr.varint(), nb < 1 << 20 else { return false }
            for _ in 0..<nb { guard let b = xr.f64() else { return false }; beats.append(b) }
            return true
        }
        if !ok { return .damaged }
        return .sample(Sample(type: type, value: value, start: start, end: end, device: dev.takeUnretainedValue(),
                              metadata: metadata, beats: beats, uuid: uuids.uuid(for: anchor), anchor: anchor),
                       stream: streamID)
    }
}
