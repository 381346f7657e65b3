import StrapExport
import StrapModel
import StrapWire

/// How `workout show` draws its pictures: `auto` is Unicode (braille, block bars) on a UTF-8
/// terminal and ASCII when piped or when the locale is not UTF-8.
enum ChartMode: String, CaseIterable {
    case auto, unicode, ascii, none
}

/// The style and width the charts are drawn in; no style means no charts.
struct ChartSettings {
    var style: ChartStyle?
    var width: Int

    init(style: ChartStyle?, width: Int) {
        self.style = style
        self.width = width
    }

    /// Width: the terminal's (TIOCGWINSZ), else `COLUMNS`, else 80.
    init(_ mode: ChartMode, sink: OutputSink, environment: [String: String]) {
        switch mode {
        case .none: style = nil
        case .unicode: style = .unicode
        case .ascii: style = .ascii
        case .auto: style = sink.isTerminal && Terminal.isUTF8(environment) ? .unicode : .ascii
        }
        width = sink.columns ?? environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 80
    }

    /// Data points the curve can show: one per braille dot column, or per character in ASCII,
    /// right of WorkoutChart's 5-column y axis.
    var bins: Int { max(1, width - 5) * (style == .unicode ? 2 : 1) }
}

/// What a workout's heart-rate chart is drawn from: the span, its pauses and lap starts, and
/// the heart rates (time, bpm) of its devices.
struct HeartRateSpan {
    var start: Int64
    var end: Int64
    var pauses: [Range<Int64>] = []
    var lapStarts: [Int64] = []
    /// The store predicate for the workout's samples: `{"workout": UUID}` once saved, the
    /// session's devices while it is open.
    var predicate: WireJSON?

    /// A saved workout, or an open session up to `now` (its statistics' time).
    init?(_ d: WorkoutDetails, now: Int64?) {
        guard let start = d.start.flatMap({ try? RFC3339Timestamp.parse($0) }),
              let end = d.end.flatMap({ try? RFC3339Timestamp.parse($0) }) ?? now, end > start else { return nil }
        self.start = start
        self.end = end
        if let uuid = d.workoutUUID {
            predicate = .object(["workout": .string(uuid)])
        } else if !d.deviceIDs.isEmpty {
            let devices = d.deviceIDs.map { WireJSON.object(["device": .object(["id": .string($0)])]) }
            predicate = devices.count == 1 ? devices[0] : .object(["or": .array(devices)])
        }
        var pausedSince: Int64?
        for e in d.events {
            guard let t = e.time.flatMap({ try? RFC3339Timestamp.parse($0) }) else { continue }
            if e.kind == "pause", pausedSince == nil { pausedSince = t }
            if e.kind == "resume", let p = pausedSince { if t > p { pauses.append(p..<t) }; pausedSince = nil }
        }
        if let p = pausedSince, end > p { pauses.append(p..<end) }
        lapStarts = d.laps.compactMap { $0.start.flatMap { try? RFC3339Timestamp.parse($0) } }
    }
}

/// The heart-rate chart and zone bars of `workout show`, drawn by StrapExport's `WorkoutChart`
/// (docs/export.md "Charts") from what strapctl fetches over the socket.
enum WorkoutCharts {
    /// A reading stands for up to 5 s after it, as in the exports' timeline and the
    /// statistics' spans (docs/workouts.md): a short workout's curve is joined, a dropout
    /// longer than that stays a gap.
    static let holdMilliseconds: Int64 = 5000
    /// Samples asked for per `samples.query` page: well under the 2 MiB reply limit.
    static let defaultPageSize = 4000

    /// The chart's lines, or one line saying why there is none.
    static func heartRateLines(_ span: HeartRateSpan, _ settings: ChartSettings, _ ctx: CommandContext) -> [String] {
        guard settings.style != nil else { return [] }
        do {
            return try render(try fetch(span, bins: settings.bins, ctx), span, settings)
        } catch let e as DaemonReplyError {
            return ["heart-rate chart unavailable: \(e.message) (\(e.code))"]
        } catch {
            return ["heart-rate chart unavailable: \(error)"]
        }
    }

    /// The curve of `points` (time, bpm) over the span, 10 rows high.
    static func render(_ points: [(Int64, Double)], _ span: HeartRateSpan, _ settings: ChartSettings) throws(ChartError) -> [String] {
        guard let style = settings.style else { return [] }
        let chart = WorkoutChart(width: settings.width, height: 10, style: style)
        return lines(try chart.heartRate(resample(points, span: span, bins: settings.bins), start: span.start, end: span.end,
                                         pauses: span.pauses, lapStarts: span.lapStarts))
    }

