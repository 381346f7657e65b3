import Foundation
import Testing
import StrapModel
@testable import StrapExport

/// A synthetic workout on whole seconds plus what its FIT and TCX exports must contain,
/// computed here from the scenario's own numbers and docs/export.md's rules, not by the encoder.
struct ExportScenario: Sendable {
    var start: Millis                       // a whole second
    var seconds: Int
    var hr: @Sendable (Int) -> Double? = { _ in nil }
    var rr: @Sendable (Int) -> [UInt16] = { _ in [] }
    var speed: (@Sendable (Int) -> Double?)?
    var energyEvery = 0
    var pauses: [Range<Int>] = []           // second offsets, timer stopped
    var lapStarts: [Int] = [0]
    var markers: [Int] = []
    var activity = "running"

    var synthetic: SyntheticWorkout {
        let ms = { (i: Int) in start + Millis(i) * 1000 }
        var events: [Workout.Event] = []
        for p in pauses {
            events.append(.init(kind: "pause", time: ms(p.lowerBound)))
            if p.upperBound < seconds { events.append(.init(kind: "resume", time: ms(p.upperBound))) }
        }
        events += markers.map { .init(kind: "marker", time: ms($0), metadata: ["note": "m\($0)"]) }
        let bounds = lapStarts + [seconds]
        let laps = (0..<lapStarts.count).map { Workout.Lap(start: ms(bounds[$0]), end: ms(bounds[$0 + 1])) }
        return SyntheticWorkout.running(start: start, seconds: seconds, hr: hr, rr: rr, speed: speed,
                                        energyEvery: energyEvery, events: events, laps: laps, activity: activity)
    }

    func paused(_ i: Int) -> Bool { pauses.contains { $0.contains(i) } }
    func lap(_ i: Int) -> Int { lapStarts.lastIndex { $0 <= i } ?? 0 }
    var unix0: Int { Expected.unixSeconds(start) }

    var heartRates: [Double?] {
        Expected.perSecond(Dictionary(uniqueKeysWithValues: (0..<seconds).compactMap { i in hr(i).map { (i, [$0]) } }),
                           seconds: seconds)
    }

    var speeds: [Double?] {
        guard let speed else { return Array(repeating: nil, count: seconds) }
        return Expected.perSecond(Dictionary(uniqueKeysWithValues: (0..<seconds).compactMap { i in speed(i).map { (i, [$0]) } }),
                                  seconds: seconds)
    }

    /// Metres moved in second i (the increments cover exactly their second).
    func moved(_ i: Int) -> Double { max(0, speed?(i) ?? 0) }
    func energy(_ i: Int) -> Double { energyEvery > 0 && i % energyEvery == energyEvery - 1 ? 1.5 : 0 }

    /// Every beat: the second its time falls in (the last beat of second i's series is at
    /// i + 0.3 s, the earlier ones before it by their intervals) and its raw 1/1024 s value.
    var beats: [(second: Int, raw: Double)] {
        (0..<seconds).flatMap { i -> [(second: Int, raw: Double)] in
            let intervals = rr(i)
            var after = 0
            var out: [(second: Int, raw: Double)] = []
            for r in intervals.reversed() {
                let time = Double(i) + 0.3 - Double(after) / 1024
                out.append((Int(time.rounded(.down)), Double(r)))
                after += Int(r)
            }
            return out.reversed()
        }
    }

    /// Seconds written as FIT records and TCX trackpoints.
    var pointSeconds: [Int] {
        let h = heartRates, s = speeds
        return (0..<seconds).filter { !paused($0) && (h[$0] != nil || s[$0] != nil || moved($0) > 0) }
    }

    var records: [[Any]] {
        let h = heartRates
        return pointSeconds.map { [unix0 + $0, h[$0].map { Int($0.rounded()) } as Any? ?? NSNull()] }
    }

