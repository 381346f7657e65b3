import FoundationEssentials
import StrapGATT
import StrapIngest
import StrapModel
import StrapWire

/// `--record` / `--replay` capture: one JSON object per line (docs/capture-format.md).
///
///     {"t":"2026-11-29T20:00:01.250Z","mono":1.25,"device":"5E:1A:00:00:48:00","event":"notification","characteristic":"2a37","hex":"164a3e03"}
///     {"t":"…","mono":0.0,"device":"…","event":"linkUp","name":"Polar H10"}
///     {"t":"…","mono":9.5,"device":"…","event":"linkDown","reason":"connection timeout (0x08)"}
///
/// `mono` is seconds on the recorder's monotonic clock; replay keeps its spacing.
public enum CaptureFormat {
    public enum Error: Swift.Error, CustomStringConvertible, Equatable {
        case malformed(line: Int, reason: String)
        public var description: String {
            switch self { case let .malformed(line, reason): "capture line \(line): \(reason)" }
        }
    }

    public static func line(_ event: SensorEvent) -> String {
        var bytes: [UInt8] = []
        append(event, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The line's bytes, without the newline, appended to `out`: `--record` writes one per
    /// notification on the ingest thread, and building it from strings (fields, quoting,
    /// joining) was an eighth of strapd's CPU in the lab's profile (docs/benchmarks.md).
    public static func append(_ event: SensorEvent, into out: inout [UInt8]) {
        out.appendLiteral(#"{"t":""#)
        RFC3339Timestamp.append(millisecondsSinceEpoch: event.time.wall, into: &out)
        // Microseconds are plenty for receive times and survive any JSON reader's doubles.
        out.appendLiteral(#"","mono":"#)
        appendMicros(event.time.monotonic, into: &out)
        out.appendLiteral(#","device":"#)
        appendQuoted(event.address, into: &out)
        switch event {
        case let .notification(_, c, value, _), let .read(_, c, value, _):
            out.append(contentsOf: (event.isRead ? #","event":"read","characteristic":""# : #","event":"notification","characteristic":""#).utf8)
            appendHex(UInt8(c.rawValue >> 8), into: &out)
            appendHex(UInt8(c.rawValue & 0xFF), into: &out)
            out.appendLiteral(#"","hex":""#)
            for b in value { appendHex(b, into: &out) }
            out.append(UInt8(ascii: "\""))
        case let .linkUp(_, name, _):
            out.appendLiteral(#","event":"linkUp","name":"#)
            appendQuoted(name, into: &out)
        case let .linkDown(_, reason, _):
            out.appendLiteral(#","event":"linkDown","reason":"#)
            appendQuoted(reason, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    public static func parse(_ text: Substring, lineNumber: Int) throws(Error) -> SensorEvent {
        func fail(_ reason: String) -> Error { .malformed(line: lineNumber, reason: reason) }
        guard case let .object(object)? = try? JSONParser.parse(text.utf8) else { throw fail("not a JSON object") }
        func string(_ key: String) -> String? { if case let .string(s)? = object[key] { s } else { nil } }
        guard let device = string("device"), !device.isEmpty else { throw fail("missing device") }
        let mono: Double
        switch object["mono"] {
        case let .double(d)? where d.isFinite: mono = d
        case let .int(i)?: mono = Double(i)
        default: throw fail("missing mono")
        }
        guard let t = string("t"), let wall = Timestamp.parse(t) else { throw fail("missing or bad t") }
        let time = ReceiveTime(wall: wall, monotonic: mono)
        switch string("event") {
        case "notification", "read":
            guard let c = string("characteristic").flatMap(GATTCharacteristic.init(parsing:)) else {
                throw fail("unknown characteristic")
            }
            guard let hex = string("hex"), let bytes = bytes(hex) else { throw fail("bad hex") }
            return string("event") == "read" ? .read(device, c, bytes, time) : .notification(device, c, bytes, time)
        case "linkUp": return .linkUp(device, name: string("name") ?? device, time)
        case "linkDown": return .linkDown(device, reason: string("reason") ?? "", time)
        default: throw fail("unknown event")
        }
    }

    /// Seconds with six decimals, like printf's %.6f (which needs Foundation's String(format:)).
    static func micros(_ seconds: Double) -> String {
        var out: [UInt8] = []
        appendMicros(seconds, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendMicros(_ seconds: Double, into out: inout [UInt8]) {
        guard seconds.isFinite else { out.appendLiteral("0.000000"); return }
        let total = Int64((abs(seconds) * 1_000_000).rounded())
        if seconds < 0 && total > 0 { out.append(UInt8(ascii: "-")) }
        appendDecimal(UInt64(total / 1_000_000), into: &out)
        out.append(UInt8(ascii: "."))
        var fraction = total % 1_000_000
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { d in
            for i in stride(from: 5, through: 0, by: -1) {
                d[i] = UInt8(ascii: "0") + UInt8(fraction % 10)
                fraction /= 10
            }
            out.append(contentsOf: d)
        }
    }

    private static func appendDecimal(_ value: UInt64, into out: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, into: &out) }
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// JSON string with `"`, `\` and control characters (as `\u00XX`) escaped.
    static func appendQuoted(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Addresses and names almost never need an escape: copied whole.
            guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return out.append(contentsOf: bytes)
            }
            for b in bytes {
                switch b {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0..<0x20:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    appendHex(b, into: &out)
                default: out.append(b)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func appendHex(_ b: UInt8, into out: inout [UInt8]) {
        out.append(hexDigits[Int(b >> 4)])
        out.append(hexDigits[Int(b & 0xF)])
    }

    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = Character(UnicodeScalar(digits[i])).hexDigitValue,
                  let lo = Character(UnicodeScalar(digits[i + 1])).hexDigitValue else { return nil }
            out.append(UInt8(hi << 4 | lo))
            i += 2
        }
        return out
    }
}

extension SensorEvent {
    var isRead: Bool { if case .read = self { true } else { false } }
}

/// RFC 3339 UTC with milliseconds (the capture and the socket protocol share the format).
enum Timestamp {
    static func parse(_ s: String) -> Millis? { try? RFC3339Timestamp.parse(s) }
}
