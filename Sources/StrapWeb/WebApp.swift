import StrapKit

/// strapd-web's endpoints (docs/web.md, "Endpoints") behind `WebSecurity`. Every answer
/// carries the security headers, refusals included.
public final class WebApp: Sendable {
    let link: DaemonLink
    let relay: LiveRelay
    let security: WebSecurity
    let sessions: SessionBook

    public init(link: DaemonLink, relay: LiveRelay, security: WebSecurity, sessions: SessionBook) {
        self.link = link
        self.relay = relay
        self.security = security
        self.sessions = sessions
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        switch security.check(request) {
        case .answered(let r): response = r
        case .allowed(let authentication): response = route(request, authentication)
        }
        response.headers += WebSecurity.headers
        return response
    }

    private func route(_ request: HTTPRequest, _ authentication: Authentication) -> HTTPResponse {
        let get = request.method == "GET" || request.method == "HEAD"
        switch (request.path, get) {
        case ("/metrics", true): return metrics()
        case ("/events", true): return events()
        case ("/api/status", true): return forward("status")
        case ("/api/devices", true): return forward("devices.list")
        case ("/logout", false) where request.method == "POST":
            if case .session(let id) = authentication { sessions.close(id) }
            return HTTPResponse(status: 204, headers: [("Set-Cookie", "\(SessionBook.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")])
        default:
            if get, let asset = DashboardAssets.asset(at: request.path) {
                return HTTPResponse(status: 200, headers: [("Content-Type", asset.type)], body: .bytes(asset.bytes))
            }
            if ["/metrics", "/events", "/api/status", "/api/devices", "/logout"].contains(request.path) {
                return .text(405, "\(request.method) is not allowed on \(request.path)\n")
            }
            return .text(404, "no such page: \(request.path)\n")
        }
    }

    /// The scrape asks strapd three things; whichever fails is left out, and `strapd_up`
    /// says whether strapd answered at all.
    private func metrics() -> HTTPResponse {
        let status = try? link.request("status")
        let devices = status == nil ? nil : (try? link.request("devices.list")).flatMap { Self.objects($0["devices"]) }
        let sessions = status == nil ? nil : (try? link.request("workout.list", ["limit": .int(1)])).flatMap { Self.objects($0["sessions"]) }
        let text = PrometheusMetrics.render(.init(status: status, devices: devices, sessions: sessions, heartRates: relay.heartRates,
                                                  liveStreamOpen: relay.isSubscribed, eventClients: relay.subscriberCount))
        return .text(200, text, type: PrometheusMetrics.contentType)
    }

    private func events() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("X-Accel-Buffering", "no")],
                     body: .stream(relay.subscribe()))
    }

    /// One of strapd's read operations as JSON, its result unchanged (the socket's shape,
    /// docs/protocol.md).
    private func forward(_ op: String) -> HTTPResponse {
        do {
            let result = try link.request(op)
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: .bytes(JSONWriter.bytes(.object(result)) + [10]))
        } catch {
            let status = if case .strapKit(.notAuthorized) = error { 403 } else { 502 }
            let body: JSONObject = ["error": .string(error.description)]
            return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: .bytes(JSONWriter.bytes(.object(body)) + [10]))
        }
    }

    private static func objects(_ value: JSONValue?) -> [JSONObject]? {
        guard case .array(let items)? = value else { return nil }
        return items.compactMap { item -> JSONObject? in
            guard case .object(let o) = item else { return nil }
            // workout.list nests a session's state under "session" in some shapes.
            if o["state"] == nil, case .object(let inner)? = o["session"] { return inner }
            return o
        }
    }
}
