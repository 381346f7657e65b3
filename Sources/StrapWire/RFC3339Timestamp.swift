/// RFC 3339 timestamps as the protocol writes them: UTC, millisecond precision,
/// `2026-11-29T20:59:41.123Z`. Time is carried as milliseconds since the Unix epoch
/// (`Int64`), which is what the store keeps; conversion is integer arithmetic
/// (Hinnant's civil-date algorithms), with no DateFormatter, locale or allocation beyond
/// the result string on the hot path.
public enum RFC3339Timestamp {
    /// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: what four year digits allow.
    public static let minimumMilliseconds: Int64 = -62_167_219_200_000
    public static let maximumMilliseconds: Int64 = 253_402_300_799_999

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let text: String
        public let reason: String
        public var description: String { "invalid RFC 3339 time \"\(text)\": \(reason)" }
    }

    /// Formats as UTC with exactly three fraction digits. Values outside the four-digit
    /// year range are clamped to it.
    public static func format(millisecondsSinceEpoch ms: Int64) -> String {
        String(unsafeUninitializedCapacity: length) { buf in
            write(ms, to: buf)
            return length
        }
    }

    /// The same 24 bytes appended to `out`, without a `String` in between (the live and
    /// anchored encoders write two per sample).
    public static func append(millisecondsSinceEpoch ms: Int64, into out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buf in
            write(ms, to: buf)
            out.append(contentsOf: buf)
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`
    private static let length = 24

    private static func write(_ ms: Int64, to buf: UnsafeMutableBufferPointer<UInt8>) {
        write(millisecondsSinceEpoch: ms, to: buf.baseAddress!)
    }

    /// The 24 bytes written at `p`, which must have room for them: the one formatter, which
    /// the live encoder also calls to place two timestamps in one copy. Two digits at a time,
    /// not a digit loop: two of these per live sample were a tenth of its encoding.
    public static func write(millisecondsSinceEpoch ms: Int64, to p: UnsafeMutablePointer<UInt8>) {
        let clamped = min(max(ms, minimumMilliseconds), maximumMilliseconds)
        let (days, msOfDay) = floorDivMod(clamped, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let t = Int(msOfDay)
        two(year / 100, p)
        two(year % 100, p + 2)
        p[4] = UInt8(ascii: "-")
        two(month, p + 5)
        p[7] = UInt8(ascii: "-")
        two(day, p + 8)
        p[10] = UInt8(ascii: "T")
        two(t / 3_600_000, p + 11)
        p[13] = UInt8(ascii: ":")
        two(t / 60_000 % 60, p + 14)
        p[16] = UInt8(ascii: ":")
        two(t / 1000 % 60, p + 17)
        p[19] = UInt8(ascii: ".")
        let milli = t % 1000
        p[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: milli / 100)
        two(milli % 100, p + 21)
        p[23] = UInt8(ascii: "Z")
    }

    /// Two digits of `v` (0...99).
    @inline(__always)
    private static func two(_ v: Int, _ p: UnsafeMutablePointer<UInt8>) {
        p[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v / 10)
        p[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (RFC 3339 §5.6; `t`/`z` and a
    /// space instead of `T` are accepted as the RFC allows). Fractions beyond milliseconds
    /// are truncated. Leap seconds (`:60`) are rejected: the store has no place for them.
    public static func parse(_ text: String) throws(ParseError) -> Int64 {
        let b = Array(text.utf8)
        do {
            func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason) }
            func digits(_ at: Int, _ count: Int) throws(ParseError) -> Int {
                guard at + count <= b.count else { throw fail("too short") }
                var v = 0
                for i in at..<(at + count) {
                    let c = b[i]
                    guard c >= 0x30, c <= 0x39 else { throw fail("digit expected at offset \(i)") }
                    v = v * 10 + Int(c - 0x30)
                }
                return v
            }
            func expect(_ at: Int, _ chars: UInt8...) throws(ParseError) {
                guard at < b.count, chars.contains(b[at]) else { throw fail("'\(Character(Unicode.Scalar(chars[0])))' expected at offset \(at)") }
            }
            let year = try digits(0, 4)
            try expect(4, UInt8(ascii: "-"))
            let month = try digits(5, 2)
            try expect(7, UInt8(ascii: "-"))
            let day = try digits(8, 2)
            try expect(10, UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " "))
            let hour = try digits(11, 2)
            try expect(13, UInt8(ascii: ":"))
            let minute = try digits(14, 2)
            try expect(16, UInt8(ascii: ":"))
            let second = try digits(17, 2)
            guard (1...12).contains(month) else { throw fail("month out of range") }
            guard (1...daysIn(month: month, year: year)).contains(day) else { throw fail("day out of range") }
            guard hour < 24 else { throw fail("hour out of range") }
            guard minute < 60 else { throw fail("minute out of range") }
            guard second < 60 else { throw fail("second out of range (leap seconds are not supported)") }
            var i = 19
            var milli = 0
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                let start = i
                while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                    if i - start < 3 { milli = milli * 10 + Int(b[i] - 0x30) }
                    i += 1
                }
                guard i > start else { throw fail("fraction digits expected") }
                for _ in min(i - start, 3)..<3 { milli *= 10 }
            }
            guard i < b.count else { throw fail("time zone expected") }
            var offsetMinutes = 0
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                i += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                let oh = try digits(i + 1, 2)
                try expect(i + 3, UInt8(ascii: ":"))
                let om = try digits(i + 4, 2)
                guard oh < 24, om < 60 else { throw fail("time zone offset out of range") }
                offsetMinutes = sign * (oh * 60 + om)
                i += 6
            default:
                throw fail("time zone expected at offset \(i)")
            }
            guard i == b.count else { throw fail("unexpected characters after the time zone") }
            let days = Int64(daysFromCivil(year: year, month: month, day: day))
            let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
            return seconds * 1000 + Int64(milli)
        }
    }

    /// Convenience for callers holding seconds as a Double (e.g. `Date.timeIntervalSince1970`).
    public static func format(secondsSinceEpoch seconds: Double) -> String {
        format(millisecondsSinceEpoch: Int64((seconds * 1000).rounded(.down)))
    }

    static func isLeap(_ y: Int) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b
        var r = a % b
        if r < 0 { q -= 1; r += b }
        return (q, r)
    }

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Days since 1970-01-01 → proleptic Gregorian (year, month, day), exact for every day
    /// (Howard Hinnant's `civil_from_days`). The one copy: dates in the model and the exports use it.
    public static func civil(fromDays z64: Int64) -> (year: Int, month: Int, day: Int) {
        let z = Int(z64) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
