import StrapModel

/// Characters for terminals: braille dots and box drawing, or plain ASCII for pipes and
/// terminals without UTF-8.
public enum ChartStyle: String, Sendable, Codable, CaseIterable {
    case unicode, ascii
}

public enum ChartError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidSize(String)
    case invalidZones(String)

    public var description: String {
        switch self {
        case .invalidSize(let why): "invalid chart size: \(why)"
        case .invalidZones(let why): "invalid heart-rate zones: \(why)"
        }
    }
}

/// Heart-rate pictures for a terminal (docs/export.md "Charts"): the curve over time with
/// its y axis, laps and pauses marked, and a bar per zone. Pure: values in, a `String` out
/// (lines end with "\n"; no colours, no escape sequences).
public struct WorkoutChart: Sendable {
    /// Columns of the whole picture, axis labels included.
    public var width: Int
    /// Rows of the plot area (axis and labels come on top of these).
    public var height: Int
    public var style: ChartStyle

    static let gutter = 5   // "172 ┤"

    public init(width: Int = 72, height: Int = 10, style: ChartStyle = .unicode) {
        self.width = width
        self.height = height
        self.style = style
    }

    /// The curve of `points` (time, bpm) over `start..<end`. Each character column shows the
    /// mean of the points falling into it (braille: two sub-columns and four dot rows per
    /// character), joined to its neighbour; columns without points stay empty. Below the axis:
    /// lap numbers where laps start, shading under pauses, then elapsed-time labels.
    public func heartRate<S: Sequence>(_ points: S, start: Millis, end: Millis, pauses: [Range<Millis>] = [],
                                       lapStarts: [Millis] = []) throws(ChartError) -> String where S.Element == (Millis, Double) {
        let columns = width - Self.gutter
        guard columns >= 10, height >= 2 else { throw .invalidSize("need width ≥ \(Self.gutter + 10) and height ≥ 2, got \(width)×\(height)") }
        guard end > start else { throw .invalidSize("empty time range") }
        let perColumn = style == .unicode ? 2 : 1, perRow = style == .unicode ? 4 : 1
        let bins = columns * perColumn, dots = height * perRow
        let span = Double(end - start)

        var sums = [Double](repeating: 0, count: bins), counts = [Int](repeating: 0, count: bins)
        for (t, bpm) in points where t >= start && t < end && bpm > 0 && bpm.isFinite {
            let b = min(bins - 1, Int(Double(t - start) / span * Double(bins)))
            sums[b] += bpm
            counts[b] += 1
        }
        let means = (0..<bins).map { counts[$0] > 0 ? sums[$0] / Double(counts[$0]) : nil }
        let present = means.compactMap { $0 }
        var out = ""
        guard let low = present.min(), let high = present.max() else {
            out += "heart rate: no data\n"
            return out
        }
        var lo = (low / 10).rounded(.down) * 10, hi = (high / 10).rounded(.up) * 10
        if hi - lo < 10 { hi = lo + 10 }
        if lo < 0 { lo = 0 }
        func dotRow(_ v: Double) -> Int { Int(((hi - v) / (hi - lo) * Double(dots - 1)).rounded()) }

        var grid = [[Bool]](repeating: [Bool](repeating: false, count: bins), count: dots)
        var previous: Int?
        for (x, mean) in means.enumerated() {
            guard let mean else { previous = nil; continue }
            let y = dotRow(mean)
            let from = previous.map { $0 < y ? $0 + 1 : ($0 > y ? $0 - 1 : y) } ?? y
            for r in min(from, y)...max(from, y) { grid[r][x] = true }
            previous = y
        }

        out += "heart rate (bpm)  min \(Int(low.rounded()))  max \(Int(high.rounded()))\n"
        // Labels on the top and bottom rows and about every third row between, evenly.
        let steps = max(1, (height - 1) / 3)
        let labelledRows = Set((0...steps).map { Int((Double($0 * (height - 1)) / Double(steps)).rounded()) })
        for row in 0..<height {
            let labelled = labelledRows.contains(row)
            if labelled {
                let value = hi - (Double(row * perRow) + Double(perRow - 1) / 2) / Double(dots - 1) * (hi - lo)
                out += Self.leftPad(String(Int(value.rounded())), 3) + (style == .unicode ? " ┤" : " +")
            } else {
                out += style == .unicode ? "    │" : "    |"
            }
            for column in 0..<columns {
                out += cell(grid, row: row, column: column, perRow: perRow, perColumn: perColumn)
            }
            out += "\n"
        }

        // Axis with lap boundaries, then lap numbers and pause shading, then times.
        let column: (Millis) -> Int = { min(columns - 1, max(0, Int(Double($0 - start) / span * Double(columns)))) }
        var axis = [Character](repeating: style == .unicode ? "─" : "-", count: columns)
        var marks = [Character](repeating: " ", count: columns)
        for c in 0..<columns {
            let mid = start + Millis((Double(c) + 0.5) / Double(columns) * span)
            if pauses.contains(where: { $0.contains(mid) }) { marks[c] = style == .unicode ? "░" : "=" }
        }
        for (i, lapStart) in lapStarts.sorted().enumerated() where lapStart >= start && lapStart < end {
            let c = column(lapStart)
            if c > 0 { axis[c] = style == .unicode ? "┴" : "+" }
            for (k, ch) in String(i + 1).enumerated() where c + k < columns { marks[c + k] = ch }
        }
        out += (style == .unicode ? "    └" : "    +") + String(axis) + "\n"
        if marks.contains(where: { $0 != " " }) { out += "     " + Self.trimmed(String(marks)) + "\n" }
        out += "     " + Self.trimmed(timeLabels(columns: columns, span: end - start)) + "\n"
        return out
    }

