import StrapWire

/// The `strapctl` command line: global options, subcommand dispatch, and the mapping of
/// failures to the exit codes of strapctl(1).
public enum Strapctl {
    public static let usage = """
        usage: strapctl [--socket PATH] [--json] COMMAND [ARGS...]
        commands:
          status                  daemon health, sensors, store
          devices                 known and connected sensors
          scan [--timeout S] [--until ADDR]
                                  discover sensors (admin); --until ends as soon as ADDR is found
          pair|connect|disconnect|forget|info|reset-energy ADDR
          query [--type T]... [--from TIME] [--to TIME] [--device ID] [--limit N] [--sort start|end] [--desc]
          anchored [--anchor N] [--limit N] [--type T]... [--follow]
          delete (--uuid U... | --type T --from TIME --to TIME)
          stats --type T --option average|minimum|maximum|mostRecent|sum [--from TIME] [--to TIME]
                [--interval 15m|1h|1d|1w|1mo] [--anchor-date TIME] [--tz ZONE] [--by-source]
          live [--type T]... [--device ADDR]
                                  live data; a device in a workout session shows its figures
          workout start|pause|resume|stop|lap|marker|end|discard|send|list|show|follow|export|hrv ...
                                  workout sessions (see strapctl workout help)
          profile [--athlete NAME]                      an athlete's profile
          profile set [--athlete NAME] KEY=VALUE...     change it (KEY= clears)
          profile get [--athlete NAME] FIELD            one field (exit 6 when unset)
          plan list|save|show|delete ...                structured workouts (see strapctl plan help)
          trainer status|set|release ...                a smart trainer's target by hand (see strapctl trainer help)
          decode CHAR HEX...      decode one GATT packet offline (see strapctl decode --help)
          web url [--overlay] [--state-dir DIR]
                                  strapd-web's dashboard URL with its token (root: the token is secret)
          help                    this text
        TIME is RFC 3339, now, or relative: -15m, -2h, -1d. The socket is $STRAPD_SOCKET or
        /run/strapd/strapd.sock unless --socket is given.
        """

    /// Runs a command to completion and returns what it printed (tests, one-shot commands).
    public static func run(_ arguments: [String], environment: [String: String] = [:]) -> CommandOutput {
        let (sink, collected) = OutputSink.collecting()
        let code = run(arguments, environment: environment, sink: sink, interrupts: .none)
        let (out, err) = collected()
        return CommandOutput(exitCode: code, stdout: out, stderr: err)
    }

    /// Runs a command writing to `sink` as it goes; returns the exit code. `interrupts` is how
    /// a command that ends cleanly on Ctrl-C learns of it.
    public static func run(_ arguments: [String], environment: [String: String], sink: OutputSink,
                           interrupts: Interrupts = .none) -> Int32 {
        var args = arguments
        var socket = environment["STRAPD_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? DaemonConnection.defaultSocket
        var json = false
        // Global options may come before or after the command.
        var i = 0
        while i < args.count {
            if args[i] == "--json" { json = true; args.remove(at: i); continue }
            if args[i] == "--socket" {
                guard i + 1 < args.count else { return usageError("--socket needs a path", sink) }
                socket = args[i + 1]
                args.removeSubrange(i...(i + 1))
                continue
            }
            if args[i].hasPrefix("--socket=") { socket = String(args[i].dropFirst(9)); args.remove(at: i); continue }
            if args[i] == "--" { break }
            i += 1
        }
        guard let command = args.first else { return usageError(nil, sink) }
        let rest = Array(args.dropFirst())
        let context = CommandContext(socket: socket, json: json, sink: sink, interrupts: interrupts, environment: environment)
        // A usage error of a command family shows that family's usage.
        let commandUsage = ["workout": WorkoutCommands.usage, "profile": ProfileCommands.usage, "plan": PlanCommands.usage, "trainer": TrainerCommands.usage,
                            "web": WebCommands.usage][command] ?? usage
        do {
            switch command {
            case "decode":
                let out = rest == ["--help"] || rest == ["-h"] ? CommandOutput(stdout: DecodeCommand.usage + "\n") : DecodeCommand.run(rest)
                if !out.stdout.isEmpty { sink.write(out.stdout) }
                if !out.stderr.isEmpty { sink.error(String(out.stderr.dropLast(out.stderr.hasSuffix("\n") ? 1 : 0))) }
                return out.exitCode
            case "help", "--help", "-h":
                sink.print(usage)
                return ExitCode.success
            case "status": return try DaemonCommands.status(rest, context)
            case "devices": return try DaemonCommands.devices(rest, context)
            case "scan": return try DaemonCommands.scan(rest, context)
            case "info": return try DaemonCommands.info(rest, context)
            case "pair", "connect", "disconnect", "forget", "reset-energy":
                return try DaemonCommands.action(command, rest, context)
            case "query": return try SampleCommands.query(rest, context)
            case "anchored": return try SampleCommands.anchored(rest, context)
            case "delete": return try SampleCommands.delete(rest, context)
            case "stats": return try SampleCommands.stats(rest, context)
            case "live": return try LiveCommand.run(rest, context)
            case "workout": return try WorkoutCommands.run(rest, context)
            case "profile": return try ProfileCommands.run(rest, context)
            case "plan": return try PlanCommands.run(rest, context)
            case "trainer": return try TrainerCommands.run(rest, context)
            case "web": return try WebCommands.run(rest, context)
            default:
                return usageError("unknown command '\(command)'", sink)
            }
        } catch let error as UsageError {
            return usageError(error.message, sink, usage: error.showsUsage ? commandUsage : nil)
        } catch let error as WebURLError {
            sink.error("strapctl: \(error)")
            return error.exitCode
        } catch let error as ClientError {
            sink.error("strapctl: \(error)")
            return error.exitCode
        } catch let error as DaemonReplyError {
            sink.error("strapctl: \(error.message) (\(error.code))")
            switch error.code {
            case "notAuthorized": return ExitCode.notAuthorized
            case "noData": return ExitCode.noData
            default: return ExitCode.daemonError
            }
        } catch {
            sink.error("strapctl: \(error)")
            return ExitCode.daemonError
        }
    }

    static func usageError(_ message: String?, _ sink: OutputSink, usage: String? = usage) -> Int32 {
        if let message { sink.error("strapctl: \(message)") }
        if let usage { sink.error(usage) }
        return ExitCode.usage
    }
}

/// The daemon answered `ok: false`.
struct DaemonReplyError: Error {
    let code: String
    let message: String
}

/// What every daemon command needs: where the socket is, how to print.
struct CommandContext {
    let socket: String
    let json: Bool
    let sink: OutputSink
    var interrupts: Interrupts = .none
    /// STRAPD_SOCKET, COLUMNS and the locale variables (`Terminal.environmentNames`).
    var environment: [String: String] = [:]

