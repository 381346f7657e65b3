import StrapWire

/// `strapctl trainer`: a smart trainer's target by hand through `trainer.status/set/release`
/// (docs/protocol.md, "Trainers"; docs/trainer.md for what strapd does with it).
enum TrainerCommands {
    static let usage = """
        usage: strapctl [--socket PATH] [--json] trainer status
               strapctl trainer set (--power W | --resistance LEVEL | --grade PCT [--wind M/S] [--crr C] [--cw KG/M]) [--device ADDR]
               strapctl trainer release [--device ADDR]      reset the trainer: it holds no target of strapd's
        --device may be left out when one trainer is known. A trainer a workout session riding a
        plan drives refuses targets by hand until the session ends.
        """

    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let rest = Array(args.dropFirst())
        switch args.first {
        case "status", nil: return try status(rest, ctx)
        case "set": return try set(rest, ctx)
        case "release": return try release(rest, ctx)
        case "help", "--help", "-h":
            ctx.sink.print(usage)
            return ExitCode.success
        case let other?: throw UsageError(message: "unknown trainer command '\(other)'")
        }
    }

    static func status(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        try Arguments(args, options: [], flags: []).noPositional()
        let r = try ctx.call("trainer.status")
        if ctx.json { return ExitCode.success }
        let trainers = r.objects("trainers")
        if trainers.isEmpty { ctx.sink.print("no trainer has connected"); return ExitCode.success }
        for t in trainers { ctx.sink.print(line(t)) }
        return ExitCode.success
    }

    static func set(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["power", "resistance", "grade", "wind", "crr", "cw", "device"], flags: [])
        try a.noPositional()
        var params = JSONObject()
        for name in ["power", "resistance", "grade", "wind", "crr", "cw"] {
            guard let text = a.value(name) else { continue }
            // Grade and wind may be negative (downhill, a tailwind): any finite number.
            guard let v = Double(text), v.isFinite else { throw UsageError(message: "--\(name) must be a number") }
            params[name] = .double(v)
        }
        guard [params["power"], params["resistance"], params["grade"]].compactMap({ $0 }).count == 1 else {
            throw UsageError(message: "give one of --power, --resistance or --grade")
        }
        if let d = a.value("device") { params["device"] = .string(d) }
        let r = try ctx.call("trainer.set", params)
        if !ctx.json { ctx.sink.print(line(r)) }
        return ExitCode.success
    }

    static func release(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["device"], flags: [])
        try a.noPositional()
        var params = JSONObject()
        if let d = a.value("device") { params["device"] = .string(d) }
        let r = try ctx.call("trainer.release", params)
        if !ctx.json { ctx.sink.print(line(r)) }
        return ExitCode.success
    }

    /// `C0:FF:EE:00:00:01  holding 200 W  (user)  power 0…2000 W`.
    static func line(_ t: JSONObject) -> String {
        var parts = [t.string("device") ?? "-", t.string("state") ?? "-"]
        if case .object(let h)? = t["holding"] { parts.append(target(h)) }
        if t.string("state") != "holding", case .object(let d)? = t["desired"] { parts.append("wants " + target(d)) }
        if let e = t.string("error") { parts.append("(\(e))") }
        switch t.string("owner") {
        case "user"?: parts.append("(set by hand)")
        case "session"?: parts.append("(workout \(t.string("session") ?? "?"))")
        default: break
        }
        if case .object(let caps)? = t["capabilities"], case .object(let p)? = caps["power"] {
            parts.append("power \(TextFormat.number(p.number("minimum") ?? 0))…\(TextFormat.number(p.number("maximum") ?? 0)) W")
        }
        var out = parts.joined(separator: "  ")
        if case .array(let alerts)? = t["alerts"] {
            for case .string(let s) in alerts.suffix(3) { out += "\n  " + s }
        }
        return out
    }

    static func target(_ o: JSONObject) -> String {
        if let w = o.number("power") { return "\(TextFormat.number(w)) W" }
        if let l = o.number("resistance") { return "resistance \(TextFormat.number(l))" }
        if let g = o.number("grade") { return "grade \(TextFormat.number(g)) %" }
        return "-"
    }
}
