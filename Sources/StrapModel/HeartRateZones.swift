/// A zone scheme turned into heart rates for one athlete: six ascending bpm bounds, zone k
/// (1…5) = [bpm[k−1], bpm[k]), zone 5 open upwards, zone 0 = below zone 1 (from 0 bpm). The
/// one zone type: the workout engine counts time in these zones, the summary stores their
/// bounds, and the charts draw them.
public struct HeartRateZones: Sendable, Hashable, Codable {
    public var scheme: HeartRateZoneScheme
    /// The scheme is the default (percentMaxHR, 50…100 %) because the profile sets none.
    public var isDefaultScheme: Bool
    public var bpm: [Double]
    /// The maximum heart rate the bounds used (percentMaxHR and heartRateReserve).
    public var maximumHeartRate: MaximumHeartRate?
    public var restingHeartRate: Double?
    public var lactateThresholdHeartRate: Double?

    public static let defaultScheme = HeartRateZoneScheme(method: .percentMaxHR)
    /// Below zone 1, then zones 1…5: the length of every time-in-zones array.
    public static let count = 6

    /// Zones from bounds already in bpm (a saved workout's `heartRateZoneBound0…5`): six
    /// ascending finite values, the first above 0.
    public init(bpm: [Double], scheme: HeartRateZoneScheme = Self.defaultScheme, isDefaultScheme: Bool = false) throws(StrapError) {
        guard bpm.count == Self.count else { throw .invalidOption("heart-rate zones need \(Self.count) bounds in bpm, got \(bpm.count)") }
        guard bpm.allSatisfy(\.isFinite), bpm[0] > 0 else { throw .invalidOption("heart-rate zone bounds must be finite and above 0") }
        for i in 1..<bpm.count where !(bpm[i] > bpm[i - 1]) {
            throw .invalidOption("heart-rate zone bounds must ascend (\(bpm[i - 1]) then \(bpm[i]))")
        }
        self.scheme = scheme
        self.isDefaultScheme = isDefaultScheme
        self.bpm = bpm
    }

    /// The profile's scheme (or the default one) in bpm on `date` (for an estimated maximum
    /// heart rate), or `noData` naming what the scheme needs and the profile lacks.
    public init(profile: AthleteProfile?, on date: CalendarDate) throws(StrapError) {
        let p = profile ?? AthleteProfile()
        scheme = p.heartRateZones ?? Self.defaultScheme
        isDefaultScheme = p.heartRateZones == nil
        let pct = scheme.bounds
        switch scheme.method {
        case .percentMaxHR:
            let max = try Self.maximum(p, date)
            maximumHeartRate = max
            bpm = pct.map { $0 / 100 * max.value }
        case .heartRateReserve:
            guard let rest = p.restingHeartRate else {
                throw .noData("heart-rate reserve zones need restingHeartRate in the profile")
            }
            let max = try Self.maximum(p, date)
            guard max.value > rest else {
                throw .noData("heart-rate reserve zones need a maximum heart rate above the resting one "
                    + "(\(max.value) estimated ≤ \(rest))")
            }
            maximumHeartRate = max
            restingHeartRate = rest
            bpm = pct.map { rest + $0 / 100 * (max.value - rest) }
        case .percentLTHR:
            guard let lt = p.lactateThresholdHeartRate else {
                throw .noData("lactate-threshold zones need lactateThresholdHeartRate in the profile")
            }
            lactateThresholdHeartRate = lt
            bpm = pct.map { $0 / 100 * lt }
        }
    }

    private static func maximum(_ p: AthleteProfile, _ date: CalendarDate) throws(StrapError) -> MaximumHeartRate {
        do throws(StrapError) { return try p.maximumHeartRate(on: date) } catch {
            throw .noData("\(p.heartRateZones?.method.rawValue ?? "percentMaxHR") zones need maximumHeartRate "
                + "or dateOfBirth (to estimate it) in the profile")
        }
    }

    /// 0 below zone 1, else the zone 1…5.
    public func zone(of heartRate: Double) -> Int {
        var z = 0
        while z < 5 && heartRate >= bpm[z] { z += 1 }
        return z
    }

    /// Each zone's range for people: "<95" below zone 1, "95-114" … , ">=171" for zone 5.
    public var labels: [String] {
        let b = bpm.map { Int($0.rounded()) }
        return ["<\(b[0])"] + (1..<5).map { "\(b[$0 - 1])-\(b[$0])" } + [">=\(b[4])"]
    }
}

extension Sample {
    /// Whether this `heartRate` sample is a heart rate: every figure (the workout's summary and
    /// live statistics, the exports' records and totals, the charts) counts only these. 0 is
    /// the strap's "no reading" (also tagged `quality=noReading`), and a value sent while the
    /// strap reports skin contact not detected is noise from a strap off the chest.
    @inlinable public var isHeartRateReading: Bool {
        guard type == .heartRate, value > 0, value.isFinite else { return false }
        guard hasExtras else { return true }
        let m = metadata
        return m["contact"] != "notDetected" && m["quality"] != "noReading"
    }
}
