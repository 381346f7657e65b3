/// A workout as text: the summary, laps table, events and zones of `workout end`, `workout
/// show` and the end of `workout follow`. Each part is a function returning lines, so a
/// command composes what it needs and a chart (`lines(_:chart:)`) goes between the summary
/// and the tables.
enum WorkoutReport {
    /// Summary, then `chart` (the heart-rate curve, WorkoutCharts), laps, events, zones: as
    /// `zoneBars` when given (a bar per zone), else as a table.
    static func lines(_ d: WorkoutDetails, chart: [String] = [], zoneBars: [String]? = nil) -> [String] {
        var out = summary(d, zonesInline: false)
        if !chart.isEmpty { out += [""] + chart }
        out += [""] + laps(d)
        let events = self.events(d)
        if !events.isEmpty { out += [""] + events }
        if let zoneBars, let heading = zones(d).first {
            out += ["", heading] + zoneBars
        } else {
            out += [""] + zones(d)
        }
        return out
    }

    /// What `workout end` prints: the summary with time in zones on one line, and the laps.
    static func endLines(_ d: WorkoutDetails) -> [String] {
        summary(d, zonesInline: true) + [""] + laps(d)
    }

    static func title(_ d: WorkoutDetails) -> String {
        if let uuid = d.workoutUUID {
            return "workout \(uuid)" + (d.sessionID.map { " (session \($0))" } ?? "")
        }
        return "session \(d.sessionID ?? "?")" + (d.state.map { " (\($0))" } ?? "")
    }

    static func summary(_ d: WorkoutDetails, zonesInline: Bool) -> [String] {
        var rows: [(String, String)] = []
        rows.append(("activity", "\(d.activityType), \(d.locationType)" + (d.athlete.map { ", athlete \($0)" } ?? "")))
        if let start = d.start {
            rows.append(("time", TextFormat.dateTime(start) + " UTC → " + (d.end.map(TextFormat.clock) ?? "now")))
        }
        let f = d.figures
        rows.append(("duration", (f["elapsedTime"].map(TextFormat.duration) ?? "-") + " (excluding pauses)"))
        if let m = f["distance"] { rows.append(("distance", TextFormat.distance(m))) }
        rows.append(("heart rate", heartRate(f)))
        if let hrv = WorkoutHRV.summaryLine(f) {
            rows.append(("HRV", hrv))
        } else if let reason = d.hrvReason {
            rows.append(("HRV", "unknown: " + reason))
        }
        rows.append(("energy", energy(d)))
        if let avg = f["speedAverage"] {
            rows.append(("speed", "avg \(TextFormat.speed(avg))" + (f["speedMaximum"].map { ", max \(TextFormat.speed($0))" } ?? "")))
        }
        if let avg = f["cadenceAverage"] {
            let unit = TextFormat.cadenceUnit(activity: d.activityType)
            rows.append(("cadence", "avg \(TextFormat.number(avg.rounded())) \(unit)" +
                         (f["cadenceMaximum"].map { ", max \(TextFormat.number($0.rounded())) \(unit)" } ?? "")))
        }
        rows += power(f)
        if zonesInline { rows.append(("zones", inlineZones(d))) }
        rows.append(("devices", d.deviceIDs.isEmpty ? "none" : d.deviceIDs.joined(separator: ", ")))
        if !d.unknownDevices.isEmpty { rows.append(("", unknownDevicesNote(d.unknownDevices))) }
        if let meta = d.metadata, !meta.isEmpty { rows.append(("metadata", TextFormat.metadata(meta))) }
        return [title(d)] + rows.map { "  " + $0.0.padding(12) + $0.1 }
    }

