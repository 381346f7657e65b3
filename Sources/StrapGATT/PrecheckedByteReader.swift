/// Little-endian reads over a borrowed buffer. Every multi-octet GATT field is little-endian
/// (docs/decoding.md#decoding-rules-and-policies); reading by hand keeps decoders allocation-free
/// and alignment-safe.
///
/// Prechecked: the decoder checks the packet's length against what its flags announce
/// *before* reading (and throws `truncated` itself), so the reads carry no bounds check of
/// their own; reading past the end is a programming error. The store's `CheckedByteReader`
/// is the opposite rule, for input that is not checked up front.
@usableFromInline
struct PrecheckedByteReader {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var offset: Int

    @inlinable init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        offset = 0
    }

    @inlinable var remaining: Int { bytes.count &- offset }

    @inlinable mutating func u8() -> UInt8 {
        let v = bytes[offset]
        offset &+= 1
        return v
    }

    @inlinable mutating func u16() -> UInt16 {
        let v = UInt16(bytes[offset]) | UInt16(bytes[offset &+ 1]) &<< 8
        offset &+= 2
        return v
    }

    @inlinable mutating func s16() -> Int16 { Int16(bitPattern: u16()) }

    @inlinable mutating func u24() -> UInt32 {
        let v = UInt32(bytes[offset]) | UInt32(bytes[offset &+ 1]) &<< 8 | UInt32(bytes[offset &+ 2]) &<< 16
        offset &+= 3
        return v
    }

    @inlinable mutating func u32() -> UInt32 {
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset &+ i]) &<< (8 &* UInt32(i)) }
        offset &+= 4
        return v
    }
}

/// Appends little-endian fields; used by the encoders (simulator, tests, control points).
struct ByteWriter {
    var bytes: [UInt8] = []
    init(capacity: Int = 20) { bytes.reserveCapacity(capacity) }
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
    mutating func s16(_ v: Int16) { u16(UInt16(bitPattern: v)) }
    mutating func u24(_ v: UInt32) { for i in 0..<3 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
    mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
}

extension Array where Element == UInt8 {
    /// Runs a decoder over the array's storage without copying.
    @inlinable
    func decode<T>(_ body: (UnsafeRawBufferPointer) throws(GATTDecodingError) -> T) throws(GATTDecodingError) -> T {
        // Array.withUnsafeBytes only rethrows untyped errors; carry the typed one out in a Result.
        let result: Result<T, GATTDecodingError> = withUnsafeBytes { raw in
            do throws(GATTDecodingError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
