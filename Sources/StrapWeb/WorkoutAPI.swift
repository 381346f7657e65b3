import FoundationEssentials
import StrapKit
import StrapWire

/// The workout control endpoints (docs/web.md, "The workout API"): each mirrors one socket
/// operation of docs/protocol-workouts.md and answers its result unchanged. Bodies are decoded
/// into these structs first, so a malformed request is refused here with a message that names
/// the field, before strapd is asked anything.
enum WorkoutAPI {
    /// `POST /api/workout/start`: `workout.start`'s parameters, under their socket names.
    struct StartRequest: Decodable {
        var activityType: String
        var locationType: String?
        var devices: [String]?
        var athlete: String?
        var metadata: [String: String]?

        var params: JSONObject {
            var p: JSONObject = ["activityType": .string(activityType)]
            if let locationType { p["locationType"] = .string(locationType) }
            if let devices { p["devices"] = .array(devices.map(JSONValue.string)) }
            if let athlete { p["athlete"] = .string(athlete) }
            if let metadata { p["metadata"] = WorkoutAPI.wire(metadata) }
            return p
        }
    }

    /// `POST /api/workout/{lap,pause,resume,end}`: the session, and a lap's metadata.
    struct SessionRequest: Decodable {
        var session: String
        var metadata: [String: String]?
    }

    /// What a control request can be refused for before strapd sees it.
    enum RequestError: Error, Equatable, CustomStringConvertible {
        case notJSONContentType(String?)
        case unreadableBody(String)
        case notASessionID(String)
        case metadataNotTaken(op: String)

        var status: Int { if case .notJSONContentType = self { 415 } else { 400 } }

        var description: String {
            switch self {
            case .notJSONContentType(let type):
                "the body must be JSON (Content-Type: application/json), not \(type.map { "'\($0.prefix(64))'" } ?? "none")"
            case .unreadableBody(let why): "request body: \(why)"
            case .notASessionID(let text): "request body: session: '\(text.prefix(64))' is not a session id (a UUID)"
            case .metadataNotTaken(let op): "request body: metadata: \(op) takes none (only lap does)"
            }
        }
    }

    /// The control operations by the last path component; `start` has its own body.
    static let commands = ["lap": "workout.lap", "pause": "workout.pause", "resume": "workout.resume", "end": "workout.end"]
    static let paths = ["/api/sessions", "/api/workout/start"] + commands.keys.sorted().map { "/api/workout/" + $0 }

    /// Every control body is JSON. Besides saying what the body is, this keeps a plain HTML
    /// form on another site from posting here at all: a form cannot send this type.
    static func checkContentType(_ value: String?) throws(RequestError) {
        let type = value?.split(separator: ";").first.map { trimmed(String($0)).lowercased() }
        guard type == "application/json" else { throw .notJSONContentType(value) }
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(RequestError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw .unreadableBody(explain(error))
        } catch {
            throw .unreadableBody("\(error)")
        }
    }

    /// The socket parameters of a session command.
    static func params(_ op: String, _ request: SessionRequest) throws(RequestError) -> JSONObject {
        guard let id = UUID(uuidString: request.session) else { throw .notASessionID(request.session) }
        var p: JSONObject = ["session": .string(id.uuidString)]
        if let metadata = request.metadata {
            guard op == "workout.lap" else { throw .metadataNotTaken(op: op) }
            p["metadata"] = wire(metadata)
        }
        return p
    }

    /// `GET /api/sessions`: `workout.list`'s sessions that are still open (not ended). The
    /// limit counts saved workouts, which this answer leaves out.
    static func openSessions(_ list: JSONObject) -> JSONObject {
        guard case .array(let items)? = list["sessions"] else { return ["sessions": .array([])] }
        let open = items.filter { item in
            guard case .object(let info) = item, case .object(let session)? = info["session"] else { return false }
            return session["state"] != .string("ended")
        }
        return ["sessions": .array(open)]
    }

    /// The HTTP status for one of strapd's refusals (docs/web.md has the table). Errors of this
    /// side of the socket (strapd away, too slow, unreadable) are 502 and 504: the gateway's.
    static func status(for error: DaemonLinkError) -> Int {
        guard case .strapKit(let e) = error else { return 504 }
        switch e.code {
        case .badRequest?: return 400
        case .invalidOption?: return 422
        case .notAuthorized?: return 403
        case .notFound?, .noData?: return 404
        case .invalidTransition?, .busy?: return 409
        case .anchorExpired?, .anchorAhead?: return 410
        case .unknownOp?: return 501
        case .unavailable?: return 503
        case .internal?: return 500
        case nil: return 502
        }
    }

    static func errorBody(_ message: String, code: String? = nil) -> JSONObject {
        var body: JSONObject = ["error": .string(message)]
        if let code { body["code"] = .string(code) }
        return body
    }

    static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    static func wire(_ metadata: [String: String]) -> JSONValue {
        var o = JSONObject()
        for key in metadata.keys.sorted() { o[key] = .string(metadata[key]!) }
        return .object(o)
    }

    /// A DecodingError as a person reads it: the field's path and what was wrong.
    static func explain(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "the body" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let c): return "\(path(c.codingPath + [key])) is missing"
        case .typeMismatch(let type, let c): return "\(path(c.codingPath)) must be \(describe(type))"
        case .valueNotFound(let type, let c): return "\(path(c.codingPath)) must be \(describe(type)), not null"
        case .dataCorrupted(let c):
            return c.codingPath.isEmpty ? "not JSON, or not a JSON object" : "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if type == String.self { return "a string" }
        if name.hasPrefix("Array") || name.hasPrefix("[") { return name.contains("String") ? "an array of strings" : "an array" }
        if name.hasPrefix("Dictionary") { return "an object" }
        return "of type \(name)"
    }
}