    /// The saved workout's power figures (docs/workouts.md "Power figures"); none without power.
    static func power(_ f: [String: Double]) -> [(String, String)] {
        guard let avg = f["powerAverage"] else { return [] }
        func w(_ v: Double) -> String { "\(Int(v.rounded())) W" }
        var rows = [("power", "avg \(w(avg))" + (f["powerMaximum"].map { ", max \(w($0))" } ?? "")
                     + (f["powerNormalized"].map { ", NP \(w($0))" } ?? "")
                     + (f["powerWork"].map { ", work \(Int($0.rounded())) kJ" } ?? ""))]
        if let ftp = f["functionalThresholdPower"], let intensity = f["powerIntensityFactor"] {
            rows.append(("", "FTP \(w(ftp)): IF \(TextFormat.fixed(intensity, 2))"
                         + (f["powerTrainingStressScore"].map { ", TSS \(Int($0.rounded()))" } ?? "")))
            let zones = (1...7).compactMap { f["timeInPowerZone\($0)"] }
            if zones.count == 7 {
                rows.append(("", zones.enumerated().map { "P\($0 + 1) " + TextFormat.duration($1) }.joined(separator: " · ")))
            }
        } else {
            rows.append(("", "IF, TSS, power zones: no functionalThresholdPower in the profile when it started"))
        }
        let best = [(5, "5 s"), (60, "1 min"), (300, "5 min"), (1_200, "20 min"), (3_600, "60 min")]
            .compactMap { d, name in f["powerBest\(d)s"].map { "\(name) \(w($0))" } }
        if !best.isEmpty { rows.append(("best power", best.joined(separator: " · "))) }
        return rows
    }

    /// Said wherever a session's devices are: an address strapd never saw is most likely a typo,
    /// and the session counts nothing from it.
    static func unknownDevicesNote(_ unknown: [String]) -> String {
        "never seen by strapd: " + unknown.joined(separator: ", ")
            + (unknown.count == 1 ? " (nothing counts from it unless it connects)" : " (nothing counts from them unless they connect)")
    }

    static func heartRate(_ f: [String: Double]) -> String {
        guard let avg = f["heartRateAverage"] else { return "no readings" }
        var parts = ["avg \(TextFormat.bpm(avg))"]
        if let max = f["heartRateMaximum"] { parts.append("max \(TextFormat.bpm(max))") }
        if let min = f["heartRateMinimum"] { parts.append("min \(TextFormat.bpm(min))") }
        return parts.joined(separator: ", ")
    }

    /// The energy and where it came from, or why it is unknown (the daemon's reason verbatim).
    static func energy(_ d: WorkoutDetails) -> String {
        guard let kcal = d.figures["activeEnergy"] else { return "unknown: " + (d.energyReason ?? "no reason given") }
        return TextFormat.kcal(kcal) + (d.energySource.map { " (\(energySourceName($0)))" } ?? "")
    }

    static func energySourceName(_ source: String) -> String {
        switch source {
        case "power": "from the power meter's work at 24 % gross efficiency"
        case "sensor": "from the strap's Energy Expended"
        case "keytel": "Keytel 2005 estimate from heart rate"
        case "keytelVO2max": "Keytel 2005 estimate from heart rate and VO2max"
        default: source
        }
    }

    static func zoneName(_ k: Int) -> String { k == 0 ? "below 1" : "\(k)" }

    /// `below 0:02 · Z1 0:05 · … · Z5 0:00 (percentMaxHR …)`, or why the zones are unknown.
    static func inlineZones(_ d: WorkoutDetails) -> String {
        guard let times = d.timeInZones else { return "unknown: " + (d.zonesReason ?? "no heart-rate zones") }
        let parts = times.enumerated().map { k, t in (k == 0 ? "below" : "Z\(k)") + " " + TextFormat.duration(t) }
        return parts.joined(separator: " · ") + (d.zones.map { "  (\(scheme($0)))" } ?? "")
    }

