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
        var fields: [(String, String)] = [
            ("t", quote(Timestamp.string(event.time.wall))),
            // Microseconds are plenty for receive times and survive any JSON reader's doubles.
            ("mono", micros(event.time.monotonic)),
            ("device", quote(event.address)),
        ]
        switch event {
        case let .notification(_, c, value, _), let .read(_, c, value, _):
            fields.append(("event", quote(event.isRead ? "read" : "notification")))
            fields.append(("characteristic", quote(hex16(c.rawValue))))
            fields.append(("hex", quote(value.map(hex8).joined())))
        case let .linkUp(_, name, _):
            fields.append(("event", quote("linkUp")))
            fields.append(("name", quote(name)))
        case let .linkDown(_, reason, _):
            fields.append(("event", quote("linkDown")))
            fields.append(("reason", quote(reason)))
        }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
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
        guard seconds.isFinite else { return "0.000000" }
        let total = Int64((abs(seconds) * 1_000_000).rounded())
        let fraction = String(total % 1_000_000)
        return (seconds < 0 && total > 0 ? "-" : "") + String(total / 1_000_000) + "."
            + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where ch.value < 0x20: out += "\\u00" + hex8(UInt8(ch.value))
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "\""
    }

    static func hex8(_ b: UInt8) -> String { (b < 16 ? "0" : "") + String(b, radix: 16) }
    static func hex16(_ v: UInt16) -> String { hex8(UInt8(v >> 8)) + hex8(UInt8(v & 0xFF)) }

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
    static func string(_ ms: Millis) -> String { RFC3339Timestamp.format(millisecondsSinceEpoch: ms) }
    static func parse(_ s: String) -> Millis? { try? RFC3339Timestamp.parse(s) }
}
