import FoundationEssentials

public enum BiologicalSex: String, Codable, Sendable, CaseIterable, Hashable {
    case female, male, other

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let v = BiologicalSex(rawValue: text) else {
            throw StrapError.invalidOption("biologicalSex: '\(text)' is not one of female, male, other")
        }
        self = v
    }
}

/// Settings of one sensor, kept in the athlete's profile by the sensor's address.
public struct DeviceSettings: Codable, Sendable, Hashable {
    /// Metres; what CSC wheel revolutions are multiplied by.
    public var wheelCircumference: Double?
    /// The RSC cadence this sensor sends is steps/min where the spec says strides/min.
    public var cadenceIsStepsPerMinute: Bool?

    public init(wheelCircumference: Double? = nil, cadenceIsStepsPerMinute: Bool? = nil) {
        self.wheelCircumference = wheelCircumference
        self.cadenceIsStepsPerMinute = cadenceIsStepsPerMinute
    }

    public static let wheelCircumferenceRange: ClosedRange<Double> = 0.1...5
}

/// The profile's fields by their JSON names (what `noData` and `invalidOption` messages name).
public enum ProfileField: String, Sendable, CaseIterable, Hashable, Codable {
    case dateOfBirth, biologicalSex, weight, height, restingHeartRate, maximumHeartRate
    case lactateThresholdHeartRate, vo2Max, heartRateZones, devices, functionalThresholdPower
}

/// A maximum heart rate and where it came from: set in the profile, or estimated from age.
public struct MaximumHeartRate: Codable, Sendable, Hashable {
    public var value: Double
    public var estimated: Bool
    /// The estimate's formula (`tanaka2001`: 208 − 0.7 × age); nil when set.
    public var formula: String?

    public init(value: Double, estimated: Bool, formula: String? = nil) {
        self.value = value; self.estimated = estimated; self.formula = formula
    }

    public static let tanaka2001 = "tanaka2001"
}

/// An athlete's characteristics (HealthKit's), one profile per athlete id. Every field is
/// optional; reading an unset one is `noData`, never a default in its place — except the
/// maximum heart rate, which is estimated from age when unset and says so. Units: kg, cm,
/// bpm, ml/kg/min, W (docs/workouts.md, "Profile").
public struct AthleteProfile: Codable, Sendable, Hashable {
    public var dateOfBirth: CalendarDate?
    public var biologicalSex: BiologicalSex?
    public var weight: Double?
    public var height: Double?
    public var restingHeartRate: Double?
    public var maximumHeartRate: Double?
    public var lactateThresholdHeartRate: Double?
    public var vo2Max: Double?
    public var heartRateZones: HeartRateZoneScheme?
    /// Watts: the power the athlete can hold for about an hour; what the power zones, IF and
    /// TSS are relative to (docs/workouts.md "Power figures").
    public var functionalThresholdPower: Double?
    /// Per-sensor settings by Bluetooth address.
    public var devices: [String: DeviceSettings]

    public init(dateOfBirth: CalendarDate? = nil, biologicalSex: BiologicalSex? = nil, weight: Double? = nil,
                height: Double? = nil, restingHeartRate: Double? = nil, maximumHeartRate: Double? = nil,
                lactateThresholdHeartRate: Double? = nil, vo2Max: Double? = nil,
                heartRateZones: HeartRateZoneScheme? = nil, devices: [String: DeviceSettings] = [:],
                functionalThresholdPower: Double? = nil) {
        self.dateOfBirth = dateOfBirth
        self.biologicalSex = biologicalSex
        self.weight = weight
        self.height = height
        self.restingHeartRate = restingHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.lactateThresholdHeartRate = lactateThresholdHeartRate
        self.vo2Max = vo2Max
        self.heartRateZones = heartRateZones
        self.devices = devices
        self.functionalThresholdPower = functionalThresholdPower
    }

    public enum Limits {
        public static let weight: ClosedRange<Double> = 10...400
        public static let height: ClosedRange<Double> = 50...280
        public static let restingHeartRate: ClosedRange<Double> = 20...150
        public static let maximumHeartRate: ClosedRange<Double> = 60...250
        public static let lactateThresholdHeartRate: ClosedRange<Double> = 50...250
        public static let vo2Max: ClosedRange<Double> = 10...100
        /// Below 30 W no adult rides; above 2000 W is a sprint peak, not an hour's power: either
        /// is a typing error (a wrong unit, a missing decimal point).
        public static let functionalThresholdPower: ClosedRange<Double> = 30...2_000
        public static let oldestBirthYear = 1900
        public static let maximumAge = 120
    }

