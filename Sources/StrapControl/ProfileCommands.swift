import StrapModel
import StrapWire

/// `strapctl profile`: an athlete's profile through `profile.get`/`profile.set`
/// (docs/protocol-workouts.md). Unset fields are shown as unset, never as a default; the one
/// estimate the daemon makes (the maximum heart rate) is marked as such.
enum ProfileCommands {
    static let usage = """
        usage: strapctl [--socket PATH] [--json] profile [show] [--athlete NAME]
               strapctl profile set [--athlete NAME] KEY=VALUE...
               strapctl profile get [--athlete NAME] FIELD
        KEY=VALUE: dateOfBirth=1990-04-01  biologicalSex=female|male|other  weight=72.5 (kg)
          height=178 (cm)  restingHeartRate=52  maximumHeartRate=188  lactateThresholdHeartRate=165
          (bpm)  vo2Max=48 (ml/kg/min)  ftp=250 (functionalThresholdPower, W)  zones=percentMaxHR|heartRateReserve|percentLTHR[:b0,…,b5]
          (six ascending percentages)  device.ADDR.wheelCircumference=2.105 (m)
          device.ADDR.cadenceIsStepsPerMinute=true|false
          KEY= clears a field; device.ADDR= forgets a sensor's settings, devices= every sensor's.
        FIELD: one of those names (zones, or heartRateZones; ftp, or functionalThresholdPower), or devices. The athlete is default
        unless --athlete is given. An athlete without a profile, or an unset FIELD, exits 6.
        """

    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        switch args.first {
        case "set": return try set(Array(args.dropFirst()), ctx)
        case "get": return try get(Array(args.dropFirst()), ctx)
        case "show": return try show(Array(args.dropFirst()), ctx)
        case "help", "--help", "-h":
            ctx.sink.print(usage)
            return ExitCode.success
        default: return try show(args, ctx)
        }
    }

    static func athleteParams(_ a: Arguments) -> JSONObject {
        a.value("athlete").map { ["athlete": .string($0)] } ?? JSONObject()
    }

    static func show(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["athlete"], flags: [])
        if let extra = a.positional.first { throw UsageError(message: "unknown profile command '\(extra)'") }
        let r = try ctx.call("profile.get", athleteParams(a))
        if !ctx.json { for line in showLines(r) { ctx.sink.print(line) } }
        return ExitCode.success
    }

    static func set(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["athlete"], flags: [])
        let patch = try ProfilePatch(a.positional)
        var current = JSONObject()
        if patch.needsCurrentDevices {
            // A sensor's settings are replaced whole: merge the fields given into what is set.
            do {
                current = try ctx.call("profile.get", athleteParams(a).merging(["field": .string("devices")]), echo: false)
                    .object("devices") ?? JSONObject()
            } catch let e as DaemonReplyError where e.code == "noData" {}
        }
        let r = try ctx.call("profile.set", athleteParams(a).merging(["profile": .object(patch.json(currentDevices: current))]))
        if ctx.json { return ExitCode.success }
        // Shown as `profile` shows it, with the estimated maximum where there is one.
        let shown = (try? ctx.call("profile.get", athleteParams(a), echo: false)) ?? r
        for line in showLines(shown) { ctx.sink.print(line) }
        return ExitCode.success
    }

    static func get(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(args, options: ["athlete"], flags: [])
        var field = try a.single("profile field")
        field = ["zones": "heartRateZones", "device": "devices", "ftp": "functionalThresholdPower"][field] ?? field
        let r = try ctx.call("profile.get", athleteParams(a).merging(["field": .string(field)]))
        if ctx.json { return ExitCode.success }
        guard let value = r[field] else { throw ClientError.malformed("profile.get answered without \(field)") }
        for line in valueLines(field, value) { ctx.sink.print(line) }
        return ExitCode.success
    }

    static let fieldOrder = ["dateOfBirth", "biologicalSex", "weight", "height", "restingHeartRate", "maximumHeartRate",
                             "lactateThresholdHeartRate", "vo2Max", "functionalThresholdPower", "heartRateZones", "devices"]

    /// `profile.get`'s (or `profile.set`'s) result, every field, unset ones said to be unset.
    static func showLines(_ r: JSONObject) -> [String] {
        let profile = r.object("profile") ?? JSONObject()
        var lines = ["athlete \(r.string("athlete") ?? "default")"]
        for field in fieldOrder {
            var text: [String]
            switch field {
            case "maximumHeartRate":
                if let m = r.object("maximumHeartRate") {
                    text = [maximumText(m)]
                } else if let v = profile["maximumHeartRate"] {
                    text = valueLines(field, v)
                } else {
                    text = ["not set (set it, or dateOfBirth to estimate it)"]
                }
            case "dateOfBirth":
                text = profile[field].map { valueLines(field, $0) } ?? ["not set"]
                if let age = r.int("age"), !text.isEmpty, profile[field] != nil { text[0] += " (age \(age))" }
            case "heartRateZones":
                text = profile[field].map { v in valueLines(field, v).map { $0 + " %" } }
                    ?? ["not set (the default percentMaxHR:50,60,70,80,90,100 is used)"]
            default:
                text = profile[field].map { valueLines(field, $0) } ?? [field == "devices" ? "none" : "not set"]
            }
            let unit = ["weight": " kg", "height": " cm", "restingHeartRate": " bpm", "lactateThresholdHeartRate": " bpm",
                        "vo2Max": " ml/kg/min", "functionalThresholdPower": " W"][field]
            if let unit, profile[field] != nil { text[0] += unit }
            if field == "functionalThresholdPower", let ftp = profile.number(field),
               let zones = try? PowerZones(functionalThresholdPower: ftp) {
                text[0] += " (power zones 1–6 up to " + zones.upperBounds.map { TextFormat.number($0.rounded()) }
                    .joined(separator: ", ") + " W)"
            }
            if field == "maximumHeartRate", r.object("maximumHeartRate") == nil, profile[field] != nil { text[0] += " bpm" }
            for (i, t) in text.enumerated() { lines.append("  " + (i == 0 ? field : "").padding(27) + t) }
        }
        return lines
    }

    /// `182.8 bpm estimated (Tanaka 2001)`, or `190 bpm`.
    static func maximumText(_ m: JSONObject, unit: String = " bpm") -> String {
        let value = m.number("value").map { TextFormat.number(($0 * 10).rounded() / 10) } ?? "?"
        guard m.bool("estimated") == true else { return value + unit }
        let formula = m.string("formula") == "tanaka2001" ? "Tanaka 2001" : m.string("formula") ?? "?"
        return "\(value)\(unit) estimated (\(formula))"
    }

    /// A field's value as `profile set` takes it (so `get` output can be fed back).
    static func valueLines(_ field: String, _ v: WireJSON) -> [String] {
        switch (field, v) {
        case ("maximumHeartRate", .object(let m)):
            return [maximumText(m, unit: "")]
        case ("heartRateZones", .object(let z)):
            let bounds = WorkoutDetails.doubles(z["bounds"]).map(TextFormat.number).joined(separator: ",")
            return ["\(z.string("method") ?? "?")" + (bounds.isEmpty ? "" : ":\(bounds)")]
        case ("devices", .object(let devices)):
            return devices.entries.sorted { $0.key < $1.key }.map { address, settings in
                guard case .object(let s) = settings else { return address }
                return address + " " + s.entries.sorted { $0.key < $1.key }
                    .map { "\($0.key)=\(DaemonCommands.plain($0.value))" }.joined(separator: " ")
            }
        default:
            return [DaemonCommands.plain(v)]
        }
    }
}