    /// The workout's heart rates. Short workouts: the samples themselves, a page of
    /// `samples.query` at a time (a long reply is cut at 2 MiB). When a chart point covers a
    /// minute or more, a `statistics.collection` of averages per such interval instead: the
    /// chart shows no more than that, and a 24-hour workout is then ~150 numbers, not 86,400
    /// samples. Either way only readings count (`{"reading": true}`: not 0, not sent without
    /// skin contact), as in the workout's summary.
    static func fetch(_ span: HeartRateSpan, bins: Int, pageSize: Int = defaultPageSize,
                      _ ctx: CommandContext) throws -> [(Int64, Double)] {
        guard let base = span.predicate else { return [] }
        let counted: WireJSON = .object(["value": .object(["min": .int(1)])])
        let duration = span.end - span.start
        let minutes = duration / Int64(bins) / 60_000
        if minutes >= 1 {
            let r = try ctx.call("statistics.collection", [
                "type": .string("heartRate"), "options": .array([.string("average")]),
                "interval": .object(["minutes": .int(minutes)]), "timeZone": .string("UTC"),
                "from": .string(time(span.start)), "to": .string(time(span.end)), "anchorDate": .string(time(span.start)),
                "predicate": .object(["and": .array([base, counted, .object(["reading": .bool(true)])])]),
            ], echo: false)
            return r.objects("statistics").compactMap { s -> (Int64, Double)? in
                guard (s.int("count") ?? 0) > 0, let average = s.number("average"),
                      let from = s.string("start").flatMap({ try? RFC3339Timestamp.parse($0) }),
                      let to = s.string("end").flatMap({ try? RFC3339Timestamp.parse($0) }) else { return nil }
                // The middle of the part inside the workout (the last interval may run past it).
                let lower = max(from, span.start), upper = min(to, span.end)
                return (lower + (upper - lower) / 2, average)
            }
        }
        var points: [(Int64, Double)] = []
        var cursor = span.start
        var seenAtCursor = Set<String>()
        while cursor < span.end {
            let window: WireJSON = .object(["time": .object(["from": .string(time(cursor)), "to": .string(time(span.end)),
                                                             "strictStartDate": .bool(true)])])
            let r = try ctx.call("samples.query", ["predicate": .object(["and": .array([base, counted, window])]),
                                                   "types": .array([.string("heartRate")]), "limit": .int(Int64(pageSize))],
                                 echo: false)
            let page = r.objects("samples")
            var last = cursor, added = 0, atLast = Set<String>()
            for s in page {
                guard let t = s.string("start").flatMap({ try? RFC3339Timestamp.parse($0) }), let v = s.number("value") else { continue }
                let uuid = s.string("uuid") ?? ""
                if t == cursor && seenAtCursor.contains(uuid) { continue }
                if t > last { last = t; atLast = [] }
                atLast.insert(uuid)
                added += 1
                // `Sample.isHeartRateReading`, as the summary counts: not while the strap
                // reports no skin contact.
                let metadata = s.object("metadata")
                if metadata?.string("contact") == "notDetected" || metadata?.string("quality") == "noReading" { continue }
                points.append((t, v))
            }
            guard r.bool("truncated") == true || page.count >= pageSize, added > 0 else { break }
            // The next page starts at the last instant seen; the samples already read there are skipped.
            seenAtCursor = last == cursor ? seenAtCursor.union(atLast) : atLast
            cursor = last
        }
        return points
    }

    /// One point per chart bin: the mean of the readings in it, else the last reading when it
    /// is at most `holdMilliseconds` older than the bin's middle; nothing otherwise. Bins are
    /// computed as `WorkoutChart` computes them, so each point lands in its own bin.
    static func resample(_ points: [(Int64, Double)], span: HeartRateSpan, bins: Int) -> [(Int64, Double)] {
        let length = Double(span.end - span.start)
        guard length > 0, bins > 0 else { return [] }
        var sums = [Double](repeating: 0, count: bins), counts = [Int](repeating: 0, count: bins)
        var latest = [(Int64, Double)?](repeating: nil, count: bins)
        for (t, v) in points where t >= span.start && t < span.end && v > 0 && v.isFinite {
            let b = min(bins - 1, Int(Double(t - span.start) / length * Double(bins)))
            sums[b] += v
            counts[b] += 1
            if latest[b].map({ t >= $0.0 }) ?? true { latest[b] = (t, v) }
        }
        var out: [(Int64, Double)] = []
        var held: (Int64, Double)?
        for b in 0..<bins {
            let middle = span.start + Int64((Double(b) + 0.5) * length / Double(bins))
            if counts[b] > 0 {
                out.append((middle, sums[b] / Double(counts[b])))
                held = latest[b]
            } else if let (t, v) = held, middle - t <= holdMilliseconds {
                out.append((middle, v))
            }
        }
        return out
    }

    /// A bar per zone, below zone 1 first, from the summary's (or live statistics') time in
    /// zones and bounds in bpm; nil when those are unknown or the width leaves no room.
    static func zoneBars(_ d: WorkoutDetails, _ settings: ChartSettings) -> [String]? {
        guard let style = settings.style, let seconds = d.timeInZones, let bpm = d.zones?.bpm, bpm.count == 6, bpm[0] > 0 else {
            return nil
        }
        let indent = 2
        let chart = WorkoutChart(width: settings.width - indent, height: 2, style: style)
        guard let zones = try? HeartRateZones(bpm: bpm), let text = try? chart.zones(zones, seconds: seconds) else { return nil }
        return lines(text).map { String(repeating: " ", count: indent) + $0 }
    }

    static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).trimmingTrailingSpaces }
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    static func time(_ ms: Int64) -> String { RFC3339Timestamp.format(millisecondsSinceEpoch: ms) }
}
