import FoundationEssentials

/// What a step asks the athlete (or, in ERG, the trainer) to hold: WorkoutKit's alert targets.
/// One per step, as WorkoutKit has one alert per step. Ranges are closed, in the sample
/// types' units; relative targets are resolved against the athlete's profile when the session
/// starts (`resolved`), so a profile changed mid-ride does not move a running step.
public enum PlanTarget: Sendable, Hashable, Codable {
    case power(watts: ClosedRange<Double>)
    case powerPercentFTP(ClosedRange<Double>)
    case heartRate(bpm: ClosedRange<Double>)
    case heartRateZone(Int)
    case cadence(rpm: ClosedRange<Double>)

    public enum Resolved: Sendable, Hashable {
        case power(ClosedRange<Double>)
        case heartRate(ClosedRange<Double>)
        case cadence(ClosedRange<Double>)
    }

    static let wattLimit = 3_000.0, percentLimit = 300.0, bpmLimits = 30.0...250.0, rpmLimit = 250.0

    func validate(at path: String) throws(StrapError) {
        func range(_ r: ClosedRange<Double>, _ what: String, _ limits: ClosedRange<Double>) throws(StrapError) {
            guard r.lowerBound.isFinite, r.upperBound.isFinite, limits.contains(r.lowerBound), limits.contains(r.upperBound) else {
                throw .invalidOption("\(path).\(what) must lie within \(Int(limits.lowerBound))...\(Int(limits.upperBound)), got \(r.lowerBound)...\(r.upperBound)")
            }
        }
        switch self {
        case .power(let r): try range(r, "power.watts", 1...Self.wattLimit)
        case .powerPercentFTP(let r): try range(r, "power.percentFTP", 1...Self.percentLimit)
        case .heartRate(let r): try range(r, "heartRate.bpm", Self.bpmLimits)
        case .heartRateZone(let z):
            guard (1...5).contains(z) else { throw .invalidOption("\(path).heartRate.zone must be 1 to 5, got \(z)") }
        case .cadence(let r): try range(r, "cadence.rpm", 1...Self.rpmLimit)
        }
    }

    /// The target in absolute units for this athlete: `noData` naming what the profile lacks
    /// (an FTP for %FTP, what the zone scheme needs for a zone).
    public func resolved(ftp: Double?, zones: () throws(StrapError) -> HeartRateZones) throws(StrapError) -> Resolved {
        switch self {
        case .power(let r): return .power(r)
        case .powerPercentFTP(let r):
            guard let ftp else { throw .noData("a %FTP target needs functionalThresholdPower in the athlete's profile") }
            return .power((r.lowerBound * ftp / 100)...(r.upperBound * ftp / 100))
        case .heartRate(let r): return .heartRate(r)
        case .heartRateZone(let z):
            let b = try zones().bpm
            return .heartRate(b[z - 1]...b[z])
        case .cadence(let r): return .cadence(r)
        }
    }

    // JSON: {"power": {"watts": [lo, hi]}}, {"power": {"percentFTP": [lo, hi]}},
    // {"heartRate": {"bpm": [lo, hi]}}, {"heartRate": {"zone": n}}, {"cadence": {"rpm": [lo, hi]}}.
    enum Kind: String, CodingKey { case power, heartRate, cadence }
    enum Unit: String, CodingKey { case watts, percentFTP, bpm, zone, rpm }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Kind.self)
        func fail(_ why: String) -> DecodingError {
            DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: why))
        }
        guard c.allKeys.count == 1, let kind = c.allKeys.first else {
            throw fail("a target has exactly one of power, heartRate, cadence")
        }
        let u = try c.nestedContainer(keyedBy: Unit.self, forKey: kind)
        guard u.allKeys.count == 1, let unit = u.allKeys.first else { throw fail("a \(kind.rawValue) target has exactly one unit") }
        func range() throws -> ClosedRange<Double> {
            let pair = try u.decode([Double].self, forKey: unit)
            guard pair.count == 2, pair[0] <= pair[1] else { throw fail("\(kind.rawValue).\(unit.rawValue) is [low, high] with low <= high") }
            return pair[0]...pair[1]
        }
        switch (kind, unit) {
        case (.power, .watts): self = .power(watts: try range())
        case (.power, .percentFTP): self = .powerPercentFTP(try range())
        case (.heartRate, .bpm): self = .heartRate(bpm: try range())
        case (.heartRate, .zone): self = .heartRateZone(try u.decode(Int.self, forKey: .zone))
        case (.cadence, .rpm): self = .cadence(rpm: try range())
        default: throw fail("\(kind.rawValue) has no unit \(unit.rawValue)")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Kind.self)
        func put(_ kind: Kind, _ unit: Unit, _ r: ClosedRange<Double>) throws {
            var u = c.nestedContainer(keyedBy: Unit.self, forKey: kind)
            try u.encode([r.lowerBound, r.upperBound], forKey: unit)
        }
        switch self {
        case .power(let r): try put(.power, .watts, r)
        case .powerPercentFTP(let r): try put(.power, .percentFTP, r)
        case .heartRate(let r): try put(.heartRate, .bpm, r)
        case .heartRateZone(let z):
            var u = c.nestedContainer(keyedBy: Unit.self, forKey: .heartRate)
            try u.encode(z, forKey: .zone)
        case .cadence(let r): try put(.cadence, .rpm, r)
        }
    }
}