/// `profile set`'s KEY=VALUE arguments as a `profile.set` patch. Numbers and booleans are
/// checked here (a typo is a usage error); ranges and names are the daemon's to judge, so its
/// message (`weight must be from 10 to 400 kg, got 0`) is what the user sees.
struct ProfilePatch {
    static let numeric: Set<String> = ["weight", "height", "restingHeartRate", "maximumHeartRate", "lactateThresholdHeartRate", "vo2Max",
                                       "functionalThresholdPower"]
    static let deviceFields = ["wheelCircumference", "cadenceIsStepsPerMinute"]

    /// Top-level fields except `devices`.
    private(set) var fields = JSONObject()
    /// In order: (address, field or nil for the whole sensor, value or nil to clear).
    private(set) var deviceChanges: [(address: String, field: String?, value: WireJSON?)] = []
    private(set) var forgetsAllDevices = false

    init(_ assignments: [String]) throws(UsageError) {
        guard !assignments.isEmpty else { throw UsageError(message: "profile set needs KEY=VALUE arguments") }
        var seen: Set<String> = []
        for item in assignments {
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw UsageError(message: "profile set takes KEY=VALUE, got '\(item)'")
            }
            var key = String(item[..<eq])
            let value = String(item[item.index(after: eq)...])
            guard seen.insert(key).inserted else { throw UsageError(message: "\(key) is given twice") }
            if key == "zones" { key = "heartRateZones" }
            if key == "ftp" { key = "functionalThresholdPower" }
            if key.hasPrefix("device.") {
                try device(String(key.dropFirst(7)), value, item)
                continue
            }
            if value.isEmpty {
                if key == "devices" { forgetsAllDevices = true } else { fields[key] = .null }
                continue
            }
            switch key {
            case "devices":
                throw UsageError(message: "devices= (empty) forgets every sensor's settings; set one with device.ADDR.FIELD=VALUE")
            case "heartRateZones":
                fields[key] = .object(try Self.zones(value))
            case _ where Self.numeric.contains(key):
                fields[key] = .double(try Self.number(value, key))
            default:
                // dateOfBirth, biologicalSex, and names the daemon will refuse with the list.
                fields[key] = .string(value)
            }
        }
        if forgetsAllDevices, !deviceChanges.isEmpty {
            throw UsageError(message: "devices= forgets every sensor: it cannot be combined with device.ADDR settings")
        }
    }

    /// `ADDR.FIELD=VALUE` or `ADDR=` (forget the sensor). Addresses contain no dots.
    private mutating func device(_ rest: String, _ value: String, _ item: String) throws(UsageError) {
        guard let dot = rest.lastIndex(of: ".") else {
            guard value.isEmpty, !rest.isEmpty else {
                throw UsageError(message: "\(item): give device.ADDR.FIELD=VALUE (FIELD: \(Self.deviceFields.joined(separator: ", "))), or device.ADDR= to forget ADDR")
            }
            deviceChanges.append((rest, nil, nil))
            return
        }
        let address = String(rest[..<dot]), field = String(rest[rest.index(after: dot)...])
        guard !address.isEmpty, Self.deviceFields.contains(field) else {
            throw UsageError(message: "\(item): a sensor's settings are \(Self.deviceFields.joined(separator: ", ")) (device.ADDR.FIELD=VALUE)")
        }
        guard !value.isEmpty else { deviceChanges.append((address, field, nil)); return }
        if field == "wheelCircumference" {
            deviceChanges.append((address, field, .double(try Self.number(value, "device.\(address).\(field)"))))
        } else {
            guard let b = ["true": true, "false": false][value] else {
                throw UsageError(message: "device.\(address).\(field) must be true or false, got '\(value)'")
            }
            deviceChanges.append((address, field, .bool(b)))
        }
    }

    var needsCurrentDevices: Bool { !deviceChanges.isEmpty }

    /// The patch, with each touched sensor's settings merged into `currentDevices` (the
    /// profile's `devices` now): `profile.set` replaces a sensor's settings whole.
    func json(currentDevices: JSONObject) -> JSONObject {
        var patch = fields
        if forgetsAllDevices { patch["devices"] = .null }
        guard !deviceChanges.isEmpty else { return patch }
        var settings: [String: JSONObject?] = [:]
        var order: [String] = []
        for change in deviceChanges {
            if settings[change.address] == nil {
                order.append(change.address)
                if case .object(let o)? = currentDevices[change.address] { settings[change.address] = o } else { settings[change.address] = JSONObject() }
            }
            guard let field = change.field else { settings[change.address] = .some(nil); continue }
            var s = settings[change.address].flatMap { $0 } ?? JSONObject()
            s[field] = change.value
            settings[change.address] = s
        }
        var devices = JSONObject()
        for address in order {
            let s = settings[address].flatMap { $0 }
            devices[address] = s.map { $0.isEmpty ? .null : .object($0) } ?? .null
        }
        patch["devices"] = .object(devices)
        return patch
    }

    static func number(_ text: String, _ key: String) throws(UsageError) -> Double {
        guard let v = Double(text), v.isFinite else { throw UsageError(message: "\(key) must be a number, got '\(text)'") }
        return v
    }

    /// `method` or `method:b0,b1,b2,b3,b4,b5`.
    static func zones(_ text: String) throws(UsageError) -> JSONObject {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var scheme: JSONObject = ["method": .string(String(parts[0]))]
        if parts.count == 2 {
            var bounds: [WireJSON] = []
            for b in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
                bounds.append(.double(try number(String(b), "zones bound")))
            }
            scheme["bounds"] = .array(bounds)
        }
        return scheme
    }
}

extension JSONObject {
    func merging(_ other: JSONObject) -> JSONObject {
        var out = self
        for (k, v) in other.entries { out[k] = v }
        return out
    }
}
