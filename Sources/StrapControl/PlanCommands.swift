import FoundationEssentials
import Glibc
import StrapExport
import StrapModel
import StrapWire

/// `strapctl plan`: saved structured workouts through `plan.save/list/get/delete`
/// (docs/protocol-workouts.md, "Plans"). A plan is written as JSON (docs/workouts.md,
/// "Structured workouts"); strapd validates it, so this only reads the file and shows results.
enum PlanCommands {
    static let usage = """
        usage: strapctl [--socket PATH] [--json] plan list
               strapctl plan save FILE|- [--uuid UUID]   save a plan (JSON); --uuid replaces that plan
               strapctl plan show UUID                    its steps, blocks unrolled
               strapctl plan delete UUID
               strapctl plan export UUID FILE.fit         as a FIT workout file (Garmin's format)
               strapctl plan import FILE.fit [--uuid UUID] a FIT workout file saved as a plan
        A plan: {"name", "activity", "warmup"?, "blocks": [{"iterations", "steps": [{"purpose":
        "work"|"recovery", "goal"?: {"time": s}|{"distance": m}|{"open": true}, "target"?:
        {"power": {"watts"|"percentFTP": [lo, hi]}}|{"heartRate": {"bpm": [lo, hi]}|{"zone": n}}|
        {"cadence": {"rpm": [lo, hi]}}, "displayName"?}]}], "cooldown"?} (docs/workouts.md).
        """