    public func isSet(_ field: ProfileField) -> Bool {
        switch field {
        case .dateOfBirth: dateOfBirth != nil
        case .biologicalSex: biologicalSex != nil
        case .weight: weight != nil
        case .height: height != nil
        case .restingHeartRate: restingHeartRate != nil
        case .maximumHeartRate: maximumHeartRate != nil
        case .lactateThresholdHeartRate: lactateThresholdHeartRate != nil
        case .vo2Max: vo2Max != nil
        case .heartRateZones: heartRateZones != nil
        case .devices: !devices.isEmpty
        case .functionalThresholdPower: functionalThresholdPower != nil
        }
    }

    /// `noData` naming the field unless it is set.
    public func require(_ field: ProfileField) throws(StrapError) {
        guard isSet(field) else { throw .noData("\(field.rawValue) is not set in the profile") }
    }

    /// Completed years on `date`; `noData` without a date of birth.
    public func age(on date: CalendarDate) throws(StrapError) -> Int {
        guard let dateOfBirth else { throw .noData("dateOfBirth is not set in the profile") }
        return dateOfBirth.age(on: date)
    }

    /// The set maximum, else Tanaka et al. 2001 (208 − 0.7 × age) marked as estimated;
    /// `noData` when neither the maximum nor the date of birth is set.
    public func maximumHeartRate(on date: CalendarDate) throws(StrapError) -> MaximumHeartRate {
        if let maximumHeartRate { return MaximumHeartRate(value: maximumHeartRate, estimated: false) }
        guard let dateOfBirth else {
            throw .noData("maximumHeartRate is not set and dateOfBirth, needed to estimate it, is not set either")
        }
        let age = Double(dateOfBirth.age(on: date))
        return MaximumHeartRate(value: 208 - 0.7 * age, estimated: true, formula: MaximumHeartRate.tanaka2001)
    }

    /// Coggan's power zones from the FTP; `noData` when no FTP is set.
    public func powerZones() throws(StrapError) -> PowerZones {
        guard let functionalThresholdPower else { throw .noData("functionalThresholdPower is not set in the profile") }
        return try PowerZones(functionalThresholdPower: functionalThresholdPower)
    }

    /// Throws `invalidOption` naming the first field out of range or inconsistent with another.
    public func validate(today: CalendarDate) throws(StrapError) {
        func check(_ v: Double?, _ field: ProfileField, _ range: ClosedRange<Double>, _ unit: String) throws(StrapError) {
            guard let v else { return }
            guard v.isFinite, range.contains(v) else {
                throw .invalidOption("\(field.rawValue) must be from \(Self.format(range.lowerBound)) to "
                    + "\(Self.format(range.upperBound)) \(unit), got \(Self.format(v))")
            }
        }
        if let dob = dateOfBirth {
            guard dob <= today else { throw .invalidOption("dateOfBirth \(dob) is in the future (today is \(today))") }
            guard dob.year >= Limits.oldestBirthYear, dob.age(on: today) <= Limits.maximumAge else {
                throw .invalidOption("dateOfBirth \(dob) gives an age over \(Limits.maximumAge) years")
            }
        }
        try check(weight, .weight, Limits.weight, "kg")
        try check(height, .height, Limits.height, "cm")
        try check(restingHeartRate, .restingHeartRate, Limits.restingHeartRate, "bpm")
        try check(maximumHeartRate, .maximumHeartRate, Limits.maximumHeartRate, "bpm")
        try check(lactateThresholdHeartRate, .lactateThresholdHeartRate, Limits.lactateThresholdHeartRate, "bpm")
        try check(vo2Max, .vo2Max, Limits.vo2Max, "ml/kg/min")
        try check(functionalThresholdPower, .functionalThresholdPower, Limits.functionalThresholdPower, "W")
        if let rest = restingHeartRate, let max = maximumHeartRate, max <= rest {
            throw .invalidOption("maximumHeartRate \(Self.format(max)) must be above restingHeartRate \(Self.format(rest))")
        }
        if let lt = lactateThresholdHeartRate {
            if let rest = restingHeartRate, lt <= rest {
                throw .invalidOption("lactateThresholdHeartRate \(Self.format(lt)) must be above restingHeartRate \(Self.format(rest))")
            }
            if let max = maximumHeartRate, lt >= max {
                throw .invalidOption("lactateThresholdHeartRate \(Self.format(lt)) must be below maximumHeartRate \(Self.format(max))")
            }
        }
        try heartRateZones?.validate()
        for (address, settings) in devices {
            guard !address.isEmpty, address.utf8.count <= 64 else {
                throw .invalidOption("devices: an address must have 1 to 64 characters")
            }
            if let w = settings.wheelCircumference, !(w.isFinite && DeviceSettings.wheelCircumferenceRange.contains(w)) {
                throw .invalidOption("devices[\(address)].wheelCircumference must be from 0.1 to 5 m, got \(Self.format(w))")
            }
        }
    }

