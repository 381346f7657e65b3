/// Serialises `JSONValue` as compact UTF-8 JSON (no whitespace, no trailing newline).
/// Non-finite doubles, which JSON cannot express, are written as null.
public enum JSONWriter {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        // A live sample's line is a few hundred bytes: one allocation instead of a doubling series.
        out.reserveCapacity(512)
        write(value, into: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.appendLiteral("null")
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): appendInteger(i, into: &out)
        case .double(let d): appendNumber(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (n, entry) in object.entries.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                writeString(entry.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(entry.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A double as JSON. A whole number is written as a JSON integer ("72", not "72.0"):
    /// clients in typed languages decode heart rates, battery levels and counts into integer
    /// types. Below 2^53 every integer is exact in a double, so nothing is lost; others take
    /// Swift's shortest round-trip form, which is valid JSON ("0.5", "1e+16", "5e-324");
    /// non-finite values, which JSON cannot hold, as null.
    public static func appendNumber(_ d: Double, into out: inout [UInt8]) {
        if d.isFinite, d == d.rounded(.towardZero), abs(d) < 9_007_199_254_740_992 {
            appendInteger(Int64(d), into: &out)
        } else if d.isFinite {
            var text = String(d)
            text.withUTF8 { out.append(contentsOf: $0) }
        } else {
            out.appendLiteral("null")
        }
    }

    /// Decimal digits of `v`, with a minus sign when negative (`String(v)`'s form), without
    /// a `String` in between (the live encoder writes several per sample).
    public static func appendInteger(_ v: Int64, into out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var rest = v.magnitude
            var i = 20
            repeat {
                i -= 1
                buf[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if v < 0 {
                i -= 1
                buf[i] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<20]))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Runs of bytes that need no escape are copied whole: names, units and addresses almost
    /// never have one, and a byte-at-a-time loop was the largest single cost of encoding a live
    /// sample (docs/benchmarks.md, "Instructions, the floor of a wake-up …").
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var start = 0
            for i in bytes.indices {
                let b = bytes[i]
                guard b < 0x20 || b == 0x22 || b == 0x5C else { continue }
                if start < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i])) }
                appendEscape(b, into: &out)
                start = i + 1
            }
            if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ b: UInt8, into out: inout [UInt8]) {
        switch b {
        case 0x22: out.append(contentsOf: [0x5C, 0x22])
        case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]])
        }
    }
}
