import FoundationEssentials
import StrapWire

/// A day of the proleptic Gregorian calendar without time or zone (a date of birth), written
/// `YYYY-MM-DD`. Dates of birth are days, not instants: an athlete is a year older on their
/// birthday wherever they are, so no time zone is involved.
public struct CalendarDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Nil unless the day exists (no 2023-02-29, no month 13). Years 1…9999 only: the
    /// `YYYY` form has four digits.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
              day >= 1, day <= CalendarDate.daysIn(month: month, year: year) else { return nil }
        self.year = year; self.month = month; self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(parsing text: String) {
        let u = Array(text.utf8)
        guard u.count == 10, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-") else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard u[i] >= 48 && u[i] <= 57 else { return nil }
                v = v * 10 + Int(u[i] - 48)
            }
            return v
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The UTC day of an instant (the daemon's "today" for validation and ages).
    public init(utcMillis: Millis) {
        (year, month, day) = RFC3339Timestamp.civil(fromDays: utcMillis.floorDiv(86_400_000))
    }

    public static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Completed years from `self` to `date` (the everyday age: a birthday on 29 February
    /// counts from 1 March in common years). Negative when `date` is earlier.
    public func age(on date: CalendarDate) -> Int {
        var years = date.year - year
        if (date.month, date.day) < (month, day) { years -= 1 }
        return years
    }

    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    public var description: String {
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let d = CalendarDate(parsing: text) else {
            let field = decoder.codingPath.last?.stringValue ?? "date"
            throw StrapError.invalidOption("\(field): '\(text)' is not a calendar date (YYYY-MM-DD)")
        }
        self = d
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
