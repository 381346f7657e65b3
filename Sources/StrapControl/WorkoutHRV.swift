import StrapWire

/// `strapctl workout hrv [ID]` and `strapctl workout hrv --from T --to T [--device ADDR]`:
/// `workout.hrv`'s report (docs/protocol-workouts.md; definitions in docs/export.md "HRV").
enum WorkoutHRV {
    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["from", "to", "device"], flags: [])
        let now = TimeArgument.nowMilliseconds()
        let from = try a.time("from", now: now), to = try a.time("to", now: now)
        var params = JSONObject()
        let subject: String
        if from != nil || to != nil {
            guard let from, let to else { throw UsageError(message: "--from and --to go together") }
            guard a.positional.isEmpty else { throw UsageError(message: "give a workout ID or --from and --to, not both") }
            guard from < to else { throw UsageError(message: "--from must be before --to") }
            params["from"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: from))
            params["to"] = .string(RFC3339Timestamp.format(millisecondsSinceEpoch: to))
            subject = "\(TextFormat.dateTime(params.string("from"))) to \(TextFormat.dateTime(params.string("to"))) UTC"
        } else {
            let id = try WorkoutCommands.session(a.optionalPositional(), ctx, savedToo: true)
            params["workout"] = .string(id)
            subject = "workout \(id)"
        }
        if let device = a.value("device") { params["device"] = .string(device) }
        let r = try ctx.call("workout.hrv", params)
        if ctx.json { return ExitCode.success }
        guard (r.int("intervals") ?? 0) > 0 else {
            throw DaemonReplyError(code: "noData", message: "no RR intervals in \(subject)" + (a.value("device").map { " from \($0)" } ?? ""))
        }
        for line in lines(r, subject: subject) { ctx.sink.print(line) }
        return ExitCode.success
    }

    /// The report as text; absent figures (too few intervals) say so.
    static func lines(_ r: JSONObject, subject: String) -> [String] {
        let missing = "- (too few normal intervals)"
        func ms(_ key: String) -> String { r.number(key).map { TextFormat.fixed($0, 1) + " ms" } ?? missing }
        let count = { (key: String) in Int(r.int(key) ?? 0) }
        let intervals = count("intervals"), paused = count("excludedPaused")
        let outOfRange = count("excludedOutOfRange"), ectopic = count("excludedEctopic")
        var rows: [(String, String)] = [
            ("mean NN", ms("meanNN")),
            ("SDNN", ms("sdnn")),
            ("RMSSD", ms("rmssd")),
            ("pNN50", r.number("pnn50").map { TextFormat.fixed($0, 1) + " %" } ?? missing),
            ("mean HR", r.number("meanHeartRate").map { TextFormat.fixed($0, 1) + " bpm" } ?? missing),
            ("analysed", "\(intervals - paused) of \(intervals) RR intervals, \(count("normal")) normal"),
            ("excluded", "\(outOfRange + ectopic + paused): \(outOfRange) out of range, \(ectopic) ectopic, \(paused) in pauses"),
            ("runs", "\(count("runs")) (\(count("successiveDifferences")) successive differences, NN50 \(count("nn50")))"),
        ]
        if let method = r.string("method") { rows.append(("method", method)) }
        let title = "HRV of \(subject)" + (r.string("deviceID").map { ", beats from \($0)" } ?? "")
        return [title] + rows.map { "  " + $0.0.padding(12) + $0.1 }
    }

    /// `RMSSD 64.9 ms, SDNN 73.9 ms, mean NN 1185.8 ms, pNN50 38.5 % (751 of 772 RR intervals
    /// normal)` from the summary's `hrv*` figures; nil when the workout has none.
    static func summaryLine(_ f: [String: Double]) -> String? {
        guard let intervals = f["hrvIntervals"], intervals > 0 else { return nil }
        var parts: [String] = []
        if let v = f["hrvRMSSD"] { parts.append("RMSSD \(TextFormat.fixed(v, 1)) ms") }
        if let v = f["hrvSDNN"] { parts.append("SDNN \(TextFormat.fixed(v, 1)) ms") }
        if let v = f["hrvMeanNN"] { parts.append("mean NN \(TextFormat.fixed(v, 1)) ms") }
        if let v = f["hrvPNN50"] { parts.append("pNN50 \(TextFormat.fixed(v, 1)) %") }
        let normal = Int(f["hrvNormalIntervals"] ?? 0)
        let counts = "\(normal) of \(Int(intervals)) RR intervals normal"
        return parts.isEmpty ? "too few normal intervals (\(counts))" : parts.joined(separator: ", ") + " (\(counts))"
    }
}
