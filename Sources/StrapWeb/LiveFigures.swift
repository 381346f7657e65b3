import FoundationEssentials
import StrapExport
import StrapKit
import StrapModel
import StrapWire

/// The figures the dashboard's tiles show beside a live sample's own value (docs/web.md, "The
/// dashboard's tiles"), worked out here with the code strapd uses for the same figure, so
/// the page computes none of them: a heart rate's zone (`HeartRateZones.zone(of:)`, the
/// zones the workout engine counts time in), the last RR interval and the RMSSD of the
/// recent ones (StrapExport's `HRVAnalysis`, what `workout.hrv` and the history page report),
/// a speed in km/h and a running speed as a pace. `LiveRelay` adds them to the `sample`
/// event as `figures`; strapd's own members are left as strapd wrote them.
public struct LiveFigures: Sendable {
    /// The RMSSD's window: the heartbeat series of the last minute of beats, by the newest
    /// series' end. Short-term HRV is read over 1–5 minutes; one minute moves with the
    /// effort on a tile and still holds some 60–180 intervals.
    public static let rmssdWindow: Millis = 60_000

    /// The default athlete's zones in bpm, as `profile.get` gives them (nil: no profile, or
    /// one that cannot give zones; then a heart rate has no zone).
    public var zones: HeartRateZones?
    /// Each device's heartbeat series of the window, oldest first.
    private var series: [String: [Sample]] = [:]

    public init(zones: HeartRateZones? = nil) { self.zones = zones }

    /// The sample types `figures(for:)` has a figure for, by their protocol names.
    static let typesWithFigures: Set<String> = Set([QuantityType.heartRate, .heartbeatSeries, .cyclingSpeed, .runningSpeed].map(\.rawValue))

    /// The figures for a `sample` event's data, nil when its type has none (or it does not
    /// decode as a sample).
    public mutating func figures(for data: JSONObject) -> JSONObject? {
        // Most of a live stream has no figure (cadence, distance, battery…): those are not
        // decoded into a Sample at all, the larger part of a relayed event's cost.
        guard case .string(let type)? = data["type"], Self.typesWithFigures.contains(type),
              let sample = try? Sample(protocolObject: data) else { return nil }
        switch sample.type {
        case .heartRate:
            // A non-reading (0, no skin contact) is said, so no page shows its value as a
            // heart rate: strapd stores and relays it, flagged, as the strap sent it.
            guard sample.isHeartRateReading else { return ["reading": .bool(false)] }
            guard let zones else { return nil }
            return ["zone": .int(Int64(zones.zone(of: sample.value)))]
        case .heartbeatSeries:
            return heartbeat(sample)
        case .cyclingSpeed, .runningSpeed:
            guard sample.value.isFinite, sample.value >= 0 else { return nil }
            var f: JSONObject = ["kilometresPerHour": .double(sample.value * 3.6)]
            // A pace is only for running (a cyclist reads km/h), and only while moving.
            if sample.type == .runningSpeed, sample.value > 0 { f["secondsPerKilometre"] = .double(1000 / sample.value) }
            return f
        default:
            return nil
        }
    }

    /// The series' last RR interval, and the RMSSD of the device's beats in the window ending
    /// at this series' end: HRVAnalysis filters them (range, Malik's rule) and pairs only
    /// intervals adjacent in the recording, as for a saved workout.
    private mutating func heartbeat(_ sample: Sample) -> JSONObject? {
        let address = sample.device.address
        var kept = series[address, default: []]
        // A series out of order (a reconnect's older beats) starts the window again.
        if let last = kept.last, sample.start < last.start { kept.removeAll() }
        kept.append(sample)
        let from = sample.end - Self.rmssdWindow
        kept.removeAll { $0.end < from }
        series[address] = kept
        guard let last = HRVAnalysis.intervals(of: [sample]).last else { return nil }
        var f: JSONObject = ["lastRR": .double(last.milliseconds)]
        let report = HRVAnalysis.analyze(samples: kept, range: from..<(sample.end + 1), deviceID: sample.device.id)
        if let rmssd = report.rmssd {
            f["rmssd"] = .double(rmssd)
            f["rmssdDifferences"] = .int(Int64(report.successiveDifferences))
        }
        return f
    }

    /// Forgets a device's beats (its link went down: the next series starts a new run anyway).
    public mutating func forget(address: String) { series[address] = nil }
}

/// The zones of an athlete from strapd's `profile.get` answer: the one decoding of a profile
/// into `HeartRateZones`, for the overlay and the live figures.
enum AthleteZones {
    static func zones(profileReply reply: JSONObject) -> HeartRateZones? {
        guard case .object(let fields)? = reply["profile"],
              let profile = try? JSONDecoder().decode(AthleteProfile.self, from: Data(JSONWriter.bytes(.object(fields)))),
              let zones = try? HeartRateZones(profile: profile, on: CalendarDate(utcMillis: Millis(Date().timeIntervalSince1970 * 1000))),
              zones.bpm.prefix(5).allSatisfy({ $0.isFinite && $0 > 0 && $0 < 400 }) else { return nil }
        return zones
    }
}
