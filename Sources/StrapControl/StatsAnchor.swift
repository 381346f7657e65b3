import FoundationEssentials
// Named time zones come from ICU: with FoundationEssentials alone every zone but GMT
// resolves to nil (the daemon's StatisticsOps.swift does the same).
import FoundationInternationalization
import StrapWire

/// The default `anchorDate` of `stats --interval`. strapd counts intervals from `from` when
/// no anchor is given, so `--from -1h` at 10:07:31.123 gave 10:07:31.123, 10:22:31.123, ...
/// Like HealthKit's anchor-date habit, strapctl anchors on the clock instead: intervals that
/// divide an hour start on the hour, those that divide a day at midnight, days at midnight,
/// weeks on Monday at midnight, months on the 1st, all in the zone of `--tz` (else local).
enum StatsAnchor {
    /// `--tz`'s zone, or the local one.
    static func zone(_ name: String?) throws(UsageError) -> TimeZone {
        guard let name else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw UsageError(message: "--tz: unknown time zone \"\(name)\" (an IANA name like Europe/Berlin or UTC)")
        }
        return zone
    }

    /// The clock boundary at or before `from` that `interval` (`{"minutes": 15}`, as
    /// `SampleCommands.intervalJSON` makes it) lines up with.
    static func aligned(_ interval: JSONObject, from: Int64, zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        calendar.firstWeekday = 2  // Monday (ISO 8601)
        let date = Date(timeIntervalSince1970: Double(from) / 1000)
        let n = interval.entries.first.flatMap { e -> Int64? in if case .int(let i) = e.value { i } else { nil } } ?? 1
        let unit: Calendar.Component = switch interval.entries.first?.key {
        case "minutes": 60 % n == 0 ? .hour : 1440 % n == 0 ? .day : .minute
        case "hours": n == 1 ? .hour : 24 % n == 0 ? .day : .hour
        case "weeks": .weekOfYear
        case "months": .month
        default: .day
        }
        guard let start = calendar.dateInterval(of: unit, for: date)?.start else { return from }
        return Int64((start.timeIntervalSince1970 * 1000).rounded())
    }
}
