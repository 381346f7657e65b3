import StrapWire

/// How workout figures read on a terminal. Every function takes the wire's units (seconds,
/// metres, m/s, bpm, kcal) and never invents a value: absent stays absent ("-").
enum TextFormat {
    /// `0:25`, `12:05`, `1:02:09`: whole seconds, rounded.
    static func duration(_ seconds: Double) -> String {
        let total = max(0, Int((seconds).rounded()))
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        let mm = h > 0 && m < 10 ? "0\(m)" : "\(m)"
        let ss = s < 10 ? "0\(s)" : "\(s)"
        return h > 0 ? "\(h):\(mm):\(ss)" : "\(mm):\(ss)"
    }

    /// `850 m` below a kilometre, `2.13 km` above.
    static func distance(_ metres: Double) -> String {
        metres < 1000 ? "\(Int(metres.rounded())) m" : "\(fixed(metres / 1000, 2)) km"
    }

    /// m/s as km/h, one decimal.
    static func speed(_ metresPerSecond: Double) -> String { "\(fixed(metresPerSecond * 3.6, 1)) km/h" }

    static func bpm(_ v: Double) -> String { "\(Int(v.rounded())) bpm" }

    static func kcal(_ v: Double) -> String { "\(fixed(v, 1)) kcal" }

    /// Cycling cadence is crank revolutions per minute; running cadence is what the foot pod
    /// sends (docs/workouts.md), so it is shown per minute without naming steps or strides.
    static func cadenceUnit(activity: String) -> String {
        ["running", "walking", "hiking", "wheelchairRunPace", "wheelchairWalkPace", "stairClimbing"].contains(activity) ? "/min" : "rpm"
    }

    /// `v` with `places` decimals (no scientific notation for the magnitudes shown here).
    static func fixed(_ v: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(v) * scale).rounded()
        let whole = Int64(scaled / scale)
        let fraction = Int64(scaled) - whole * Int64(scale)
        let sign = v < 0 && scaled > 0 ? "-" : ""
        guard places > 0 else { return sign + String(whole) }
        let digits = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: places - digits.count) + digits
    }

    /// `72.5`, `60`, `2.11`: as samples read (at most two decimals).
    static func number(_ v: Double) -> String { SampleText.number(v) }

    /// `16:00:05` from an RFC 3339 time (UTC, as the daemon writes it).
    static func clock(_ rfc3339: String?) -> String {
        guard let t = rfc3339, let ms = try? RFC3339Timestamp.parse(t) else { return "-" }
        let s = RFC3339Timestamp.format(millisecondsSinceEpoch: ms)
        return String(s.dropFirst(11).prefix(8))
    }

    /// `2026-12-01 16:00:05` from an RFC 3339 time (UTC).
    static func dateTime(_ rfc3339: String?) -> String {
        guard let t = rfc3339, let ms = try? RFC3339Timestamp.parse(t) else { return "-" }
        let s = RFC3339Timestamp.format(millisecondsSinceEpoch: ms)
        return String(s.prefix(10)) + " " + String(s.dropFirst(11).prefix(8))
    }

    /// `key=value` pairs in key order.
    static func metadata(_ m: JSONObject?) -> String {
        guard let m else { return "" }
        return m.entries.sorted { $0.key < $1.key }.map { "\($0.key)=\(DaemonCommands.plain($0.value))" }.joined(separator: " ")
    }

    /// The first 8 characters of a UUID: enough for people, and a prefix strapctl resolves.
    static func shortID(_ id: String) -> String { String(id.prefix(8)) }

    /// Rows as columns two spaces apart (the last column unpadded), as `devices` prints them.
    static func table(_ rows: [[String]]) -> [String] {
        guard let first = rows.first else { return [] }
        var widths = first.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            var line = ""
            for (i, cell) in row.enumerated() {
                line += i == row.count - 1 ? cell : cell.padding(widths[i] + 2)
            }
            return line
        }
    }
}
