import FoundationEssentials

/// How a type's samples combine in statistics (HealthKit's aggregation style).
public enum AggregationStyle: String, Sendable, Codable {
    /// Values are levels at a moment (heart rate): average/minimum/maximum/mostRecent.
    case discrete
    /// Values are amounts over their interval (distance): sum.
    case cumulative
    /// Not aggregatable (beat series, contact state changes): every option is `invalidOption`.
    case none
}

/// The sample types strapd records (docs/product.md §3.4). The raw `code` is the on-disk identity,
/// so a case may be renamed but its code never reused.
public enum QuantityType: String, Sendable, Codable, CaseIterable, Hashable {
    case heartRate, heartbeatSeries, energyExpended, activeEnergy
    case cyclingSpeed, cyclingCadence, cyclingDistance
    case runningSpeed, runningCadence, strideLength, runningDistance
    case batteryLevel, sensorContact
    /// Codes 14 and 15 came with store format version 2 (docs/storage.md): an older reader
    /// has no type for them. Balance is the share of power from the sensor's reference pedal
    /// (left, unless the sensor says it does not know), in percent, as the CP Measurement gives it.
    case cyclingPower, cyclingPowerBalance

    public var unit: String {
        switch self {
        case .heartRate: "count/min"
        case .heartbeatSeries: "s"
        case .energyExpended: "kJ"
        case .activeEnergy: "kcal"
        case .cyclingSpeed, .runningSpeed: "m/s"
        case .cyclingCadence: "rpm"
        case .runningCadence: "1/min"
        case .strideLength, .cyclingDistance, .runningDistance: "m"
        case .batteryLevel: "%"
        case .sensorContact: "state"
        case .cyclingPower: "W"
        case .cyclingPowerBalance: "%"
        }
    }

    public var aggregation: AggregationStyle {
        switch self {
        case .heartRate, .cyclingSpeed, .cyclingCadence, .runningSpeed, .runningCadence,
             .strideLength, .batteryLevel, .cyclingPower, .cyclingPowerBalance: .discrete
        case .energyExpended, .activeEnergy, .cyclingDistance, .runningDistance: .cumulative
        case .heartbeatSeries, .sensorContact: .none
        }
    }

    @inlinable public var code: UInt8 {
        switch self {
        case .heartRate: 1
        case .heartbeatSeries: 2
        case .energyExpended: 3
        case .activeEnergy: 4
        case .cyclingSpeed: 5
        case .cyclingCadence: 6
        case .cyclingDistance: 7
        case .runningSpeed: 8
        case .runningCadence: 9
        case .strideLength: 10
        case .runningDistance: 11
        case .batteryLevel: 12
        case .sensorContact: 13
        case .cyclingPower: 14
        case .cyclingPowerBalance: 15
        }
    }

    /// By the one-byte code, not by the raw string as `RawRepresentable` would: types key the
    /// store writer's per-sample stream lookup and the statistics' dictionaries.
    @inlinable public func hash(into h: inout Hasher) { h.combine(code) }

    private static let byCode: [UInt8: QuantityType] =
        Dictionary(uniqueKeysWithValues: allCases.map { ($0.code, $0) })

    public init?(code: UInt8) {
        guard let t = QuantityType.byCode[code] else { return nil }
        self = t
    }
}

/// What an anchored query or deletion can address: a quantity type or the workout object type.
public enum ObjectType: Hashable, Sendable, Codable {
    case quantity(QuantityType)
    case workout

    public init(from decoder: Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        if s == "workout" { self = .workout; return }
        guard let q = QuantityType(rawValue: s) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "unknown type \(s)"))
        }
        self = .quantity(q)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .workout: try c.encode("workout")
        case .quantity(let q): try c.encode(q.rawValue)
        }
    }
}
