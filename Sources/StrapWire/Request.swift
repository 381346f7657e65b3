/// A request id as the client wrote it: a JSON integer or a JSON string. Replies echo
/// it in the same form.
public enum RequestID: Sendable, Hashable, CustomStringConvertible {
    case int(Int64)
    case string(String)

    public var json: JSONValue {
        switch self {
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }

    public var description: String {
        switch self {
        case .int(let i): String(i)
        case .string(let s): "\"\(s)\""
        }
    }
}

/// One request line: `{"id": <int|string>, "op": "<name>", ...params}` (docs/protocol.md#requests).
/// `params` is the object without `id` and `op`; each op validates its own.
public struct Request: Sendable, Equatable {
    public var id: RequestID
    public var op: String
    public var params: JSONObject

    public init(id: RequestID, op: String, params: JSONObject = JSONObject()) {
        self.id = id
        self.op = op
        self.params = params
    }
}

/// A line that is not a valid request. `id` is the request id when it could be read,
/// so the `badRequest` reply can still be matched by the client; otherwise null.
public struct RequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public var id: RequestID?
    public var error: WireError

    public var description: String { "request \(id?.description ?? "null"): \(error)" }
}

extension Request {
    /// The longest `op` accepted; op names are short dotted identifiers.
    public static let maximumOpLength = 64
    /// String ids are echoed back verbatim, so they are bounded too.
    public static let maximumIDLength = 256

    /// Parses one NDJSON line (without its newline). Every failure is `badRequest`.
    public static func parse(line: some Collection<UInt8>) throws(RequestError) -> Request {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line, overflowToInfinity: true)
        } catch {
            throw RequestError(id: nil, error: WireError(.badRequest, "invalid JSON: \(error)"))
        }
        guard case .object(var object) = value else {
            throw RequestError(id: nil, error: WireError(.badRequest, "a request must be a JSON object, not \(value.typeName)"))
        }
        let id: RequestID
        switch object["id"] {
        case nil:
            throw RequestError(id: nil, error: WireError(.badRequest, "missing \"id\""))
        case .int(let i)?:
            id = .int(i)
        case .string(let s)?:
            guard !s.isEmpty, s.utf8.count <= maximumIDLength else {
                throw RequestError(id: nil, error: WireError(.badRequest, "\"id\" must be a non-empty string of at most \(maximumIDLength) bytes"))
            }
            id = .string(s)
        case let other?:
            throw RequestError(id: nil, error: WireError(.badRequest, "\"id\" must be an integer or a string, not \(other.typeName)"))
        }
        let op: String
        switch object["op"] {
        case nil:
            throw RequestError(id: id, error: WireError(.badRequest, "missing \"op\""))
        case .string(let s)?:
            guard !s.isEmpty, s.utf8.count <= maximumOpLength else {
                throw RequestError(id: id, error: WireError(.badRequest, "\"op\" must be a non-empty string of at most \(maximumOpLength) bytes"))
            }
            op = s
        case let other?:
            throw RequestError(id: id, error: WireError(.badRequest, "\"op\" must be a string, not \(other.typeName)"))
        }
        object["id"] = nil
        object["op"] = nil
        return Request(id: id, op: op, params: object)
    }
}