    /// The merged profile, validated; `self` is untouched either way.
    public func applying(_ patch: AthleteProfilePatch, today: CalendarDate) throws(StrapError) -> AthleteProfile {
        var p = self
        patch.dateOfBirth.apply(to: &p.dateOfBirth)
        patch.biologicalSex.apply(to: &p.biologicalSex)
        patch.weight.apply(to: &p.weight)
        patch.height.apply(to: &p.height)
        patch.restingHeartRate.apply(to: &p.restingHeartRate)
        patch.maximumHeartRate.apply(to: &p.maximumHeartRate)
        patch.lactateThresholdHeartRate.apply(to: &p.lactateThresholdHeartRate)
        patch.vo2Max.apply(to: &p.vo2Max)
        patch.heartRateZones.apply(to: &p.heartRateZones)
        patch.functionalThresholdPower.apply(to: &p.functionalThresholdPower)
        if patch.clearsAllDevices { p.devices = [:] }
        for (address, settings) in patch.devices {
            if let settings { p.devices[address] = settings } else { p.devices[address] = nil }
        }
        try p.validate(today: today)
        return p
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    enum CodingKeys: String, CodingKey {
        case dateOfBirth, biologicalSex, weight, height, restingHeartRate, maximumHeartRate
        case lactateThresholdHeartRate, vo2Max, heartRateZones, devices, functionalThresholdPower
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        dateOfBirth = try c.decodeIfPresent(CalendarDate.self, forKey: .dateOfBirth)
        biologicalSex = try c.decodeIfPresent(BiologicalSex.self, forKey: .biologicalSex)
        weight = try c.decodeIfPresent(Double.self, forKey: .weight)
        height = try c.decodeIfPresent(Double.self, forKey: .height)
        restingHeartRate = try c.decodeIfPresent(Double.self, forKey: .restingHeartRate)
        maximumHeartRate = try c.decodeIfPresent(Double.self, forKey: .maximumHeartRate)
        lactateThresholdHeartRate = try c.decodeIfPresent(Double.self, forKey: .lactateThresholdHeartRate)
        vo2Max = try c.decodeIfPresent(Double.self, forKey: .vo2Max)
        heartRateZones = try c.decodeIfPresent(HeartRateZoneScheme.self, forKey: .heartRateZones)
        devices = try c.decodeIfPresent([String: DeviceSettings].self, forKey: .devices) ?? [:]
        functionalThresholdPower = try c.decodeIfPresent(Double.self, forKey: .functionalThresholdPower)
    }

    /// Unset fields are left out (never written as a default).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(dateOfBirth, forKey: .dateOfBirth)
        try c.encodeIfPresent(biologicalSex, forKey: .biologicalSex)
        try c.encodeIfPresent(weight, forKey: .weight)
        try c.encodeIfPresent(height, forKey: .height)
        try c.encodeIfPresent(restingHeartRate, forKey: .restingHeartRate)
        try c.encodeIfPresent(maximumHeartRate, forKey: .maximumHeartRate)
        try c.encodeIfPresent(lactateThresholdHeartRate, forKey: .lactateThresholdHeartRate)
        try c.encodeIfPresent(vo2Max, forKey: .vo2Max)
        try c.encodeIfPresent(heartRateZones, forKey: .heartRateZones)
        if !devices.isEmpty { try c.encode(devices, forKey: .devices) }
        try c.encodeIfPresent(functionalThresholdPower, forKey: .functionalThresholdPower)
    }
}
