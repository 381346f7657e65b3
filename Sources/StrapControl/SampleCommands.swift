import StrapWire

/// `query`, `anchored`, `delete`, `stats`.
enum SampleCommands {
    static func query(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["type", "from", "to", "device", "limit", "sort"], flags: ["desc"])
        try a.noPositional()
        var params = JSONObject()
        if let p = try predicate(a, now: TimeArgument.nowMilliseconds()) { params["predicate"] = p }
        if let limit = try a.int("limit") { params["limit"] = .int(Int64(limit)) }
        if let sort = try a.choice("sort", "sort key", among: Choices.sortKeys) { params["sort"] = .string(sort) }
        if a.flag("desc") { params["descending"] = .bool(true) }
        let r = try ctx.call("samples.query", params)
        if ctx.json { return ExitCode.success }
        for s in r.objects("samples") { ctx.sink.print(sampleLine(s)) }
        if r.bool("truncated") == true { ctx.sink.error("strapctl: output truncated at \(r.int("count") ?? 0) samples; narrow the range or use --limit") }
        return ExitCode.success
    }

    static func anchored(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["anchor", "limit", "type"], flags: ["follow"])
        try a.noPositional()
        var request: JSONObject = ["id": .int(1), "op": .string("samples.anchored")]
        if let anchor = try a.int("anchor", min: 0) { request["anchor"] = .int(Int64(anchor)) }
        if let limit = try a.int("limit") { request["limit"] = .int(Int64(limit)) }
        let types = try a.choices("type", "type", among: Choices.objectTypes)
        if !types.isEmpty { request["types"] = .array(types.map(WireJSON.string)) }
        let follow = a.flag("follow")
        if follow { request["follow"] = .bool(true) }
        let client = try ctx.connect(timeout: follow ? nil : 60)
        let reply = try client.call(request, stream: follow)
        let r = try CommandContext.result(of: reply)
        if ctx.json {
            ctx.sink.print(JSONWriter.string(.object(reply)))
        } else {
            for s in r.objects("added") { ctx.sink.print("+ " + sampleLine(s)) }
            for d in r.objects("deleted") { ctx.sink.print("- \(d.int("anchor") ?? 0) \(d.string("uuid") ?? "") \(d.string("type") ?? "")") }
            ctx.sink.print("anchor \(r.int("anchor") ?? 0)")
        }
        guard follow else { return ExitCode.success }
        while let m = try client.readMessage() {
            if m.string("event") == "shutdown" { throw ClientError.shuttingDown }
            if ctx.json { ctx.sink.print(JSONWriter.string(.object(m))); continue }
            let data = m.object("data") ?? JSONObject()
            switch m.string("event") {
            case "added": ctx.sink.print("+ " + sampleLine(data))
            case "deleted": ctx.sink.print("- \(data.int("anchor") ?? 0) \(data.string("uuid") ?? "") \(data.string("type") ?? "")")
            case "error": throw DaemonReplyError(code: data.string("code") ?? "internal", message: data.string("message") ?? "follow failed")
            default: break
            }
        }
        throw ClientError.closed
    }

    static func delete(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["uuid", "type", "from", "to", "device"], flags: [])
        try a.noPositional()
        var params = JSONObject()
        let uuids = a.all("uuid")
        if !uuids.isEmpty {
            guard a.all("type").isEmpty, a.value("from") == nil, a.value("to") == nil, a.value("device") == nil else {
                throw UsageError(message: "give either --uuid or --type/--from/--to, not both")
            }
            params["uuids"] = .array(uuids.map(WireJSON.string))
        } else {
            guard !a.all("type").isEmpty, a.value("from") != nil, a.value("to") != nil else {
                throw UsageError(message: "delete needs --uuid U..., or --type T with --from and --to")
            }
            params["predicate"] = try predicate(a, now: TimeArgument.nowMilliseconds())
        }
        let r = try ctx.call("samples.delete", params)
        if !ctx.json { ctx.sink.print("deleted \(r.int("deleted") ?? 0) sample(s)") }
        return ExitCode.success
    }

    static func stats(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["type", "option", "from", "to", "interval", "anchor-date", "tz"], flags: ["by-source"])
        try a.noPositional()
        guard let type = try a.choice("type", "type", among: Choices.sampleTypes) else { throw UsageError(message: "stats needs --type") }
        let options = try a.choices("option", "option", among: Choices.statisticsOptions)
        guard !options.isEmpty else { throw UsageError(message: "stats needs --option") }
        let now = TimeArgument.nowMilliseconds()
        let from = try a.time("from", now: now) ?? now - 86_400_000
        let to = try a.time("to", now: now) ?? now
        var params: JSONObject = ["type": .string(type), "options": .array(options.map(WireJSON.string)),
                                  "from": .string(RFC3339Timestamp.format(millisecondsSinceEpoch: from)),
                                  "to": .string(RFC3339Timestamp.format(millisecondsSinceEpoch: to))]
        let interval = a.value("interval")
        if let interval {
            let spec = try intervalJSON(interval)
            params["interval"] = .object(spec)
            let zone = try StatsAnchor.zone(a.value("tz"))
            let anchor = try a.time("anchor-date", now: now) ?? StatsAnchor.aligned(spec, from: from, zone: zone)
            params["anchorDate"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: anchor))
            if let tz = a.value("tz") { params["timeZone"] = .string(tz) }
            if a.flag("by-source") { params["separateBySource"] = .bool(true) }
        } else if a.value("anchor-date") != nil || a.value("tz") != nil || a.flag("by-source") {
            throw UsageError(message: "--anchor-date, --tz and --by-source go with --interval")
        }
        guard interval != nil else {
            let r = try ctx.call("statistics.query", params)
            if !ctx.json { ctx.sink.print(statsLine(r, options: options, unit: r.string("unit") ?? "")) }
            return ExitCode.success
        }
        // A long collection comes in pages (`truncated`, `next`): each continues at `next`.
        while true {
            let r = try ctx.call("statistics.collection", params)
            if !ctx.json {
                let unit = r.string("unit") ?? ""
                for s in r.objects("statistics") {
                    ctx.sink.print(statsLine(s, options: options, unit: unit))
                    for (device, v) in (s.object("bySource") ?? JSONObject()).entries {
                        if case .object(let o) = v { ctx.sink.print("    \(device): " + statsLine(o, options: options, unit: unit, times: false)) }
                    }
                }
            }
            guard r["truncated"] == .bool(true), let next = r.string("next") else { return ExitCode.success }
            params["from"] = .string(next)
        }
    }

    /// `15m`, `1h`, `1d`, `1w`, `1mo` → `{"minutes": 15}` ...
    static func intervalJSON(_ text: String) throws(UsageError) -> JSONObject {
        let units: [(String, String)] = [("mo", "months"), ("min", "minutes"), ("m", "minutes"), ("h", "hours"), ("d", "days"), ("w", "weeks")]
        for (suffix, name) in units where text.hasSuffix(suffix) {
            if let n = Int64(text.dropLast(suffix.count)), n > 0 { return [name: .int(n)] }
        }
        throw UsageError(message: "--interval must be like 15m, 1h, 1d, 1w or 1mo")
    }

    /// `--type`, `--from`, `--to`, `--device` as one predicate.
    static func predicate(_ a: Arguments, now: Int64) throws(UsageError) -> WireJSON? {
        var parts: [WireJSON] = []
        let types = try a.choices("type", "type", among: Choices.sampleTypes)
        if !types.isEmpty { parts.append(.object(["types": .array(types.map(WireJSON.string))])) }
        let from = try a.time("from", now: now), to = try a.time("to", now: now)
        if from != nil || to != nil {
            var t = JSONObject()
            if let from { t["from"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: from)) }
            if let to { t["to"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: to)) }
            parts.append(.object(["time": .object(t)]))
        }
        if let device = a.value("device") { parts.append(.object(["device": .object(["id": .string(device)])])) }
        switch parts.count {
        case 0: return nil
        case 1: return parts[0]
        default: return .object(["and": .array(parts)])
        }
    }

    /// `#5 2023-11-14T22:13:20.566Z heartRate 72 count/min Sim HR 0`.
    static func sampleLine(_ s: JSONObject) -> String {
        let device = s.object("device").flatMap { $0.string("name") ?? $0.string("address") } ?? "?"
        let anchor = s.int("anchor").map { "#\($0) " } ?? ""
        return "\(anchor)\(s.string("start") ?? "?") \(s.string("type") ?? "?") \(SampleText.value(s)) \(device)"
    }

    static func statsLine(_ s: JSONObject, options: [String], unit: String, times: Bool = true) -> String {
        var parts: [String] = []
        if times { parts.append("\(s.string("start") ?? "?") … \(s.string("end") ?? "?")") }
        parts.append("n=\(s.int("count") ?? 0)")
        for o in options {
            let v = s.number(o).map { SampleText.number($0) + " " + unit } ?? "-"
            parts.append("\(o)=\(v)")
        }
        return parts.joined(separator: "  ")
    }
}
