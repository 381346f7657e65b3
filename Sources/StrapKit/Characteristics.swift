import FoundationEssentials
import StrapModel
import StrapWire

/// An athlete's characteristics (HealthKit's `dateOfBirthComponents()`, `biologicalSex()`, …),
/// read from the daemon's athlete profile (`profile.get`, docs/protocol-workouts.md). A value
/// never set throws ``StrapKitError/noData(_:)``, as HealthKit's `errorNoData`: there is no
/// made-up default. `athlete` names the profile (strapd keeps one per athlete; `default` unless
/// the box has several).
extension StrapStore {
    /// The date of birth as year, month and day.
    public func dateOfBirthComponents(athlete: String = "default") async throws -> DateComponents {
        let text = try await field("dateOfBirth", athlete: athlete).stringValue("dateOfBirth")
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { throw StrapKitError.malformedReply("dateOfBirth \(text) is not YYYY-MM-DD") }
        return DateComponents(year: parts[0], month: parts[1], day: parts[2])
    }

    /// The biological sex.
    public func biologicalSex(athlete: String = "default") async throws -> BiologicalSex {
        let text = try await field("biologicalSex", athlete: athlete).stringValue("biologicalSex")
        guard let sex = BiologicalSex(rawValue: text) else { throw StrapKitError.malformedReply("biologicalSex \(text)") }
        return sex
    }

    /// The body mass in kilograms.
    public func bodyMass(athlete: String = "default") async throws -> Double {
        try await field("weight", athlete: athlete).numberValue("weight")
    }

    /// The height in centimetres.
    public func height(athlete: String = "default") async throws -> Double {
        try await field("height", athlete: athlete).numberValue("height")
    }

    /// The resting heart rate in beats per minute.
    public func restingHeartRate(athlete: String = "default") async throws -> Double {
        try await field("restingHeartRate", athlete: athlete).numberValue("restingHeartRate")
    }

    /// VO2max in ml/kg/min.
    public func vo2Max(athlete: String = "default") async throws -> Double {
        try await field("vo2Max", athlete: athlete).numberValue("vo2Max")
    }

    /// The functional threshold power in watts (HealthKit's `cyclingFunctionalThresholdPower`):
    /// what a workout's power zones, IF and TSS are relative to.
    public func cyclingFunctionalThresholdPower(athlete: String = "default") async throws -> Double {
        try await field("functionalThresholdPower", athlete: athlete).numberValue("functionalThresholdPower")
    }

    /// The maximum heart rate in beats per minute, and whether strapd estimated it from the date
    /// of birth (Tanaka 2001) because none was set; noData when neither is known.
    public func maximumHeartRate(athlete: String = "default") async throws -> (value: Double, estimated: Bool) {
        let reply = try await field("maximumHeartRate", athlete: athlete)
        guard let o = reply.object("maximumHeartRate"), let value = o.number("value") else {
            throw StrapKitError.malformedReply("maximumHeartRate without value")
        }
        return (value, o.bool("estimated") ?? false)
    }

    private func field(_ name: String, athlete: String) async throws -> JSONObject {
        try await request("profile.get", ["athlete": .string(athlete), "field": .string(name)])
    }
}

extension JSONObject {
    func stringValue(_ key: String) throws(StrapKitError) -> String {
        guard let s = string(key) else { throw .malformedReply("\(key) is not a string") }
        return s
    }

    func numberValue(_ key: String) throws(StrapKitError) -> Double {
        guard let n = number(key) else { throw .malformedReply("\(key) is not a number") }
        return n
    }
}