    /// `percentMaxHR, default scheme, maximum 190 bpm estimated (Tanaka 2001)`.
    static func scheme(_ z: WorkoutDetails.Zones) -> String {
        var text = z.method + (z.isDefaultScheme ? ", default scheme" : ", profile scheme")
        if let max = z.maximumHeartRate {
            text += ", maximum \(TextFormat.bpm(max))" + (z.maximumEstimated ? " estimated (Tanaka 2001)" : "")
        }
        return text
    }

    /// One row per lap; speed and cadence columns only when some lap has them.
    static func laps(_ d: WorkoutDetails) -> [String] {
        guard !d.laps.isEmpty else { return ["laps: none"] }
        let hasSpeed = d.laps.contains { $0.figures["speedAverage"] != nil }
        let hasCadence = d.laps.contains { $0.figures["cadenceAverage"] != nil }
        let hasPower = d.laps.contains { $0.figures["powerAverage"] != nil }
        var header = ["LAP", "START", "TIME", "DISTANCE", "AVG HR", "MAX HR", "ENERGY"]
        if hasSpeed { header.append("AVG SPEED") }
        if hasCadence { header.append("CADENCE") }
        if hasPower { header += ["AVG W", "NP"] }
        var rows = [header]
        let unit = TextFormat.cadenceUnit(activity: d.activityType)
        let open = d.state != nil && d.state != "ended"
        for lap in d.laps {
            let f = lap.figures
            let index = "\(lap.index)" + (lap.end == nil && open ? "*" : "")
            var row: [String] = [index, TextFormat.clock(lap.start)]
            row.append(cell(f["elapsedTime"], TextFormat.duration))
            row.append(cell(f["distance"], TextFormat.distance))
            row.append(cell(f["heartRateAverage"]) { "\(Int($0.rounded()))" })
            row.append(cell(f["heartRateMaximum"]) { "\(Int($0.rounded()))" })
            row.append(cell(f["activeEnergy"], TextFormat.kcal))
            if hasSpeed { row.append(cell(f["speedAverage"], TextFormat.speed)) }
            if hasCadence { row.append(cell(f["cadenceAverage"]) { "\(Int($0.rounded())) \(unit)" }) }
            if hasPower {
                row.append(cell(f["powerAverage"]) { "\(Int($0.rounded()))" })
                row.append(cell(f["powerNormalized"]) { "\(Int($0.rounded()))" })
            }
            rows.append(row)
        }
        return TextFormat.table(rows)
    }

    static func cell(_ v: Double?, _ format: (Double) -> String) -> String { v.map(format) ?? "-" }

    static func events(_ d: WorkoutDetails) -> [String] {
        guard !d.events.isEmpty else { return [] }
        let rows = d.events.map { e in [TextFormat.clock(e.time), e.kind, TextFormat.metadata(e.metadata)] }
        return ["events"] + TextFormat.table(rows).map { "  " + $0.trimmingTrailingSpaces }
    }

    /// The zone table: bpm range, time and share of each zone.
    static func zones(_ d: WorkoutDetails) -> [String] {
        guard let times = d.timeInZones else {
            return ["heart-rate zones unknown: " + (d.zonesReason ?? "no zones in this workout")]
        }
        let out = ["heart-rate zones" + (d.zones.map { ": \(scheme($0))" } ?? "")]
        let bpm = d.zones?.bpm ?? []
        let total = times.reduce(0, +)
        var rows = [["ZONE", "BPM", "TIME", "SHARE"]]
        for (k, t) in times.enumerated() {
            var range = "-"
            if bpm.count == 6 {
                let low = Int(bpm[max(0, k - 1)].rounded()), high = Int(bpm[min(5, k)].rounded())
                range = k == 0 ? "< \(high)" : k == 5 ? "≥ \(low)" : "\(low)–\(high - 1)"
            }
            let share = total > 0 ? "\(Int((t / total * 100).rounded()))%" : "-"
            rows.append([zoneName(k), range, TextFormat.duration(t), share])
        }
        return out + TextFormat.table(rows).map { "  " + $0 }
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
