import Foundation

/// A workout as a stored object (spec §5). The engine that produces it comes later; the
/// store keeps it verbatim (JSON) and serves it to anchored readers and the `workout` predicate.
public struct Workout: Codable, Sendable, Hashable {
    public enum LocationType: String, Codable, Sendable { case indoor, outdoor, unknown }

    public struct Event: Codable, Sendable, Hashable {
        public var kind: String          // pause, resume, lap, marker
        public var time: Millis
        public var metadata: [String: String]
        public init(kind: String, time: Millis, metadata: [String: String] = [:]) {
            self.kind = kind; self.time = time; self.metadata = metadata
        }
    }

    public struct Lap: Codable, Sendable, Hashable {
        public var start: Millis
        public var end: Millis
        public var summary: [String: Double]
        public init(start: Millis, end: Millis, summary: [String: Double] = [:]) {
            self.start = start; self.end = end; self.summary = summary
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

    public init(activityType: String, locationType: LocationType = .unknown, start: Millis,
                end: Millis, deviceIDs: [String], events: [Event] = [], laps: [Lap] = [],
                summary: [String: Double] = [:], metadata: [String: String] = [:]) {
        self.uuid = UUID(uuid: (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0))
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
}
