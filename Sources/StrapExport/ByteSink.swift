import StrapModel
import StrapWire

/// Where encoders write: a byte buffer the stream drains chunk by chunk. Text is appended as
/// bytes directly (numbers and times included) so that a 24 h export allocates no strings
/// per record.
struct ByteSink {
    var bytes: [UInt8] = []
    /// FIT's running CRC over every byte ever written, when the format needs one.
    private(set) var crc: FIT.CRC?
    private var crcThrough = 0

    init(capacity: Int, tracksCRC: Bool = false) {
        bytes.reserveCapacity(capacity)
        crc = tracksCRC ? FIT.CRC() : nil
    }

    var count: Int { bytes.count }

    /// Brings the CRC up to date with everything written so far.
    mutating func updateCRC() {
        guard crc != nil, crcThrough < bytes.count else { return }
        crc!.update(bytes[crcThrough...])
        crcThrough = bytes.count
    }

    /// Removes and returns the first `n` bytes (the CRC has seen them first).
    mutating func take(_ n: Int) -> [UInt8] {
        updateCRC()
        let chunk = Array(bytes[..<n])
        bytes.removeFirst(n)
        crcThrough -= n
        return chunk
    }

    /// Forgets everything written (the sizing pass), returning how much it was.
    mutating func discardAll() -> Int {
        updateCRC()
        let n = bytes.count
        bytes.removeAll(keepingCapacity: true)
        crcThrough = 0
        return n
    }

    // MARK: binary, little-endian (FIT's architecture 0)

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    mutating func u32(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
    }

    /// A FIT string field of a fixed `width`: UTF-8, cut at a character boundary so that a
    /// terminating NUL fits, padded with NULs (an empty string is the invalid value).
    mutating func fixedString(_ s: String, width: Int) {
        var utf8 = Array(s.utf8.prefix(width - 1))
        // Drop a multi-byte sequence the cut left incomplete (continuation bytes are 10xxxxxx;
        // the lead byte says how long its sequence is).
        if utf8.count < s.utf8.count, var lead = utf8.indices.last {
            while lead > 0 && utf8[lead] & 0xC0 == 0x80 { lead -= 1 }
            let b = utf8[lead]
            let length = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
            if utf8.count - lead < length { utf8.removeLast(utf8.count - lead) }
        }
        bytes.append(contentsOf: utf8)
        bytes.append(contentsOf: repeatElement(0, count: width - utf8.count))
    }

    // MARK: text

    mutating func text(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ s: String) { bytes.append(contentsOf: s.utf8) }

    mutating func integer(_ v: Int64) {
        if v < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(v == .min ? UInt64(Int64.max) + 1 : UInt64(-v))
        } else {
            unsigned(UInt64(v))
        }
    }

    mutating func unsigned(_ v: UInt64) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = v, i = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[i] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
                i += 1
            } while n > 0
            while i > 0 {
                i -= 1
                bytes.append(buffer[i])
            }
        }
    }

    /// `v` rounded to `digits` decimals, trailing zeros (and a bare point) dropped: 3.5, 12, 0.125.
    mutating func decimal(_ v: Double, digits: Int) {
        guard v.isFinite else { return }
        let scale = Self.powersOfTen[digits]
        let scaled = (abs(v) * Double(scale)).rounded()
        guard scaled < 9.0e18 else { integer(v < 0 ? .min : .max); return }
        let n = UInt64(scaled)
        if v < 0 && n != 0 { bytes.append(UInt8(ascii: "-")) }
        unsigned(n / scale)
        var fraction = n % scale
        guard fraction != 0 else { return }
        var width = digits
        while fraction % 10 == 0 { fraction /= 10; width -= 1 }
        bytes.append(UInt8(ascii: "."))
        var pad = Self.powersOfTen[width - 1]
        while pad > fraction && pad > 1 { bytes.append(UInt8(ascii: "0")); pad /= 10 }
        unsigned(fraction)
    }

    static let powersOfTen: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]

    /// RFC 3339 UTC: `2024-03-31T01:59:59Z`, or with milliseconds `…59.123Z`.
    mutating func rfc3339(_ ms: Millis, milliseconds: Bool) {
        let seconds = ms.floorDiv(1000)
        let millis = ms - seconds * 1000
        let days = seconds.floorDiv(86_400)
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = RFC3339Timestamp.civil(fromDays: days)
        let (year, month, day) = (Int64(y), Int64(m), Int64(d))
        pad(year, 4); bytes.append(UInt8(ascii: "-"))
        pad(month, 2); bytes.append(UInt8(ascii: "-"))
        pad(day, 2); bytes.append(UInt8(ascii: "T"))
        pad(secondOfDay / 3600, 2); bytes.append(UInt8(ascii: ":"))
        pad(secondOfDay / 60 % 60, 2); bytes.append(UInt8(ascii: ":"))
        pad(secondOfDay % 60, 2)
        if milliseconds { bytes.append(UInt8(ascii: ".")); pad(millis, 3) }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// A non-negative number with leading zeros to `width` digits.
    private mutating func pad(_ v: Int64, _ width: Int) {
        var digits = 1, rest = v
        while rest >= 10 { rest /= 10; digits += 1 }
        if digits < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits)) }
        unsigned(UInt64(max(0, v)))
    }

    /// XML character data or attribute text: the five special characters escaped, and
    /// characters XML 1.0 forbids (C0 controls other than tab, newline, return) dropped.
    mutating func xmlEscaped(_ s: String) {
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "&"): text("&amp;")
            case UInt8(ascii: "<"): text("&lt;")
            case UInt8(ascii: ">"): text("&gt;")
            case UInt8(ascii: "\""): text("&quot;")
            case UInt8(ascii: "'"): text("&apos;")
            case 0x09, 0x0A, 0x0D: bytes.append(b)
            case 0..<0x20: break
            default: bytes.append(b)
            }
        }
    }
}
