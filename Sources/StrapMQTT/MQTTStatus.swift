/// The publisher as `status` and `strapctl status` show it (docs/protocol.md#status).
public struct MQTTStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        case connecting, connected, waiting, stopped
    }

    public var state: State = .connecting
    public var broker = ""
    /// Everything up to here was acknowledged by the broker (and is, or soon is, persisted).
    public var cursor: UInt64 = 0
    /// Store items (samples, workouts, deletions) after the cursor.
    public var lagItems: UInt64 = 0
    /// How long the oldest item the broker has not acknowledged has waited; 0 when caught up.
    public var lagSeconds: Double = 0
    /// Messages allowed in flight on this connection: `max_inflight`, or the broker's smaller
    /// Receive Maximum (MQTT 5).
    public var inflightLimit: Int?
    public var published: UInt64 = 0
    public var acknowledged: UInt64 = 0
    public var connects: UInt64 = 0
    public var lastError: String?
    /// Unix milliseconds of `lastError`.
    public var lastErrorAt: Int64?
    /// Seconds until the next connection attempt while `waiting`.
    public var retryIn: Double?

    public init() {}
}