    func segment(_ range: Range<Int>, lapIndex: Int?, _ heartRates: [Double?], _ speeds: [Double?]) -> [String: Any] {
        let running = range.filter { !paused($0) }
        let h = running.compactMap { heartRates[$0] }, s = running.compactMap { speeds[$0] }
        var out: [String: Any] = [
            "start": unix0 + range.lowerBound, "timestamp": unix0 + range.upperBound,
            "elapsed": Double(range.count), "timer": Double(running.count),
            "avg_hr": h.isEmpty ? NSNull() : Int((h.reduce(0, +) / Double(h.count)).rounded()),
            "max_hr": h.max().map { Int($0.rounded()) } as Any? ?? NSNull(),
            "min_hr": h.min().map { Int($0.rounded()) } as Any? ?? NSNull(),
        ]
        let distanceStarted = (0..<range.upperBound).contains { moved($0) > 0 }
        out["distance"] = distanceStarted ? running.map(moved).reduce(0, +) : NSNull()
        let energyStarted = (0..<range.upperBound).contains { energy($0) > 0 }
        out["calories"] = energyStarted ? Int(running.map(energy).reduce(0, +).rounded()) : NSNull()
        if !s.isEmpty { out["avg_speed"] = s.reduce(0, +) / Double(s.count) }
        if lapIndex == nil { out["num_laps"] = lapStarts.count }
        return out
    }

    func fitExpectation() -> [String: Any] {
        let bounds = lapStarts + [seconds]
        let h = heartRates, s = speeds
        var session = segment(0..<seconds, lapIndex: nil, h, s)
        let mapping = ActivityMapping(activityType: activity, location: .outdoor)
        session["sport"] = ["running": "running", "cycling": "cycling", "walking": "walking"][activity] ?? "generic"
        session["sub_sport"] = mapping.subSport == 0 ? "generic" : "\(mapping.subSport)"
        var events: [[Any]] = [["timer", "start", unix0]]
        var marks: [(Int, [Any])] = []
        for p in pauses {
            marks.append((p.lowerBound, ["timer", "stop_all", unix0 + p.lowerBound]))
            if p.upperBound < seconds { marks.append((p.upperBound, ["timer", "start", unix0 + p.upperBound])) }
        }
        marks += markers.map { ($0, ["user_marker", "marker", unix0 + $0]) }
        events += marks.sorted { $0.0 < $1.0 }.map(\.1)
        if !pauses.contains(where: { $0.upperBound >= seconds }) { events.append(["timer", "stop_all", unix0 + seconds]) }
        return [
            "records": records,
            "laps": (0..<lapStarts.count).map { segment(bounds[$0]..<bounds[$0 + 1], lapIndex: $0, h, s) },
            "session": session,
            "hrv_ms": beats.filter { $0.second >= 0 && !paused($0.second) }.map { Int(($0.raw * 1000 / 1024).rounded()) },
            "events": events,
        ]
    }

    func tcxExpectation() -> [String: Any] {
        let bounds = lapStarts + [seconds]
        let points = Set(pointSeconds)
        let h = heartRates, s = speeds
        var distance = 0.0, calories = 0
        let laps: [[String: Any]] = (0..<lapStarts.count).map { i in
            let seg = segment(bounds[i]..<bounds[i + 1], lapIndex: i, h, s)
            distance += seg["distance"] as? Double ?? 0
            calories += seg["calories"] as? Int ?? 0
            var lap: [String: Any] = [
                "start": RFC3339.string(start + Millis(bounds[i]) * 1000),
                "total_time_s": seg["timer"]!, "distance": seg["distance"] as? Double ?? 0.0,
                "calories": seg["calories"] as? Int ?? 0, "avg_hr": seg["avg_hr"]!,
                "trackpoints": (bounds[i]..<bounds[i + 1]).filter { points.contains($0) }.count,
            ]
            if let max = seg["max_hr"] as? Int { lap["max_hr"] = max }
            return lap
        }
        var out: [String: Any] = ["trackpoints": records, "laps": laps, "distance": distance, "calories": calories,
                                  "sport": ["running": "Running", "cycling": "Biking"][activity] ?? "Other"]
        if let max = h.enumerated().filter({ points.contains($0.offset) }).compactMap(\.element).max() {
            out["hr_max"] = Int(max.rounded())
        }
        return out
    }
}
