import StrapKit
import StrapWire

/// The athlete profile's endpoints (docs/web.md, "The profile API"): `profile.get` and
/// `profile.set` passed through. strapd validates the merged profile and names the field and
/// the rule when it refuses; strapd-web checks only that the body is a JSON object, so a rule
/// lives in one place.
enum ProfileAPI {
    static let path = "/api/profile"

    /// `?athlete=` as the socket's parameter; absent, strapd takes its default athlete.
    static func athlete(_ request: HTTPRequest) -> JSONObject {
        request.query("athlete").map { ["athlete": .string($0)] } ?? [:]
    }

    /// `PUT /api/profile`'s body is the fields to change, as `profile.set` takes them under
    /// `profile` (`null` clears a field).
    static func setParams(_ request: HTTPRequest, body: [UInt8]) throws(WorkoutAPI.RequestError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw .unreadableBody("not JSON, or not a JSON object")
        }
        guard case .object(let fields) = value else { throw .unreadableBody("not JSON, or not a JSON object") }
        var params = athlete(request)
        params["profile"] = .object(fields)
        return params
    }
}
