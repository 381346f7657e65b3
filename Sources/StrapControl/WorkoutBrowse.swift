import StrapWire

/// `workout list` and `workout show`: reading sessions and saved workouts.
enum WorkoutBrowse {
    /// Open sessions (id, athlete, activity, state, elapsed, devices), then saved workouts
    /// (uuid, start, duration, activity, athlete, distance, average heart rate), newest first.
    static func list(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["from", "to", "limit"], flags: [])
        try a.noPositional()
        let now = TimeArgument.nowMilliseconds()
        var params = JSONObject()
        if let from = try a.time("from", now: now) { params["from"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: from)) }
        if let to = try a.time("to", now: now) { params["to"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: to)) }
        if let limit = try a.int("limit") { params["limit"] = .int(Int64(limit)) }
        let r = try ctx.call("workout.list", params)
        if ctx.json { return ExitCode.success }
        for line in listLines(r) { ctx.sink.print(line) }
        return ExitCode.success
    }

    static func listLines(_ r: JSONObject) -> [String] {
        var out: [String] = []
        let open = r.objects("sessions").map { WorkoutDetails(sessionInfo: $0) }.filter { $0.state != "ended" }
        if open.isEmpty {
            out.append("open sessions: none")
        } else {
            out.append("open sessions")
            var rows = [["SESSION", "ATHLETE", "ACTIVITY", "STATE", "ELAPSED", "DEVICES"]]
            for d in open {
                rows.append([d.sessionID ?? "?", d.athlete ?? "default", d.activityType, d.state ?? "?",
                             d.figures["elapsedTime"].map(TextFormat.duration) ?? "-",
                             d.deviceIDs.isEmpty ? "-" : d.deviceIDs.joined(separator: ",")])
            }
            out += TextFormat.table(rows).map { "  " + $0 }
        }
        let saved = r.objects("workouts").map { WorkoutDetails(saved: $0) }
        out.append("")
        if saved.isEmpty {
            out.append("saved workouts: none")
        } else {
            out.append("saved workouts")
            var rows = [["WORKOUT", "START (UTC)", "DURATION", "ACTIVITY", "ATHLETE", "DISTANCE", "AVG HR"]]
            for d in saved {
                rows.append([d.workoutUUID ?? "?", TextFormat.dateTime(d.start),
                             d.figures["elapsedTime"].map(TextFormat.duration) ?? "-", d.activityType, d.athlete ?? "-",
                             d.figures["distance"].map(TextFormat.distance) ?? "-",
                             d.figures["heartRateAverage"].map(TextFormat.bpm) ?? "-"])
            }
            out += TextFormat.table(rows).map { "  " + $0 }
        }
        return out
    }

    /// A session (open or recently ended) or a saved workout: summary, heart-rate chart, laps,
    /// events, zone bars. HRV is the saved workout's; an open session's is left to `workout
    /// hrv`, which reads every beat so far.
    static func show(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["chart"], flags: [])
        let mode = try a.choice("chart", "chart mode", among: Choices.chartModes).flatMap(ChartMode.init(rawValue:)) ?? .auto
        let id = try WorkoutCommands.session(try a.single("workout or session id"), ctx, savedToo: true)
        let r = try ctx.call("workout.get", ["session": .string(id)])
        if ctx.json { return ExitCode.success }
        let d = details(r)
        let settings = ChartSettings(mode, sink: ctx.sink, environment: ctx.environment)
        var chart: [String] = []
        if settings.style != nil {
            let now = r.object("statistics")?.string("time").flatMap { try? RFC3339Timestamp.parse($0) }
            chart = HeartRateSpan(d, now: now).map { WorkoutCharts.heartRateLines($0, settings, ctx) }
                ?? ["heart-rate chart: the session has not started"]
        }
        for line in WorkoutReport.lines(d, chart: chart, zoneBars: WorkoutCharts.zoneBars(d, settings)) { ctx.sink.print(line) }
        return ExitCode.success
    }

    /// `workout.get`'s result: a session with its statistics (and workout once saved), or a
    /// saved workout.
    static func details(_ r: JSONObject) -> WorkoutDetails {
        var d = r.object("session") != nil ? WorkoutDetails(sessionInfo: r) : WorkoutDetails(saved: r.object("workout") ?? JSONObject())
        d.unknownDevices = WorkoutDetails.strings(r["unknownDevices"])
        return d
    }

    /// `workout.get`'s result as text with `chart` between the summary and the tables.
    static func showLines(_ r: JSONObject, chart: [String] = [], zoneBars: [String]? = nil) -> [String] {
        WorkoutReport.lines(details(r), chart: chart, zoneBars: zoneBars)
    }
}
