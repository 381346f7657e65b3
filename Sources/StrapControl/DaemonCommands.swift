import StrapWire

/// `status`, `devices`, `scan`, `info` and the device actions.
enum DaemonCommands {
    static func status(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        try Arguments(args, options: [], flags: []).noPositional()
        let r = try ctx.call("status")
        if ctx.json { return ExitCode.success }
        ctx.sink.print("strapd \(r.string("version") ?? "?") (\(r.string("mode") ?? "?")), up since \(r.string("startedAt") ?? "?")")
        ctx.sink.print("  \(r.string("summary") ?? "")")
        if let degraded = r.string("degraded") { ctx.sink.print("  DEGRADED: \(degraded)") }
        ctx.sink.print("  sensors: \(r.int("connectedSensors") ?? 0) connected, \(r.int("knownSensors") ?? 0) known")
        if let p = r.object("pipeline") {
            ctx.sink.print("  pipeline: \(p.int("samples") ?? 0) samples from \(p.int("events") ?? 0) events, \(p.int("rejected") ?? 0) rejected, \(p.int("dropped") ?? 0) dropped")
        }
        if let s = r.object("store") {
            ctx.sink.print("  store: anchors \(s.int("oldestAnchor") ?? 0)…\(s.int("latestAnchor") ?? 0), \(s.int("segments") ?? 0) segments" +
                           (s.string("degraded").map { ", degraded: \($0)" } ?? ""))
        }
        ctx.sink.print("  clients: \(r.int("clients") ?? 0), live subscribers: \(r.int("liveSubscribers") ?? 0)")
        if let m = r.object("mqtt") {
            let lag = (m.int("lagItems") ?? 0) == 0 ? "caught up"
                : "\(m.int("lagItems") ?? 0) items behind (\(plain(m["lagSeconds"] ?? .null)) s)"
            let broker = m.string("broker") ?? "?"
            let state = switch m.string("state") {
            case "connected": "connected to \(broker)" + (m.int("inflightLimit").map { " (\($0) in flight at most)" } ?? "")
            case "connecting": "connecting to \(broker)"
            case "waiting": "not connected to \(broker), waiting to retry"
            case "stopped": "stopped (\(broker))"
            case let other: "\(other ?? "?") (\(broker))"
            }
            var line = "  mqtt: \(state), cursor \(m.int("cursor") ?? 0), \(lag)"
            if m.string("state") != "connected", let error = m.string("lastError") {
                line += "; last error: \(error)" + (plain(m["retryIn"] ?? .null) == "null" ? "" : ", retrying in \(plain(m["retryIn"]!)) s")
            }
            ctx.sink.print(line)
        }
        return ExitCode.success
    }

    static func devices(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        try Arguments(args, options: [], flags: []).noPositional()
        let r = try ctx.call("devices.list")
        if ctx.json { return ExitCode.success }
        let devices = r.objects("devices")
        if devices.isEmpty { ctx.sink.print("no devices"); return ExitCode.success }
        var rows = [["ADDRESS", "NAME", "STATE", "ADAPTER", "BATTERY", "CONTACT", "RSSI", "LAST SEEN"]]
        for d in devices {
            let state = d.bool("connected") == true ? "connected" : d.bool("known") == true ? "known" : d.bool("paired") == true ? "paired" : "-"
            rows.append([d.string("address") ?? "?", d.string("name") ?? "", state, d.string("adapter") ?? "-",
                         d.int("battery").map { "\($0)%" } ?? "-", d.string("contact") ?? "-",
                         d.int("rssi").map { "\($0) dBm" } ?? "-", d.string("lastSeen") ?? "-"])
        }
        table(rows, ctx.sink)
        return ExitCode.success
    }

    static func info(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let address = try Arguments(args, options: [], flags: []).single("device address")
        let r = try ctx.call("devices.info", ["address": .string(address)])
        if ctx.json { return ExitCode.success }
        let order = ["address", "name", "known", "paired", "connected", "battery", "contact", "bodySensorLocation", "sensorLocation",
                     "manufacturer", "model", "serial", "firmware", "adapter", "adapterAddress", "rssi", "rssiUnavailable", "lastSeen",
                     "lastDisconnectReason", "notifications", "services"]
        for key in order {
            guard let v = r[key], v != .null else { continue }
            ctx.sink.print("\(key):".padding(22) + plain(v))
        }
        return ExitCode.success
    }