    static let maximumFileBytes = 1 << 20

    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let rest = Array(args.dropFirst())
        switch args.first {
        case "list", nil: return try list(rest, ctx)
        case "save": return try save(rest, ctx)
        case "show", "get": return try show(rest, ctx)
        case "delete": return try delete(rest, ctx)
        case "export": return try export(rest, ctx)
        case "import": return try importFIT(rest, ctx)
        case "help", "--help", "-h":
            ctx.sink.print(usage)
            return ExitCode.success
        case let other?: throw UsageError(message: "unknown plan command '\(other)'")
        }
    }

    static func list(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        try Arguments(args, options: [], flags: []).noPositional()
        let r = try ctx.call("plan.list")
        if ctx.json { return ExitCode.success }
        let plans = r.objects("plans")
        if plans.isEmpty { ctx.sink.print("no saved plans"); return ExitCode.success }
        for p in plans {
            let duration = p.number("duration").map(TextFormat.duration) ?? "open"
            ctx.sink.print("\(p.string("uuid") ?? "-")  \(p.string("activity") ?? "-")  \(p.int("steps") ?? 0) steps  \(duration)  \(p.string("name") ?? "")")
        }
        return ExitCode.success
    }

    static func save(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["uuid"], flags: [])
        let file = try a.single("plan file (or - for standard input)")
        let bytes = try read(file)
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw UsageError(message: "\(file): not JSON (\(error))", showsUsage: false)
        }
        guard case .object = value else { throw UsageError(message: "\(file): a plan is a JSON object", showsUsage: false) }
        var params: JSONObject = ["plan": value]
        if let uuid = a.value("uuid") { params["uuid"] = .string(uuid) }
        let r = try ctx.call("plan.save", params)
        if !ctx.json { ctx.sink.print("saved \(r.string("uuid") ?? "-")") }
        return ExitCode.success
    }

    static func show(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let uuid = try Arguments(args, options: [], flags: []).single("plan UUID")
        let plan = try fetch(uuid, ctx, echo: true)
        if ctx.json { return ExitCode.success }
        for line in lines(plan) { ctx.sink.print(line) }
        return ExitCode.success
    }

    static func export(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: [], flags: [])
        guard a.positional.count == 2 else { throw UsageError(message: "plan export takes a plan UUID and a file name") }
        let plan = try fetch(a.positional[0], ctx, echo: false)
        let now = Int64(time(nil)) * 1000
        let bytes = FITWorkoutFile.encode(plan, created: now)
        guard FileManager.default.createFile(atPath: a.positional[1], contents: Data(bytes)) else {
            throw ClientError.io("cannot write \(a.positional[1]): \(String(cString: strerror(errno)))")
        }
        if !ctx.json { ctx.sink.print("wrote \(a.positional[1]) (\(bytes.count) bytes, \(plan.expandedSteps.count) steps)") }
        return ExitCode.success
    }

    static func importFIT(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["uuid"], flags: [])
        let file = try a.single("FIT workout file")
        let plan: WorkoutPlan
        do { plan = try FITWorkoutFile.decode(try read(file)) } catch let e as FITWorkoutFile.Failure {
            throw UsageError(message: "\(file): \(e)", showsUsage: false)
        }
        let encoder = JSONEncoder()
        let json = try JSONParser.parse(Array(try encoder.encode(plan)))
        var params: JSONObject = ["plan": json]
        if let uuid = a.value("uuid") { params["uuid"] = .string(uuid) }
        let r = try ctx.call("plan.save", params)
        if !ctx.json { ctx.sink.print("saved \(r.string("uuid") ?? "-")") }
        return ExitCode.success
    }

    static func delete(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let uuid = try Arguments(args, options: [], flags: []).single("plan UUID")
        let r = try ctx.call("plan.delete", ["uuid": .string(uuid)])
        if !ctx.json { ctx.sink.print("deleted \(r.string("deleted") ?? uuid)") }
        return ExitCode.success
    }

    /// `plan.get`'s plan, decoded as strapd validated it.
    static func fetch(_ uuid: String, _ ctx: CommandContext, echo: Bool) throws -> WorkoutPlan {
        let r = try ctx.call("plan.get", ["uuid": .string(uuid)], echo: echo)
        guard let planJSON = r.object("plan") else { throw ClientError.malformed("plan.get answered without a plan") }
        do { return try JSONDecoder().decode(WorkoutPlan.self, from: Data(JSONWriter.bytes(.object(planJSON)))) } catch {
            throw ClientError.malformed("plan.get answered a plan this strapctl cannot read: \(error)")
        }
    }

    /// The plan as a person checks it before riding: one line per step, in riding order.
    static func lines(_ plan: WorkoutPlan) -> [String] {
        let duration = plan.plannedDuration.map(TextFormat.duration) ?? "open-ended"
        var out = ["\(plan.name) (\(plan.activity.rawValue), \(duration))"]
        for (i, e) in plan.expandedSteps.enumerated() {
            var where_ = e.purpose.rawValue
            if let b = e.block, let n = e.iteration { where_ += " (block \(b + 1), \(n)/\(plan.blocks[b].iterations))" }
            let goal: String = switch e.step.goal {
            case .open: "until lap"
            case .time(let s): TextFormat.duration(s)
            case .distance(let m): TextFormat.distance(m)
            }
            var line = "\(i + 1). \(where_)  \(goal)"
            if let t = e.step.target { line += "  " + target(t) }
            if let name = e.step.displayName { line += "  \"\(name)\"" }
            out.append(line)
        }
        return out
    }

    static func target(_ t: PlanTarget) -> String {
        func r(_ x: ClosedRange<Double>) -> String { "\(TextFormat.fixed(x.lowerBound, 0))-\(TextFormat.fixed(x.upperBound, 0))" }
        return switch t {
        case .power(let w): "power \(r(w)) W"
        case .powerPercentFTP(let p): "power \(r(p)) % FTP"
        case .heartRate(let b): "heart rate \(r(b)) bpm"
        case .heartRateZone(let z): "heart rate zone \(z)"
        case .cadence(let c): "cadence \(r(c)) rpm"
        }
    }

    static func read(_ file: String) throws -> [UInt8] {
        if file == "-" {
            var out: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                out += buffer[0..<n]
                if out.count > maximumFileBytes { break }
            }
            return try bounded(out, file)
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ClientError.io("cannot read \(file): \(String(cString: strerror(errno)))")
        }
        return try bounded(Array(data), file)
    }

    private static func bounded(_ bytes: [UInt8], _ file: String) throws -> [UInt8] {
        guard bytes.count <= maximumFileBytes else {
            throw UsageError(message: "\(file): over \(maximumFileBytes) bytes; a plan is far smaller", showsUsage: false)
        }
        return bytes
    }
}
