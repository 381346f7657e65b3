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
    /// How long the cursor has been behind the store; 0 when caught up.
    public var lagSeconds: Double = 0
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
