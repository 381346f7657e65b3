import StrapWire

/// Everything a StrapKit call can throw: the daemon's error codes (docs/protocol.md, *Error
/// codes*), one case each with the daemon's message, and what can go wrong on this side of the
/// socket. HealthKit's `HKError.errorNoData` is ``noData(_:)``.
public enum StrapKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The daemon could not read the request (a parameter missing, of the wrong type or out of
    /// range); the message names the parameter.
    case badRequest(String)
    /// The operation does not exist in this daemon (an older strapd than the library expects).
    case unknownOp(String)
    /// This peer lacks the grant the operation needs, or asked for a type its read grant excludes.
    case notAuthorized(String)
    /// A named object (device, sample, workout, session) does not exist.
    case notFound(String)
    /// The value asked for was never set; strapd never answers a made-up default.
    case noData(String)
    /// A well-formed parameter that is not allowed here (a cumulative statistic of a discrete type).
    case invalidOption(String)
    /// A workout state change not allowed from the session's state; nothing changed.
    case invalidTransition(String)
    /// The anchor is older than what retention kept: restart from `oldestAnchor`.
    case anchorExpired(oldestAnchor: UInt64?, message: String)
    /// The anchor is past the store's end (items this reader was given are gone): drop what was
    /// kept beyond `latestAnchor` and continue from it.
    case anchorAhead(latestAnchor: UInt64?, message: String)
    /// The daemon cannot take this now (a resource in use, too many requests); retry later.
    case busy(String)
    /// A subsystem the operation needs is down (no adapter, store degraded).
    case unavailable(String)
    /// A bug or an unexpected system error in the daemon.
    case `internal`(String)

    /// No connection could be made to the socket at `path` (no daemon, no permission).
    case cannotConnect(path: String, reason: String)
    /// The connection broke while the request or stream was outstanding. Whether a command that
    /// was in flight took effect is unknown; streams that can resume say so (see ``ReconnectPolicy``).
    case connectionLost(String)
    /// The daemon is stopping: it ended the stream with its `shutdown` event.
    case shuttingDown
    /// ``StrapStore/close()`` was called.
    case closed
    /// The daemon answered something this library cannot read.
    case malformedReply(String)
    /// A predicate the protocol cannot express; StrapKit never filters on the client's side
    /// instead, so the query is refused.
    case unsupportedPredicate(String)
    /// A feature the connected daemon's protocol does not offer yet.
    case unsupported(String)
    /// A one-shot query's answer was cut by the daemon's reply size limit; narrow it or page
    /// with an ``AnchoredQuery``.
    case truncated(returned: Int)

    /// The protocol's code for errors the daemon sent; nil for errors of this side.
    public var code: ErrorCode? {
        switch self {
        case .badRequest: .badRequest
        case .unknownOp: .unknownOp
        case .notAuthorized: .notAuthorized
        case .notFound: .notFound
        case .noData: .noData
        case .invalidOption: .invalidOption
        case .invalidTransition: .invalidTransition
        case .anchorExpired: .anchorExpired
        case .anchorAhead: .anchorAhead
        case .busy: .busy
        case .unavailable: .unavailable
        case .internal: .internal
        default: nil
        }
    }

    /// Whether the error means the connection is gone (a reconnecting store may try again).
    public var isConnectionLoss: Bool {
        switch self {
        case .connectionLost, .shuttingDown, .cannotConnect: true
        default: false
        }
    }

    /// Whether the connect failed because no daemon listens at the path (no socket, nobody
    /// accepting): a tool tells that apart from a refused permission.
    public var isDaemonNotRunning: Bool {
        if case .cannotConnect(_, let reason) = self { reason.hasPrefix("strapd is not running") } else { false }
    }

    /// Whether the connect was refused for want of permission on the socket (strapd's socket is
    /// 0660, group strapd).
    public var isPermissionDenied: Bool {
        if case .cannotConnect(_, let reason) = self { reason.hasPrefix("permission denied") } else { false }
    }

    /// The code (or this side's reason) and the message, for logs.
    public var description: String {
        switch self {
        case .badRequest(let m), .unknownOp(let m), .notAuthorized(let m), .notFound(let m), .noData(let m),
             .invalidOption(let m), .invalidTransition(let m), .busy(let m), .unavailable(let m), .internal(let m):
            "\(code!.rawValue): \(m)"
        case .anchorExpired(_, let m): "anchorExpired: \(m)"
        case .anchorAhead(_, let m): "anchorAhead: \(m)"
        case let .cannotConnect(path, reason): "cannot connect to \(path): \(reason)"
        case .connectionLost(let m): "connection to strapd lost: \(m)"
        case .shuttingDown: "strapd is shutting down"
        case .closed: "the store was closed"
        case .malformedReply(let m): "unreadable reply from strapd: \(m)"
        case .unsupportedPredicate(let m): "predicate not supported by the protocol: \(m)"
        case .unsupported(let m): "not supported: \(m)"
        case .truncated(let n): "the reply was cut after \(n) items; narrow the query or page with an anchored query"
        }
    }

    /// The error of an `{"ok": false}` reply or an `error` event's data.
    init(wire error: JSONObject) {
        let message = error["message"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "(no message)"
        // The extra data sits under `data` in replies and beside the code in stream events.
        let extra: JSONObject = if case .object(let d)? = error["data"] { d } else { error }
        func anchor(_ key: String) -> UInt64? { if case .int(let i)? = extra[key], i >= 0 { UInt64(i) } else { nil } }
        let code = error["code"].flatMap { if case .string(let s) = $0 { ErrorCode(rawValue: s) } else { nil } }
        switch code {
        case .badRequest: self = .badRequest(message)
        case .unknownOp: self = .unknownOp(message)
        case .notAuthorized: self = .notAuthorized(message)
        case .notFound: self = .notFound(message)
        case .noData: self = .noData(message)
        case .invalidOption: self = .invalidOption(message)
        case .invalidTransition: self = .invalidTransition(message)
        case .anchorExpired: self = .anchorExpired(oldestAnchor: anchor("oldestAnchor"), message: message)
        case .anchorAhead: self = .anchorAhead(latestAnchor: anchor("latestAnchor"), message: message)
        case .busy: self = .busy(message)
        case .unavailable: self = .unavailable(message)
        case .internal: self = .internal(message)
        case nil: self = .malformedReply("unknown error code in \(JSONWriter.string(.object(error)).prefix(200))")
        }
    }
}
