import FoundationEssentials

/// Errors of the domain and the store, each mapping to a protocol error code
/// (docs/protocol.md#error-codes).
public enum StrapError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reader's anchor predates retention; `oldestValid` is the oldest anchor to pass.
    case anchorExpired(oldestValid: UInt64)
    /// The reader's anchor is beyond the store's last item: records it was given are gone (an
    /// unclean stop with `sync = none` lost the unflushed tail, or the store was replaced by
    /// an older copy) and their anchors will be handed out again to other items. `latest` is
    /// where the store ends; continuing silently would skip what comes next.
    case anchorAhead(latest: UInt64)
    case invalidOption(String)
    case notFound(String)
    case badRequest(String)
    /// The store cannot write (disk full or I/O error); it keeps serving reads.
    case unavailable(String)
    case `internal`(String)
    /// A workout command not allowed in the session's current state; nothing changed.
    case invalidTransition(String)
    /// The value asked for was never set (an unset profile characteristic): never a made-up
    /// default in its place.
    case noData(String)
    /// Something the request needs is held by someone else (a device another workout
    /// session uses); the message names the holder.
    case busy(String)
    /// A file in the state directory has a format newer than this build reads; it was left
    /// as it was (start-up refuses; never sent to a client in normal operation).
    case newerFormat(NewerFormat)

    public var code: String {
        switch self {
        case .anchorExpired: "anchorExpired"
        case .anchorAhead: "anchorAhead"
        case .invalidOption: "invalidOption"
        case .notFound: "notFound"
        case .badRequest: "badRequest"
        case .unavailable: "unavailable"
        case .internal: "internal"
        case .invalidTransition: "invalidTransition"
        case .noData: "noData"
        case .busy: "busy"
        case .newerFormat: "unavailable"
        }
    }

    public var description: String {
        switch self {
        case .anchorExpired(let a): "anchor expired; the oldest valid anchor is \(a)"
        case .anchorAhead(let latest):
            "anchor is ahead of the store, which ends at \(latest): items this reader was given were lost (an unclean stop with sync = none, or an older copy of the store) and their anchors will be reused; start again from \(latest) or from 0"
        case .invalidOption(let m), .notFound(let m), .badRequest(let m),
             .unavailable(let m), .internal(let m), .invalidTransition(let m), .noData(let m),
             .busy(let m): m
        case .newerFormat(let f): f.description
        }
    }
}
