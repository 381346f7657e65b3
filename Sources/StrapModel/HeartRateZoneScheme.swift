import FoundationEssentials

/// What a zone scheme's percentages are percentages of (docs/workouts.md, "Zones").
public enum HeartRateZoneMethod: String, Codable, Sendable, CaseIterable, Hashable {
    /// bpm = p % × maximum heart rate.
    case percentMaxHR
    /// Karvonen: bpm = resting + p % × (maximum − resting).
    case heartRateReserve
    /// bpm = p % × lactate-threshold heart rate.
    case percentLTHR

    /// The bounds used when a scheme names only its method.
    public var defaultBounds: [Double] {
        switch self {
        case .percentMaxHR, .heartRateReserve: [50, 60, 70, 80, 90, 100]
        // GoldenCheetah's LTHR zones: Z2 from 68 %, Z3 83 %, Z4 94 %, Z5 105 %; its Z1 has
        // no lower limit, ours starts at 50 % so that "below zone 1" still means resting.
        case .percentLTHR: [50, 68, 83, 94, 105, 120]
        }
    }

    public init(parsing text: String) throws(StrapError) {
        guard let m = HeartRateZoneMethod(rawValue: text) else {
            throw .invalidOption("heartRateZones.method: '\(text)' is not one of "
                + HeartRateZoneMethod.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self = m
    }
}

/// Five heart-rate zones as six ascending percentage bounds: zone k (1…5) is
/// [bounds[k−1], bounds[k]) with zone 5 open upwards; below bounds[0] is "below zone 1".
public struct HeartRateZoneScheme: Codable, Sendable, Hashable {
    public var method: HeartRateZoneMethod
    public var bounds: [Double]

    public init(method: HeartRateZoneMethod, bounds: [Double]? = nil) {
        self.method = method
        self.bounds = bounds ?? method.defaultBounds
    }

    public static let boundCount = 6
    public static let percentRange: ClosedRange<Double> = 0...300

    public func validate() throws(StrapError) {
        guard bounds.count == Self.boundCount else {
            throw .invalidOption("heartRateZones.bounds: 5 zones need \(Self.boundCount) bounds, got \(bounds.count)")
        }
        for (i, b) in bounds.enumerated() {
            guard b.isFinite, Self.percentRange.contains(b) else {
                throw .invalidOption("heartRateZones.bounds[\(i)]: \(AthleteProfile.format(b)) is not a percentage from 0 to 300")
            }
            if i > 0, b <= bounds[i - 1] {
                throw .invalidOption("heartRateZones.bounds must ascend: \(AthleteProfile.format(bounds[i - 1])) then \(AthleteProfile.format(b))")
            }
        }
    }

    enum CodingKeys: String, CodingKey { case method, bounds }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let method = try HeartRateZoneMethod(parsing: try c.decode(String.self, forKey: .method))
        self.init(method: method, bounds: try c.decodeIfPresent([Double].self, forKey: .bounds))
    }
}
