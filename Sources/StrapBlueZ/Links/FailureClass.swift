import StrapDBus

/// How a failed BlueZ operation should be retried, after bleak-retry-connector's catalogue
/// (docs/bluetooth-field-notes.md#transient-bluez-errors).
public enum FailureClass: Sendable, Equatable {
    /// le-connection-abort-by-local, br-connection-canceled, InProgress: retry almost at once.
    case transient
    /// The controller has no free connection slot: wait a few seconds.
    case outOfSlots
    /// The device object is gone (UnknownObject, DoesNotExist): rediscover it first.
    case deviceMissing
    /// The adapter is off or gone (NotReady): wait for it to come back.
    case adapterNotReady
    /// Connect on a link that is already up: treat as success.
    case alreadyConnected
    /// Anything else: exponential backoff.
    case other

    public init(_ error: BusError) {
        guard case .reply(let reply) = error else {
            self = .other
            return
        }
        let message = reply.message.lowercased()
        if message.contains("le-connection-abort-by-local") || message.contains("br-connection-canceled")
            || message.contains("abort-by-local") {
            self = .transient
            return
        }
        if message.contains("out of slots") || message.contains("no available") || message.contains("connection limit") {
            self = .outOfSlots
            return
        }
        switch (reply.bluez, reply.freedesktop) {
        case (.inProgress?, _): self = .transient
        case (.alreadyConnected?, _): self = .alreadyConnected
        case (.doesNotExist?, _), (_, .unknownObject?), (_, .unknownMethod?): self = .deviceMissing
        case (.notReady?, _): self = .adapterNotReady
        default: self = .other
        }
    }
}
