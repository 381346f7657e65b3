import CZlib

/// Append-only byte buffer with the little-endian and LEB128 varint encodings of the format.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    @inline(__always) mutating func u8(_ v: UInt8) { bytes.append(v) }

    @inline(__always) mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 { bytes.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }

    /// Bytes `varint(v)` writes.
    @inline(__always) static func varintLength(_ v: UInt64) -> Int {
        var v = v, n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inline(__always) mutating func zigzag(_ v: Int64) {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ v: Double) { u64(v.bitPattern) }
    mutating func blob(_ b: [UInt8]) { varint(UInt64(b.count)); bytes.append(contentsOf: b) }
    /// Without an intermediate array: strings of metadata are written per sample.
    mutating func string(_ s: String) {
        let utf8 = s.utf8
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Checked on every read: each accessor returns nil past the end, so damaged input can
/// never crash the store, only fail a record. (StrapGATT's `PrecheckedByteReader` is the
/// opposite rule: its decoders check a packet's length once, before reading.)
struct CheckedByteReader {
    let base: UnsafeRawBufferPointer
    var pos: Int
    let end: Int

    init(_ base: UnsafeRawBufferPointer, from: Int = 0, to: Int? = nil) {
        self.base = base; pos = from; end = to ?? base.count
    }

    var atEnd: Bool { pos >= end }

    @inline(__always) mutating func u8() -> UInt8? {
        guard pos < end else { return nil }
        defer { pos += 1 }
        return base[pos]
    }

    @inline(__always) mutating func varint() -> UInt64? {
        var r: UInt64 = 0, shift: UInt64 = 0
        while pos < end {
            let b = base[pos]; pos += 1
            r |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return r }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    @inline(__always) mutating func zigzag() -> Int64? {
        guard let u = varint() else { return nil }
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let n = MemoryLayout<T>.size
        guard pos + n <= end else { return nil }
        var v: T = 0
        withUnsafeMutableBytes(of: &v) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: base[pos..<pos + n])) }
        pos += n
        return T(littleEndian: v)
    }

    mutating func f64() -> Double? { fixed(UInt64.self).map(Double.init(bitPattern:)) }

    mutating func blob() -> [UInt8]? {
        guard let n = varint(), n <= UInt64(end - pos) else { return nil }
        defer { pos += Int(n) }
        return Array(base[pos..<pos + Int(n)])
    }

    mutating func string() -> String? { blob().map { String(decoding: $0, as: UTF8.self) } }
}

/// zlib's CRC-32 (IEEE). Chosen over CRC32C because zlib's is already a dependency, is
/// table/SIMD accelerated, and catches every burst up to 32 bits: what torn writes and bit rot
/// produce. CRC32C would only add a hardware path we cannot reach without more C.
@inline(__always) func crc32(_ p: UnsafeRawBufferPointer) -> UInt32 {
    guard p.count > 0 else { return 0 }
    return UInt32(CZlib.crc32(0, p.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(p.count)))
}

func crc32(_ b: [UInt8]) -> UInt32 { b.withUnsafeBytes { crc32($0) } }
