import Glibc
import StrapWire

/// `strapctl live`: redraws a per-device panel in place on a terminal (ANSI cursor movement,
/// no curses), one plain line per update when piped.
enum LiveCommand {
    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["type", "device"], flags: [])
        try a.noPositional()
        var request: JSONObject = ["id": .int(1), "op": .string("live.subscribe")]
        let types = try a.choices("type", "type", among: Choices.sampleTypes)
        if !types.isEmpty { request["types"] = .array(types.map(WireJSON.string)) }
        let devices = a.all("device")
        if !devices.isEmpty { request["devices"] = .array(devices.map(WireJSON.string)) }
        let client = try ctx.connect(timeout: nil)
        _ = try CommandContext.result(of: try client.call(request, stream: true))
        let redrawing = ctx.sink.isTerminal && !ctx.json
        // Reads wait for poll; the timeout only bounds the wait for the rest of a partial line.
        client.setTimeout(redrawing ? 0.25 : 1)
        // Workout sessions are shown next to their devices; --json stays the live stream verbatim.
        let watch = ctx.json ? nil : LiveWorkoutWatch(ctx, devices: devices)
        var view = LiveView()
        var drawn = redrawing ? redraw(view.render(), previous: 0, ctx.sink) : 0
        var lastDraw = 0.0
        var dirty = false
        while true {
            var lines: [String?] = []
            if let watch {
                let followed = watch.refresh(now: monotonicSeconds())
                for info in followed { lines.append(view.followWorkout(info)) }
            }
            let waiting = client.hasBufferedLine || watch?.hasBufferedLine == true
            // Wakes at least every quarter second on a terminal (a throttled frame is drawn)
            // and every second piped (the workout list is checked again).
            let ready = waiting ? [] : DaemonConnection.readable([client.descriptor] + (watch?.descriptors ?? []),
                                                              milliseconds: redrawing ? 250 : 1000)
            if let watch {
                for (session, kind, data) in watch.read(ready) { lines.append(view.applyWorkout(session, kind, data)) }
            }
            if client.hasBufferedLine || ready.contains(client.descriptor) {
                let result = Result { () throws(ClientError) -> JSONObject? in try client.readMessage() }
                if case .failure(.timedOut) = result { continue }
                guard let m = try result.get() else { throw ClientError.closed }
                if m.string("event") == "shutdown" { throw ClientError.shuttingDown }
                if ctx.json { ctx.sink.print(JSONWriter.string(.object(m))); continue }
                if let kind = m.string("event") { lines.append(view.apply(kind, m.object("data") ?? JSONObject())) }
            }
            if redrawing {
                // At most ten frames a second: a flood of samples must not flood the terminal.
                if !lines.isEmpty { dirty = true }
                let now = monotonicSeconds()
                guard dirty, now - lastDraw >= 0.1 else { continue }
                lastDraw = now
                dirty = false
                drawn = redraw(view.render(), previous: drawn, ctx.sink)
            } else {
                for case let line? in lines { ctx.sink.print(line) }
            }
        }
    }

    /// Moves up over the previous frame and overwrites it line by line.
    static func redraw(_ lines: [String], previous: Int, _ sink: OutputSink) -> Int {
        var frame = previous > 0 ? "\u{1B}[\(previous)F" : ""
        for line in lines { frame += "\u{1B}[2K" + line + "\n" }
        for _ in lines.count..<max(lines.count, previous) { frame += "\u{1B}[2K\n" }
        sink.write(frame)
        return max(lines.count, previous)
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The state behind `strapctl live`: the latest values per device and a minute of heart rate.
public struct LiveView {
    struct DeviceState {
        var name: String
        var connected = true
        var heartRate: Double?
        var rr: [Int] = []
        var contact: String?
        var battery: Int?
        /// "-64 dBm", or why there is no RSSI.
        var rssi: String?
        var speed: (Double, String)?
        var cadence: (Double, String)?
        /// (time ms, bpm) of the last minute.
        var history: [(Int64, Double)] = []
    }

    private var devices: [String: DeviceState] = [:]
    private var order: [String] = []
    private var dropped = 0
    private var latest: Int64 = 0
    /// Workout sessions holding devices, by session id (LiveWorkouts.swift).
    var workouts: [String: WorkoutFollowView] = [:]

    public init() {}

    /// Applies one event; returns the plain line describing it (piped output), if any.
    public mutating func apply(_ kind: String, _ data: JSONObject) -> String? {
        switch kind {
        case "sample":
            let device = data.object("device") ?? JSONObject()
            let address = device.string("address") ?? "?"
            var state = self.state(address, name: device.string("name"))
            let type = data.string("type") ?? "?"
            let value = data.number("value")
            let time = data.string("start").flatMap { try? RFC3339Timestamp.parse($0) } ?? latest
            latest = max(latest, time)
            switch type {
            case "heartRate":
                state.heartRate = value
                if let value { state.history.append((time, value)) }
                state.history.removeAll { $0.0 < latest - 60_000 }
            case "heartbeatSeries":
                let intervals = SampleText.rrMilliseconds(data)
                if !intervals.isEmpty { state.rr = Array((state.rr + intervals).suffix(4)) }
            case "sensorContact":
                // SensorContact's stored codes: 0 notSupported, 1 notDetected, 2 detected.
                state.contact = value.map { $0 >= 2 ? "detected" : $0 >= 1 ? "notDetected" : "notSupported" }
            case "batteryLevel": state.battery = value.map { Int($0) }
            case "cyclingSpeed", "runningSpeed": state.speed = value.map { ($0, "m/s") }
            case "cyclingCadence": state.cadence = value.map { ($0, "rpm") }
            case "runningCadence": state.cadence = value.map { ($0, "/min") }
            default: break
            }
            devices[address] = state
            return "\(data.string("start") ?? "") \(address) \(type) \(SampleText.value(data))"
        case "device":
            let address = data.string("address") ?? "?"
            var state = self.state(address, name: nil)
            switch data.string("change") {
            case "contact": state.contact = data.string("contact")
            case "battery": state.battery = data.int("battery").map(Int.init)
            case "rssi": state.rssi = data.int("rssi").map { "\($0) dBm" } ?? data.string("rssiUnavailable").map { "n/a (\($0))" }
            default: break
            }
            devices[address] = state
            let change = data.string("change") ?? "change"
            let detail: String? = switch change {
            case "contact": data.string("contact")
            case "battery": data.int("battery").map { "\($0)%" }
            case "bodySensorLocation", "sensorLocation": data.string("location")
            case "rssi": state.rssi
            case "identity": [data.string("manufacturer"), data.string("model"), data.string("serial"), data.string("firmware")]
                .compactMap { $0 }.joined(separator: " ")
            default: nil
            }
            return "\(address) \(change)" + (detail.map { " \($0)" } ?? "")
        case "link":
            let address = data.string("address") ?? "?"
            var state = self.state(address, name: nil)
            state.connected = data.bool("up") ?? false
            devices[address] = state
            return "\(data.string("time") ?? "") \(address) \(state.connected ? "connected" : "disconnected")" +
                (data.string("reason").map { " (\($0))" } ?? "")
        case "dropped":
            let n = Int(data.int("count") ?? 0)
            dropped += n
            return "dropped \(n) events (too slow to read)"
        default:
            return nil
        }
    }

    private func state(_ address: String, name: String?) -> DeviceState {
        var s = devices[address] ?? DeviceState(name: name ?? address)
        if let name { s.name = name }
        return s
    }


    /// The terminal frame: one block per device, in address order.
    public func render() -> [String] {
        var lines: [String] = []
        for address in devices.keys.sorted() {
            let s = devices[address]!
            var head = "\(s.name) [\(address)]" + (s.connected ? "" : "  (disconnected)")
            if let b = s.battery { head += "  battery \(b)%" }
            if let c = s.contact { head += "  contact \(c)" }
            if let r = s.rssi { head += "  RSSI \(r)" }
            lines.append(head)
            lines += workoutLines(for: address)
            var values: [String] = []
            if let hr = s.heartRate { values.append("♥ \(SampleText.number(hr)) bpm") }
            if !s.rr.isEmpty { values.append("RR \(s.rr.map(String.init).joined(separator: " ")) ms") }
            if let (v, u) = s.speed { values.append("speed \(SampleText.number(v)) \(u)") }
            if let (v, u) = s.cadence { values.append("cadence \(SampleText.number(v)) \(u)") }
            lines.append("  " + (values.isEmpty ? "waiting for data" : values.joined(separator: "  ")))
            if !s.history.isEmpty { lines.append("  " + Self.sparkline(s.history, end: latest)) }
        }
        if dropped > 0 { lines.append("(\(dropped) events dropped: terminal too slow)") }
        return lines.isEmpty ? ["waiting for sensors…"] : lines
    }

    static let bars: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The last minute in 30 cells of 2 s (cell average); blank where there was no sample.
    static func sparkline(_ history: [(Int64, Double)], end: Int64, cells: Int = 30) -> String {
        let start = end - 60_000
        var sums = [Double](repeating: 0, count: cells), counts = [Int](repeating: 0, count: cells)
        for (t, v) in history where t > start && t <= end {
            let i = min(cells - 1, Int((t - start - 1) * Int64(cells) / 60_000))
            sums[i] += v
            counts[i] += 1
        }
        let values = (0..<cells).map { counts[$0] > 0 ? sums[$0] / Double(counts[$0]) : nil }
        let present = values.compactMap { $0 }
        guard let lo = present.min(), let hi = present.max() else { return "" }
        return String(values.map { v -> Character in
            guard let v else { return " " }
            let level = hi > lo ? Int(((v - lo) / (hi - lo) * 7).rounded()) : 3
            return bars[level]
        })
    }
}
