import StrapWire

/// `strapctl workout follow [ID]`: follows `workout.live`. On a terminal a compact status
/// block is redrawn in place and state changes, laps, markers, messages and failed commands
/// are printed above it; piped, every event is one plain line. Ends on `finished` (with the
/// saved workout's summary) or on Ctrl-C, which cancels the stream; the session itself goes on.
enum WorkoutFollow {
    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: [], flags: [])
        let id = try WorkoutCommands.session(a.optionalPositional(), ctx)
        let client = try ctx.connect(timeout: nil)
        let reply = try client.call(["id": .int(1), "op": .string("workout.live"), "session": .string(id)], stream: true)
        let result = try CommandContext.result(of: reply)
        let interrupt = ctx.interrupts.arm()
        let redrawing = ctx.sink.isTerminal && !ctx.json
        var view = WorkoutFollowView(result)
        var drawn = 0
        if ctx.json {
            ctx.sink.print(JSONWriter.string(.object(reply)))
        } else if redrawing {
            drawn = LiveCommand.redraw(view.render(), previous: 0, ctx.sink)
        } else {
            ctx.sink.print(view.headline)
        }
        // A partial line never blocks for long: the daemon writes whole lines.
        client.setTimeout(1)
        var cancelled = false
        while true {
            if !client.hasBufferedLine {
                let ready = DaemonConnection.readable([client.descriptor] + (interrupt.map { [$0] } ?? []), milliseconds: -1)
                if let interrupt, ready.contains(interrupt), !cancelled {
                    // Stop following: the daemon answers `cancelled` and drops the follower.
                    cancelled = true
                    client.cancelStream()
                }
                guard ready.contains(client.descriptor) else { continue }
            }
            let read = Result { () throws(ClientError) -> JSONObject? in try client.readMessage() }
            if case .failure(.timedOut) = read { continue }
            guard let m = try read.get() else { throw ClientError.closed }
            guard let kind = m.string("event"), m["id"] == .int(1) else { continue }
            if kind == "shutdown" { throw ClientError.shuttingDown }
            if ctx.json { ctx.sink.print(JSONWriter.string(.object(m))) }
            let data = m.object("data") ?? JSONObject()
            if kind == "error" { throw DaemonReplyError(code: data.string("code") ?? "internal", message: data.string("message") ?? "follow failed") }
            if kind == "cancelled" {
                if !ctx.json { ctx.sink.print("stopped following \(id) (the session goes on)") }
                return ExitCode.success
            }
            let lines = view.apply(kind, data)
            if !ctx.json {
                if redrawing {
                    // Statistics only redraw the block; other events print their line above it.
                    let above = kind == "statistics" ? [] : lines
                    drawn = redraw(above: above, block: view.render(), previous: drawn, ctx.sink)
                } else {
                    for line in lines { ctx.sink.print(line) }
                }
            }
            if kind == "finished" {
                if !ctx.json, let saved = view.saved {
                    ctx.sink.print("")
                    for line in WorkoutReport.endLines(saved) { ctx.sink.print(line) }
                }
                return ExitCode.success
            }
        }
    }

    /// Prints `above` where the block was, then the block below them.
    static func redraw(above: [String], block: [String], previous: Int, _ sink: OutputSink) -> Int {
        var frame = previous > 0 ? "\u{1B}[\(previous)F" : ""
        for line in above + block { frame += "\u{1B}[2K" + line + "\n" }
        let left = previous - above.count - block.count
        if left > 0 { for _ in 0..<left { frame += "\u{1B}[2K\n" } }
        sink.write(frame)
        return block.count + max(0, left)
    }
}

/// What `workout follow` knows of the session: the latest statistics and state.
struct WorkoutFollowView {
    private(set) var details: WorkoutDetails
    private(set) var saved: WorkoutDetails?
    private var dropped = 0

    /// From `workout.live`'s `ok` result (the session as `workout.get` shows it).
    init(_ result: JSONObject) {
        details = WorkoutDetails(sessionInfo: result)
    }

    var headline: String {
        "following \(details.sessionID ?? "?"): \(details.activityType), \(details.locationType), "
            + "athlete \(details.athlete ?? "default"), \(details.state ?? "?")"
    }

