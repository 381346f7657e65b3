import StrapWire

/// `strapctl workout …`: runs workout sessions through `workout.*` (docs/protocol-workouts.md).
/// A command that names a session takes its UUID, any unambiguous beginning of it, or nothing
/// when exactly one session is open.
enum WorkoutCommands {
    static let usage = """
        usage: strapctl [--socket PATH] [--json] workout COMMAND [ARGS...]
          start [--activity TYPE] [--location indoor|outdoor|unknown] [--athlete NAME]
                [--device ADDR]... [--meta KEY=VALUE]... [--plan UUID] [--prepare]
                                  a new session, running (or prepared); prints its id
          start ID                start a prepared session
          pause|resume|stop|end|discard [ID]
          lap|marker [ID] [--meta KEY=VALUE]...
          send [ID] JSON          relay a JSON value to the session's followers
          list [--from TIME] [--to TIME] [--limit N]
                                  open sessions, then saved workouts (newest first)
          show ID [--chart auto|unicode|ascii|none]
                                  a session or saved workout: summary, HRV, heart-rate chart,
                                  laps, events, time in zones
          follow [ID]             the session live until it is saved (Ctrl-C stops following)
          export ID [--format fit|tcx|csv] [-o FILE|DIR|-]
                                  a saved workout as a file (default fit, named
                                  YYYYMMDD-HHMMSS-ACTIVITY.EXT after its start, UTC)
          hrv [ID] | hrv --from TIME --to TIME [--device ADDR]
                                  heart-rate variability of a workout or a time range
        ID is a session's UUID or its first characters (show also takes a saved workout's); it
        may be left out when exactly one session is open. TYPE is a HealthKit activity name
        (running, cycling, walking, rowing, …; default other).
        """

    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        guard let command = args.first else { throw UsageError(message: "workout needs a command") }
        let rest = Array(args.dropFirst())
        switch command {
        case "start": return try start(rest, ctx)
        case "pause", "resume", "stop": return try change(command, rest, ctx)
        case "lap", "marker": return try event(command, rest, ctx)
        case "end": return try end(rest, ctx)
        case "discard": return try discard(rest, ctx)
        case "send": return try send(rest, ctx)
        case "list": return try WorkoutBrowse.list(rest, ctx)
        case "show": return try WorkoutBrowse.show(rest, ctx)
        case "follow": return try WorkoutFollow.run(rest, ctx)
        case "export": return try WorkoutExport.run(rest, ctx)
        case "hrv": return try WorkoutHRV.run(rest, ctx)
        case "help", "--help", "-h":
            ctx.sink.print(usage)
            return ExitCode.success
        default: throw UsageError(message: "unknown workout command '\(command)'")
        }
    }

    // MARK: commands

    static func start(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["activity", "location", "athlete", "device", "meta", "plan"], flags: ["prepare"])
        var params = JSONObject()
        let op: String
        if a.positional.isEmpty {
            params["activityType"] = .string(a.value("activity") ?? "other")
            if let location = a.value("location") { params["locationType"] = .string(location) }
            if let athlete = a.value("athlete") { params["athlete"] = .string(athlete) }
            if let plan = a.value("plan") { params["plan"] = .string(plan) }
            let devices = a.all("device")
            if !devices.isEmpty { params["devices"] = .array(devices.map(WireJSON.string)) }
            let meta = try metadata(a)
            if !meta.isEmpty { params["metadata"] = .object(meta) }
            op = a.flag("prepare") ? "workout.prepare" : "workout.start"
        } else {
            guard a.positional.count == 1 else { throw UsageError(message: "too many arguments") }
            guard args.count == 1 else {
                throw UsageError(message: "start ID starts that prepared session and takes no options")
            }
            params["session"] = .string(try session(a.positional[0], ctx))
            op = "workout.start"
        }
        let r = try ctx.call(op, params)
        if ctx.json { return ExitCode.success }
        let d = WorkoutDetails(sessionInfo: r)
        ctx.sink.print(d.sessionID ?? "?")
        ctx.sink.print(startLine(d))
        let unknown = WorkoutDetails.strings(r["unknownDevices"])
        if !unknown.isEmpty { ctx.sink.print(WorkoutReport.unknownDevicesNote(unknown)) }
        return ExitCode.success
    }

    /// `running: cycling, indoor, athlete default, devices A, B`.
    static func startLine(_ d: WorkoutDetails) -> String {
        let devices = d.deviceIDs.isEmpty ? "no devices (elapsed time only)" : "devices " + d.deviceIDs.joined(separator: ", ")
        return "\(d.state ?? "?"): \(d.activityType), \(d.locationType), athlete \(d.athlete ?? "default"), \(devices)"
    }

    /// pause, resume, stop: `paused 2810…, elapsed 0:20`.
    static func change(_ command: String, _ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: [], flags: [])
        let id = try session(a.optionalPositional(), ctx)
        let r = try ctx.call("workout.\(command)", ["session": .string(id)])
        if !ctx.json {
            let d = WorkoutDetails(sessionInfo: r)
            ctx.sink.print("\(d.state ?? command) \(id), elapsed \(d.figures["elapsedTime"].map(TextFormat.duration) ?? "-")")
        }
        return ExitCode.success
    }

    /// lap: the lap that just ended in one line; marker: where it was set.
    static func event(_ command: String, _ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["meta"], flags: [])
        let meta = try metadata(a)
        let id = try session(a.optionalPositional(), ctx)
        var params: JSONObject = ["session": .string(id)]
        if !meta.isEmpty { params["metadata"] = .object(meta) }
        let r = try ctx.call("workout.\(command)", params)
        if ctx.json { return ExitCode.success }
        let d = WorkoutDetails(sessionInfo: r)
        let elapsed = d.figures["elapsedTime"].map(TextFormat.duration) ?? "-"
        let note = meta.isEmpty ? "" : " (\(TextFormat.metadata(meta)))"
        if command == "lap", d.laps.count >= 2 {
            let ended = d.laps[d.laps.count - 2]
            ctx.sink.print("lap \(ended.index): \(lapFigures(ended, activity: d.activityType))\(note); lap \(ended.index + 1) begins at \(elapsed)")
        } else {
            ctx.sink.print("\(command) at \(elapsed) in \(id)\(note)")
        }
        return ExitCode.success
    }

    /// `0:10, 850 m, avg HR 120 bpm, 3.2 kcal`: what a lap has.
    static func lapFigures(_ lap: WorkoutDetails.Lap, activity: String) -> String {
        let f = lap.figures
        var parts = [f["elapsedTime"].map(TextFormat.duration) ?? "-"]
        if let m = f["distance"] { parts.append(TextFormat.distance(m)) }
        if let hr = f["heartRateAverage"] { parts.append("avg HR \(TextFormat.bpm(hr))") }
        if let kcal = f["activeEnergy"] { parts.append(TextFormat.kcal(kcal)) }
        return parts.joined(separator: ", ")
    }

    /// Ends the session and prints the saved workout.
    static func end(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: [], flags: [])
        let id = try session(a.optionalPositional(), ctx)
        let r = try ctx.call("workout.end", ["session": .string(id)])
        if ctx.json { return ExitCode.success }
        var d = WorkoutDetails(saved: r.object("workout") ?? JSONObject())
        d.state = "ended"
        for line in WorkoutReport.endLines(d) { ctx.sink.print(line) }
        return ExitCode.success
    }

    static func discard(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: [], flags: [])
        let id = try session(a.optionalPositional(), ctx)
        _ = try ctx.call("workout.discard", ["session": .string(id)])
        if !ctx.json { ctx.sink.print("discarded \(id) (nothing saved)") }
        return ExitCode.success
    }

    /// `send [ID] JSON`: the last argument is the payload, any JSON value.
    static func send(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: [], flags: [])
        guard (1...2).contains(a.positional.count) else {
            throw UsageError(message: a.positional.isEmpty ? "send needs a JSON payload" : "too many arguments")
        }
        let text = a.positional[a.positional.count - 1]
        let payload: WireJSON
        do { payload = try JSONParser.parse(Array(text.utf8)) } catch {
            throw UsageError(message: "send: the payload is not JSON (\(error)); quote strings: '\"hello\"'")
        }
        let id = try session(a.positional.count == 2 ? a.positional[0] : nil, ctx)
        _ = try ctx.call("workout.send", ["session": .string(id), "payload": payload])
        if !ctx.json { ctx.sink.print("sent to the followers of \(id)") }
        return ExitCode.success
    }

    // MARK: arguments

    /// `--meta KEY=VALUE`, repeated, as a metadata object.
    static func metadata(_ a: Arguments) throws(UsageError) -> JSONObject {
        var meta = JSONObject()
        for item in a.all("meta") {
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw UsageError(message: "--meta must be KEY=VALUE, got '\(item)'")
            }
            meta[String(item[..<eq])] = .string(String(item[item.index(after: eq)...]))
        }
        return meta
    }

    /// Whether `text` is a whole UUID (8-4-4-4-12 hex digits).
    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// The session `given` names, or the only open one. With `savedToo`, saved workouts are
    /// candidates as well (`show`).
    static func session(_ given: String?, _ ctx: CommandContext, savedToo: Bool = false) throws -> String {
        if let given, isUUID(given) { return given }
        if let given, given.isEmpty || !given.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            throw UsageError(message: "not a session id: '\(given)' (a UUID or its first characters)")
        }
        let listing = try ctx.call("workout.list", ["limit": .int(savedToo ? 10_000 : 1)], echo: false)
        let sessions = listing.objects("sessions").map { WorkoutDetails(sessionInfo: $0) }
        guard let given else {
            let open = sessions.filter { $0.state != "ended" }
            if open.count == 1, let id = open[0].sessionID { return id }
            if open.isEmpty {
                throw UsageError(message: "no workout session is open (start one with: strapctl workout start)", showsUsage: false)
            }
            throw UsageError(message: "\(open.count) workout sessions are open; name one (its id or first characters):\n"
                + TextFormat.table(open.map(sessionRow)).map { "  " + $0 }.joined(separator: "\n"), showsUsage: false)
        }
        let prefix = given.uppercased()
        var matches = Set(sessions.compactMap(\.sessionID).filter { $0.uppercased().hasPrefix(prefix) })
        if savedToo {
            for w in listing.objects("workouts") {
                for key in ["uuid", "sessionID"] {
                    if let id = w.string(key), id.uppercased().hasPrefix(prefix) { matches.insert(id) }
                }
            }
        }
        if matches.count == 1, let id = matches.first { return id }
        if matches.isEmpty {
            throw DaemonReplyError(code: "notFound", message: "no workout session\(savedToo ? " or saved workout" : "") whose id begins with \(given)")
        }
        throw UsageError(message: "\(given) matches \(matches.count) ids: \(matches.sorted().joined(separator: ", "))", showsUsage: false)
    }

    static func sessionRow(_ d: WorkoutDetails) -> [String] {
        [d.sessionID ?? "?", d.athlete ?? "default", d.activityType, d.state ?? "?"]
    }
}

extension Arguments {
    /// At most one positional argument.
    func optionalPositional() throws(UsageError) -> String? {
        guard positional.count <= 1 else { throw UsageError(message: "too many arguments") }
        return positional.first
    }
}
