import FoundationEssentials

/// Workout activity types by HealthKit's names (`HKWorkoutActivityType`). Indoor cycling is
/// `cycling` with location type `indoor`, as in HealthKit.
public enum ActivityType: String, Codable, Sendable, CaseIterable, Hashable {
    case running, cycling, walking, hiking, rowing, elliptical, stairClimbing, swimming
    case crossTraining, mixedCardio, highIntensityIntervalTraining, functionalStrengthTraining
    case traditionalStrengthTraining, coreTraining, jumpRope, stepTraining, dance, yoga
    case crossCountrySkiing, skatingSports, paddleSports, handCycling
    case wheelchairRunPace, wheelchairWalkPace, cooldown, other

    public init(parsing text: String) throws(StrapError) {
        guard let v = ActivityType(rawValue: text) else {
            throw .invalidOption("unknown activityType '\(text)'; known: "
                + ActivityType.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self = v
    }

    public init(from decoder: Decoder) throws {
        self = try ActivityType(parsing: try decoder.singleValueContainer().decode(String.self))
    }
}

/// Bounds on the string maps a client can attach (session, lap and marker metadata): they are
/// journaled and saved in the workout, so they must stay small.
public enum MetadataLimits {
    public static let maximumKeys = 16
    /// UTF-8 bytes of all keys and values together.
    public static let maximumBytes = 4096

    public static func validate(_ metadata: [String: String], _ what: String) throws(StrapError) {
        guard metadata.count <= maximumKeys else {
            throw .invalidOption("\(what) has \(metadata.count) keys; at most \(maximumKeys) are allowed")
        }
        var bytes = 0
        for (k, v) in metadata {
            guard !k.isEmpty else { throw .invalidOption("\(what) has an empty key") }
            bytes += k.utf8.count + v.utf8.count
        }
        guard bytes <= maximumBytes else {
            throw .invalidOption("\(what) takes \(bytes) bytes; at most \(maximumBytes) are allowed")
        }
    }
}

/// What a workout session is for (HealthKit's `HKWorkoutConfiguration`, plus the athlete and
/// the sensors, since one strapd serves several athletes at once).
public struct WorkoutConfiguration: Codable, Sendable, Hashable {
    public var activityType: ActivityType
    public var locationType: Workout.LocationType
    /// Whose profile the session uses (energy, zones).
    public var athlete: String
    /// Stable device ids; empty means every connected device no other session holds, resolved
    /// when the session is prepared or started.
    public var deviceIDs: [String]
    public var metadata: [String: String]
    /// The structured workout the session rides (docs/workouts.md, "Riding a plan"): a copy
    /// taken at the start, journaled with the session, so editing or deleting the saved plan
    /// does not move a session already riding it. An older strapd ignores the key.
    public var plan: WorkoutPlan?

    public static let defaultAthlete = "default"
    public static let maximumAthleteLength = 64
    public static let maximumDevices = 16

    public init(activityType: ActivityType, locationType: Workout.LocationType = .unknown,
                athlete: String = WorkoutConfiguration.defaultAthlete, deviceIDs: [String] = [],
                metadata: [String: String] = [:]) {
        self.activityType = activityType
        self.locationType = locationType
        self.athlete = athlete
        self.deviceIDs = deviceIDs
        self.metadata = metadata
    }

    public func validate() throws(StrapError) {
        guard !athlete.isEmpty, athlete.utf8.count <= Self.maximumAthleteLength,
              !athlete.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidOption("athlete must be 1 to \(Self.maximumAthleteLength) bytes without control characters")
        }
        guard deviceIDs.count <= Self.maximumDevices else {
            throw .invalidOption("a session takes at most \(Self.maximumDevices) devices, got \(deviceIDs.count)")
        }
        var seen = Set<String>()
        for id in deviceIDs {
            guard !id.isEmpty else { throw .invalidOption("deviceIDs has an empty id") }
            guard seen.insert(id).inserted else { throw .invalidOption("deviceIDs names \(id) twice") }
        }
        try MetadataLimits.validate(metadata, "session metadata")
        try plan?.validate()
    }

    enum CodingKeys: String, CodingKey { case activityType, locationType, athlete, deviceIDs, metadata, plan }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        activityType = try c.decode(ActivityType.self, forKey: .activityType)
        if let text = try c.decodeIfPresent(String.self, forKey: .locationType) {
            guard let l = Workout.LocationType(rawValue: text) else {
                throw StrapError.invalidOption("locationType '\(text)' is not one of indoor, outdoor, unknown")
            }
            locationType = l
        } else {
            locationType = .unknown
        }
        athlete = try c.decodeIfPresent(String.self, forKey: .athlete) ?? Self.defaultAthlete
        deviceIDs = try c.decodeIfPresent([String].self, forKey: .deviceIDs) ?? []
        metadata = try c.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        plan = try c.decodeIfPresent(WorkoutPlan.self, forKey: .plan)
    }
}