    /// Applies one event; returns the lines describing it (piped output; on a terminal the
    /// non-statistics ones are printed above the block).
    mutating func apply(_ kind: String, _ data: JSONObject) -> [String] {
        switch kind {
        case "statistics":
            let s = WorkoutDetails(statistics: data)
            details.figures = s.figures
            details.laps = s.laps
            details.zones = s.zones ?? details.zones
            details.zonesReason = s.zonesReason
            details.energySource = s.energySource
            details.energyReason = s.energyReason
            if let state = s.state { details.state = state }
            return [statisticsLine]
        case "state":
            let to = data.string("to") ?? "?"
            details.state = to
            return ["\(TextFormat.clock(data.string("time"))) \(data.string("from") ?? "?") → \(to)"]
        case "event":
            let kind = data.string("kind") ?? "event"
            let meta = TextFormat.metadata(data.object("metadata"))
            details.events.append(.init(kind: kind, time: data.string("time"), metadata: data.object("metadata")))
            // The session's events came with the `ok`, so the count holds for a late follower.
            let laps = details.events.filter { $0.kind == "lap" }.count
            let what = kind == "lap" ? "lap (lap \(laps + 1) begins)" : kind
            return ["\(TextFormat.clock(data.string("time"))) \(what)" + (meta.isEmpty ? "" : " " + meta)]
        case "message":
            let payload = data["payload"].map { JSONWriter.string($0) } ?? "null"
            return ["\(TextFormat.clock(data.string("time"))) message \(payload)"]
        case "saved":
            var w = WorkoutDetails(saved: data.object("workout") ?? JSONObject())
            w.state = "ended"
            saved = w
            return ["saved as workout \(w.workoutUUID ?? "?")"]
        case "discarded":
            return ["\(TextFormat.clock(data.string("time"))) discarded (nothing saved)"]
        case "failed":
            // Not the end: the session goes on in its state, and the command may be sent again.
            let operation = data.string("operation") ?? "a command"
            let state = data.string("state") ?? "?"
            details.state = state
            return ["\(TextFormat.clock(data.string("time"))) \(operation) failed: \(data.string("code") ?? "internal"): "
                    + "\(data.string("message") ?? "no reason given") (the session goes on, \(state))"]
        case "dropped":
            let n = Int(data.int("count") ?? 0)
            dropped += n
            return ["(\(n) statistics updates missed: output too slow)"]
        default:
            return []
        }
    }

    var zoneNow: String? {
        guard let hr = details.figures["heartRateMostRecent"], let z = details.zone(of: hr) else { return nil }
        return z == 0 ? "below zone 1" : "zone \(z)"
    }

    /// `0:25 running  HR 132 (avg 120, max 151)  zone 3  energy …  2.13 km  29.4 km/h  88 rpm  lap 2`.
    var statisticsLine: String {
        ([TextFormat.duration(details.figures["elapsedTime"] ?? 0), details.state ?? "?"] + figureParts(compact: true))
            .joined(separator: "  ")
    }

    private func figureParts(compact: Bool) -> [String] {
        let f = details.figures
        var parts: [String] = []
        if let now = f["heartRateMostRecent"] {
            var hr = "HR \(Int(now.rounded()))"
            let stats = [f["heartRateAverage"].map { "avg \(Int($0.rounded()))" }, f["heartRateMaximum"].map { "max \(Int($0.rounded()))" }]
            hr += " (" + stats.compactMap { $0 }.joined(separator: ", ") + ") bpm"
            parts.append(hr)
        }
        if let zone = zoneNow { parts.append(zone) }
        if let kcal = f["activeEnergy"] { parts.append("energy " + TextFormat.kcal(kcal)) }
        if let m = f["distance"] { parts.append(TextFormat.distance(m)) }
        if let v = f["speedMostRecent"] { parts.append(TextFormat.speed(v)) }
        if let c = f["cadenceMostRecent"] { parts.append("\(Int(c.rounded())) \(TextFormat.cadenceUnit(activity: details.activityType))") }
        if compact, let lap = details.laps.last { parts.append("lap \(lap.index)") }
        return parts
    }

    /// The terminal block.
    func render() -> [String] {
        let d = details
        var lines = ["\(d.activityType), \(d.locationType) · athlete \(d.athlete ?? "default") · session "
                     + "\(TextFormat.shortID(d.sessionID ?? "?")) · \(d.state ?? "?")"]
        let f = d.figures
        var first = ["elapsed \(TextFormat.duration(f["elapsedTime"] ?? 0))"]
        if let now = f["heartRateMostRecent"] { first.append("HR \(TextFormat.bpm(now))") }
        if let avg = f["heartRateAverage"] { first.append("avg \(Int(avg.rounded()))") }
        if let max = f["heartRateMaximum"] { first.append("max \(Int(max.rounded()))") }
        if let zone = zoneNow { first.append(zone) }
        lines.append("  " + first.joined(separator: "  "))
        var second: [String] = []
        second.append("energy " + (f["activeEnergy"].map(TextFormat.kcal) ?? "unknown"))
        if let m = f["distance"] { second.append("distance \(TextFormat.distance(m))") }
        if let v = f["speedMostRecent"] { second.append("speed \(TextFormat.speed(v))") }
        if let c = f["cadenceMostRecent"] { second.append("cadence \(Int(c.rounded())) \(TextFormat.cadenceUnit(activity: d.activityType))") }
        lines.append("  " + second.joined(separator: "  "))
        if let lap = d.laps.last {
            lines.append("  lap \(lap.index): " + WorkoutCommands.lapFigures(lap, activity: d.activityType))
        }
        if dropped > 0 { lines.append("  (\(dropped) statistics updates missed)") }
        return lines
    }
}
