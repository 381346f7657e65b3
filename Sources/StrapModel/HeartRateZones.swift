import StrapModel

/// A zone scheme turned into heart rates for one athlete: six ascending bpm bounds, zone k
/// (1…5) = [bpm[k−1], bpm[k]), zone 5 open upwards, zone 0 = below zone 1.
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
}
