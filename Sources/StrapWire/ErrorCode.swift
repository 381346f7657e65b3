/// The error codes of the socket protocol (docs/protocol.md#error-codes). The raw value is the wire
/// string.
public enum ErrorCode: String, Sendable, CaseIterable, Codable {
    case badRequest
    case unknownOp
    case notAuthorized
    case notFound
    case noData
    case invalidOption
    case invalidTransition
    case anchorExpired
    case anchorAhead
    case busy
    case unavailable
    case `internal`
}

/// A protocol-level failure: what goes into `{"ok": false, "error": {...}}`.
/// `data` carries extra machine-readable context (e.g. `oldestAnchor` for `anchorExpired`).
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var data: JSONObject?

    public init(_ code: ErrorCode, _ message: String, data: JSONObject? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension WireError {
    /// A client's value as it may appear in an error message: at most 64 characters and
    /// never a control character, so a 1 MB parameter is not echoed back whole and a NUL
    /// cannot hide what follows it.
    public static func echo(_ value: String, limit: Int = 64) -> String {
        var out = ""
        for (n, c) in value.unicodeScalars.enumerated() {
            if n == limit { out += "…"; break }
            out.unicodeScalars.append(c.properties.generalCategory == .control ? "\u{FFFD}" : c)
        }
        return out
    }
}