    static func action(_ command: String, _ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let address = try Arguments(args, options: [], flags: []).single("device address")
        let op = command == "reset-energy" ? "devices.resetEnergy" : "devices.\(command)"
        _ = try ctx.callWaiting(op, ["address": .string(address)], what: "\(command) \(address)")
        if !ctx.json {
            let done = ["pair": "paired", "connect": "connected", "disconnect": "disconnected", "forget": "forgot",
                        "reset-energy": "energy expended reset on"][command] ?? command
            ctx.sink.print("\(done) \(address)")
        }
        return ExitCode.success
    }

    /// `--until ADDR` ends the scan as soon as ADDR is found: scripts that wait for one sensor
    /// need not sit out the whole timeout. The stream is cancelled (not just dropped) so the
    /// daemon stops discovery and frees its one scanner before we exit.
    static func scan(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["timeout", "until"], flags: [])
        try a.noPositional()
        let timeout = try a.number("timeout") ?? 10
        let until = try a.value("until").map(scanTarget)
        let client = try ctx.connect(timeout: timeout + 30)
        let reply = try client.call(["id": .int(1), "op": .string("devices.scan"), "timeout": .double(timeout)], stream: true)
        let r = try CommandContext.result(of: reply)
        if ctx.json { ctx.sink.print(JSONWriter.string(.object(reply))) } else { ctx.sink.print(scanningLine(r, asked: timeout, until: until)) }
        var seen = false
        while let m = try client.readMessage() {
            if ctx.json { ctx.sink.print(JSONWriter.string(.object(m))) }
            let data = m.object("data") ?? JSONObject()
            switch m.string("event") {
            case "found":
                if !ctx.json {
                    let services = (data["services"]).map(plain) ?? ""
                    ctx.sink.print("\(data.string("address") ?? "?")  \(data.string("name") ?? "(no name)")  " +
                                   "\(data.int("rssi").map { "\($0) dBm" } ?? "-")  \(services)")
                }
                if let until, !seen, data.string("address")?.uppercased() == until {
                    seen = true
                    client.cancelStream()
                }
            case "shutdown":
                throw ClientError.shuttingDown
            case "finished", "cancelled":
                if let until, !seen {
                    ctx.sink.error("strapctl: \(until) not seen within \(plain(.double(timeout))) s (\(data.int("count") ?? 0) other device(s) found)")
                    return ExitCode.notFound
                }
                if !ctx.json { ctx.sink.print(until.map { "\($0) found" } ?? "\(data.int("count") ?? 0) device(s) found") }
                return ExitCode.success
            case "error":
                throw DaemonReplyError(code: data.string("code") ?? "internal", message: data.string("message") ?? "scan failed")
            default: break
            }
        }
        throw ClientError.closed
    }

    /// `scanning for 2 s…`: the timeout strapd took (`2` or `2.0`), else the one asked for.
    static func scanningLine(_ r: JSONObject, asked: Double, until: String?) -> String {
        "scanning for \(plain(.double(r.number("timeout") ?? asked))) s…" + (until.map { " (until \($0) is found)" } ?? "")
    }

    /// A Bluetooth address as the daemon reports it (upper case), or a usage error.
    static func scanTarget(_ text: String) throws(UsageError) -> String {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
            throw UsageError(message: "--until: not a Bluetooth address: \(text) (like F0:13:C3:AA:01:02)")
        }
        return text.uppercased()
    }

    static func table(_ rows: [[String]], _ sink: OutputSink) {
        guard let first = rows.first else { return }
        var widths = first.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        for row in rows {
            var line = ""
            for (i, cell) in row.enumerated() {
                line += i == row.count - 1 ? cell : cell.padding(widths[i] + 2)
            }
            sink.print(line)
        }
    }

    /// A JSON value as a person reads it: strings bare, arrays comma-separated.
    static func plain(_ v: WireJSON) -> String {
        switch v {
        case .string(let s): s
        case .array(let items): items.map(plain).joined(separator: ", ")
        case .double(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        default: JSONWriter.string(v)
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