    /// The curve of a workout's heart rates (`Sample.isHeartRateReading`), its pauses and laps.
    public func heartRate<S: Sequence>(workout: Workout, samples: S) throws(ChartError) -> String where S.Element == Sample {
        let devices = workout.deviceIDs.isEmpty ? nil : Set(workout.deviceIDs)
        let points = samples.lazy.filter {
            $0.isHeartRateReading && (devices?.contains($0.device.id) ?? true)
        }.map { ($0.start, $0.value) }
        let pauses = workout.end > workout.start ? ExportSchedule.timer(workout).pauses : []
        return try heartRate(points, start: workout.start, end: workout.end, pauses: pauses,
                             lapStarts: workout.laps.map(\.start))
    }

    /// A bar per zone (below zone 1, Z1…Z5), scaled to the longest, with the zone's bpm range,
    /// time and share; `seconds` holds the time in each (`HeartRateZones.count` values).
    public func zones(_ zones: HeartRateZones, seconds: [Double]) throws(ChartError) -> String {
        guard seconds.count == HeartRateZones.count else {
            throw .invalidZones("\(HeartRateZones.count) zones, got \(seconds.count) times")
        }
        guard seconds.allSatisfy({ $0 >= 0 && $0.isFinite }) else { throw .invalidZones("times must be finite and non-negative") }
        let names = ["below Z1"] + (1...5).map { "Z\($0)" }
        let nameWidth = names.map(\.count).max()! + 2
        let ranges = zones.labels
        let rangeWidth = ranges.map(\.count).max() ?? 0
        let times = seconds.map(Self.duration)
        let timeWidth = times.map(\.count).max() ?? 0
        let fixed = nameWidth + rangeWidth + 2 + 2 + timeWidth + 6      // name range "  " bar "  " time "  100%"
        let barWidth = width - fixed
        guard barWidth >= 5 else { throw .invalidSize("width \(width) leaves no room for the bars") }
        let longest = seconds.max() ?? 0, total = seconds.reduce(0, +)
        var out = ""
        for (i, t) in seconds.enumerated() {
            let bar = Self.rightPad(self.bar(longest > 0 ? t / longest * Double(barWidth) : 0), barWidth)
            let share = total > 0 ? Int((t / total * 100).rounded()) : 0
            out += Self.rightPad(names[i], nameWidth) + Self.rightPad(ranges[i], rangeWidth) + "  " + bar + "  "
                + Self.leftPad(times[i], timeWidth) + Self.leftPad("\(share)%", 6) + "\n"
        }
        return out
    }

    // MARK: pieces

    /// Braille: dots 1-2-3-7 down the left sub-column, 4-5-6-8 down the right (U+2800 + bits).
    private func cell(_ grid: [[Bool]], row: Int, column: Int, perRow: Int, perColumn: Int) -> String {
        if style == .ascii { return grid[row][column] ? "*" : " " }
        let bits: [[UInt32]] = [[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]]
        var value: UInt32 = 0
        for dy in 0..<perRow {
            for dx in 0..<perColumn where grid[row * perRow + dy][column * perColumn + dx] { value |= bits[dy][dx] }
        }
        return value == 0 ? " " : String(Character(Unicode.Scalar(0x2800 + value)!))
    }

    private func bar(_ length: Double) -> String {
        if style == .ascii { return String(repeating: "#", count: Int(length.rounded())) }
        let eighths = Int((length * 8).rounded())
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8]
        return String(repeating: "█", count: eighths / 8) + partial
    }

    /// Elapsed-time labels at round intervals (10 s … 12 h), as many as fit with a gap of 3.
    private func timeLabels(columns: Int, span: Millis) -> String {
        var line = [Character](repeating: " ", count: columns)
        let width = Self.elapsed(span, span: span).count + 3
        let nice: [Millis] = [10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200].map { $0 * 1000 }
        let step = nice.first { Double($0) / Double(span) * Double(columns) >= Double(width) } ?? span
        var t: Millis = 0
        while t < span {
            let c = Int((Double(t) / Double(span) * Double(columns)).rounded())
            let label = Self.elapsed(t, span: span)
            guard c + label.count <= columns else { break }
            for (k, ch) in label.enumerated() { line[c + k] = ch }
            t += step
        }
        return String(line)
    }

    /// Elapsed time as m:ss under an hour, else h:mm.
    static func elapsed(_ ms: Millis, span: Millis) -> String {
        let s = ms / 1000
        return span < 3_600_000 ? "\(s / 60):" + twoDigits(s % 60) : "\(s / 3600):" + twoDigits(s / 60 % 60)
    }

    /// h:mm:ss.
    static func duration(_ seconds: Double) -> String {
        let s = Int64(seconds.rounded())
        return "\(s / 3600):" + twoDigits(s / 60 % 60) + ":" + twoDigits(s % 60)
    }

    static func twoDigits(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    static func leftPad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - s.count)) + s }
    static func rightPad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.count)) }
    static func trimmed(_ s: String) -> String {
        var t = Substring(s)
        while t.last == " " { t.removeLast() }
        return String(t)
    }
}