    func connect(timeout: Double? = 30) throws(ClientError) -> DaemonConnection {
        try DaemonConnection(path: socket, timeout: timeout)
    }

    /// One request, one reply: the `result` object, or the daemon's error thrown.
    /// `echo: false` keeps a helper request (finding a session's id) out of `--json` output.
    func call(_ op: String, _ params: JSONObject = JSONObject(), echo: Bool = true) throws -> JSONObject {
        let client = try connect()
        var request: JSONObject = ["id": .int(1), "op": .string(op)]
        for (k, v) in params.entries { request[k] = v }
        let reply = try client.call(request)
        if json, echo, reply["ok"] == .bool(true) { sink.print(JSONWriter.string(.object(reply))) }
        return try Self.result(of: reply)
    }

    /// Like `call`, for requests that may take long (pairing, connecting): says on stderr
    /// what it is still waiting for every `every` seconds, and gives up after `limit` with a
    /// message naming the request, so a user never faces a silent wait.
    func callWaiting(_ op: String, _ params: JSONObject, what: String, every: Double = 5, limit: Double = 90) throws -> JSONObject {
        let client = try connect(timeout: every)
        var request: JSONObject = ["id": .int(1), "op": .string(op)]
        for (k, v) in params.entries { request[k] = v }
        client.send(request)
        var waited = 0.0
        while true {
            do {
                guard let message = try client.readMessage() else { throw ClientError.closed }
                guard message["id"] == .int(1) || message["id"] == .null, message["ok"] != nil else { continue }
                if json, message["ok"] == .bool(true) { sink.print(JSONWriter.string(.object(message))) }
                return try Self.result(of: message)
            } catch ClientError.timedOut {
                waited += every
                if waited >= limit {
                    throw ClientError.io("no answer from strapd to \(op) after \(Int(limit)) s (\(what)); strapd's log names any BlueZ call still unanswered")
                }
                sink.error("strapctl: still waiting for strapd to \(what) (\(Int(waited)) s)")
            }
        }
    }

    static func result(of reply: JSONObject) throws -> JSONObject {
        if reply["ok"] == .bool(true) {
            if case .object(let r)? = reply["result"] { return r }
            return JSONObject()
        }
        guard case .object(let e)? = reply["error"] else { throw ClientError.malformed("neither ok nor error") }
        throw DaemonReplyError(code: e.string("code") ?? "internal", message: e.string("message") ?? "")
    }
}

extension JSONObject {
    func string(_ key: String) -> String? { if case .string(let s)? = self[key] { s } else { nil } }
    /// Integral numbers arrive as `95` or `95.0` depending on how strapd built the reply;
    /// both are read, here and in `number`.
    func int(_ key: String) -> Int64? {
        switch self[key] {
        case .int(let i)?: i
        case .double(let d)? where d == d.rounded() && abs(d) < 9e15: Int64(d)
        default: nil
        }
    }
    func number(_ key: String) -> Double? {
        switch self[key] {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }
    func bool(_ key: String) -> Bool? { if case .bool(let b)? = self[key] { b } else { nil } }
    func object(_ key: String) -> JSONObject? { if case .object(let o)? = self[key] { o } else { nil } }
    func objects(_ key: String) -> [JSONObject] {
        guard case .array(let a)? = self[key] else { return [] }
        return a.compactMap { if case .object(let o) = $0 { o } else { nil } }
    }
}
