import FoundationEssentials

/// A workout as a stored object (docs/product.md §5), produced by the workout engine when a session
/// ends (docs/workouts.md lists the summary and info keys). The store keeps it verbatim (JSON) and
/// serves it to anchored readers and the `workout` predicate. Fields added later decode as
/// absent/empty from older records.
public struct Workout: Codable, Sendable, Hashable {
    public enum LocationType: String, Codable, Sendable { case indoor, outdoor, unknown }

    public struct Event: Codable, Sendable, Hashable {
        public var kind: String          // pause, resume, lap, marker
        public var time: Millis
        public var metadata: [String: String]
        public init(kind: String, time: Millis, metadata: [String: String] = [:]) {
            self.kind = kind; self.time = time; self.metadata = metadata
        }

        enum CodingKeys: String, CodingKey { case kind, time, metadata }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            kind = try c.decode(String.self, forKey: .kind)
            time = try c.decodeTime(.time)
            metadata = try c.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind)
            try c.encode(RFC3339.string(time), forKey: .time)
            try c.encode(metadata, forKey: .metadata)
        }
    }

    public struct Lap: Codable, Sendable, Hashable {
        public var start: Millis
        public var end: Millis
        public var summary: [String: Double]
        public init(start: Millis, end: Millis, summary: [String: Double] = [:]) {
            self.start = start; self.end = end; self.summary = summary
        }

        enum CodingKeys: String, CodingKey { case start, end, summary }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            start = try c.decodeTime(.start)
            end = try c.decodeTime(.end)
            summary = try c.decodeIfPresent([String: Double].self, forKey: .summary) ?? [:]
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(RFC3339.string(start), forKey: .start)
            try c.encode(RFC3339.string(end), forKey: .end)
            try c.encode(summary, forKey: .summary)
        }
    }

    public var uuid: UUID
    public var anchor: UInt64
    public var type: String = "workout"
    public var activityType: String
    public var locationType: LocationType
    public var start: Millis
    public var end: Millis
    /// Stable device ids whose samples belong to this workout (the `workout` predicate).
    public var deviceIDs: [String]
    public var events: [Event]
    public var laps: [Lap]
    public var summary: [String: Double]
    public var metadata: [String: String]
    /// The session that produced this workout; recovery uses it to tell whether a session's
    /// workout was already saved. Nil for workouts stored before the engine existed.
    public var sessionID: UUID?
    /// The athlete the session was for (profile key).
    public var athlete: String?
    /// Non-numeric facts about the summary: energy source or the reason it is absent, the
    /// heart-rate zone scheme, … (string values; the numbers are in `summary`).
    public var info: [String: String] = [:]

    public init(activityType: String, locationType: LocationType = .unknown, start: Millis,
                end: Millis, deviceIDs: [String], events: [Event] = [], laps: [Lap] = [],
                summary: [String: Double] = [:], metadata: [String: String] = [:]) {
        self.uuid = .unassigned
        self.anchor = 0
        self.activityType = activityType
        self.locationType = locationType
        self.start = start
        self.end = end
        self.deviceIDs = deviceIDs
        self.events = events
        self.laps = laps
        self.summary = summary
        self.metadata = metadata
    }

    enum CodingKeys: String, CodingKey {
        case uuid, anchor, type, activityType, locationType, start, end, deviceIDs, events, laps, summary, metadata
        case sessionID, athlete, info
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try c.decodeIfPresent(UUID.self, forKey: .uuid) ?? .unassigned
        anchor = try c.decodeIfPresent(UInt64.self, forKey: .anchor) ?? 0
        activityType = try c.decode(String.self, forKey: .activityType)
        locationType = try c.decodeIfPresent(LocationType.self, forKey: .locationType) ?? .unknown
        start = try c.decodeTime(.start)
        end = try c.decodeTime(.end)
        deviceIDs = try c.decodeIfPresent([String].self, forKey: .deviceIDs) ?? []
        events = try c.decodeIfPresent([Event].self, forKey: .events) ?? []
        laps = try c.decodeIfPresent([Lap].self, forKey: .laps) ?? []
        summary = try c.decodeIfPresent([String: Double].self, forKey: .summary) ?? [:]
        metadata = try c.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        sessionID = try c.decodeIfPresent(UUID.self, forKey: .sessionID)
        athlete = try c.decodeIfPresent(String.self, forKey: .athlete)
        info = try c.decodeIfPresent([String: String].self, forKey: .info) ?? [:]
    }

    /// Times as RFC 3339 with milliseconds, like samples (docs/protocol.md#times).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(anchor, forKey: .anchor)
        try c.encode("workout", forKey: .type)
        try c.encode(activityType, forKey: .activityType)
        try c.encode(locationType, forKey: .locationType)
        try c.encode(RFC3339.string(start), forKey: .start)
        try c.encode(RFC3339.string(end), forKey: .end)
        try c.encode(deviceIDs, forKey: .deviceIDs)
        try c.encode(events, forKey: .events)
        try c.encode(laps, forKey: .laps)
        try c.encode(summary, forKey: .summary)
        try c.encode(metadata, forKey: .metadata)
        try c.encodeIfPresent(sessionID, forKey: .sessionID)
        try c.encodeIfPresent(athlete, forKey: .athlete)
        try c.encode(info, forKey: .info)
    }
}
