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
        case .allowed(let authentication):
            response = request.bodyTooLarge ? .text(413, "request body over \(HTTPServer.maximumBody) bytes\n") : route(request, authentication)
            if case .overlay(let opened?) = authentication {
                response.headers.append(("Set-Cookie", security.sessionCookie(opened, name: WebSecurity.overlayCookieName)))
            }
        }
        if request.path.hasPrefix("/api/") { response = Self.jsonRefusal(response) }
        response.headers += WebSecurity.headers
        return response
    }

    private func route(_ request: HTTPRequest, _ authentication: Authentication) -> HTTPResponse {
        let get = request.method == "GET" || request.method == "HEAD"
        switch (request.path, get) {
        case ("/metrics", true): return metrics()
        case ("/events", true): return events(overlay: authentication.isOverlay)
        case (let path, true) where OverlayPage.paths.contains(path): return OverlayPage.response(path, request, link: link)
        case ("/api/status", true): return forward("status")
        case ("/api/devices", true): return forward("devices.list")
        case ("/api/access", true): return forward("access.status")
        case (let path, false) where request.method == "POST" && DevicesAPI.Route(path) != nil:
            // Control requests like the workout POSTs: WebSecurity has checked the Origin and
            // the credentials; strapd checks the address and its admin grant.
            switch DevicesAPI.Route(path)! {
            case .scan:
                do {
                    try WorkoutAPI.checkContentType(request.header("Content-Type"))
                    return DevicesAPI.scan(link, timeout: try DevicesAPI.scanTimeout(request.body))
                } catch {
                    return Self.json(error.status, WorkoutAPI.errorBody(error.description))
                }
            case .command(let command, let address): return DevicesAPI.command(link, command, address: address)
            }
        case ("/api/sessions", true): return openSessions()
        case ("/api/workouts", true): return HistoryAPI.list(link, limit: request.query("limit"))
        case ("/api/profile", true): return ask("profile.get", ProfileAPI.athlete(request))
        case ("/api/profile", false) where request.method == "PUT":
            // The same path as the workout POSTs: WebSecurity has checked the Origin and the
            // credentials (the overlay token never gets here), then the body's type and shape.
            return control(request) { body throws(WorkoutAPI.RequestError) in
                ("profile.set", try ProfileAPI.setParams(request, body: body))
            }
        case (let path, true) where HistoryAPI.Route(path) != nil:
            switch HistoryAPI.Route(path)! {
            case .workout(let id): return HistoryAPI.workout(link, id: id)
            case .export(let id): return HistoryAPI.export(link, id: id, format: request.query("format"))
            }
        case (OpenAPIDocument.path, true): return HTTPResponse(status: 200, headers: [("Content-Type", OpenAPIDocument.contentType)], body: .bytes(OpenAPIDocument.bytes))
        case ("/api/workout/start", false) where request.method == "POST":
            return control(request) { body throws(WorkoutAPI.RequestError) in
                ("workout.start", try WorkoutAPI.decode(WorkoutAPI.StartRequest.self, from: body).params)
            }
        case (let path, false) where request.method == "POST" && path.hasPrefix("/api/workout/"):
            guard let op = WorkoutAPI.commands[String(path.dropFirst("/api/workout/".count))] else { break }
            return control(request) { body throws(WorkoutAPI.RequestError) in
                (op, try WorkoutAPI.params(op, WorkoutAPI.decode(WorkoutAPI.SessionRequest.self, from: body)))
            }
        case ("/logout", false) where request.method == "POST":
            if case .session(let id) = authentication { sessions.close(id) }
            return HTTPResponse(status: 204, headers: [("Set-Cookie", "\(SessionBook.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")])
        default: break
        }
        if get, let asset = DashboardAssets.asset(at: request.path) ?? WorkoutAssets.asset(at: request.path)
            ?? HistoryAssets.asset(at: request.path) ?? ProfileAssets.asset(at: request.path) ?? DevicesAssets.asset(at: request.path) {
            return HTTPResponse(status: 200, headers: [("Content-Type", asset.type)], body: .bytes(asset.bytes))
        }
        if Self.endpoints.contains(request.path) || HistoryAPI.Route(request.path) != nil || DevicesAPI.Route(request.path) != nil {
            // RFC 9110 requires a 405 to say what is allowed (schemathesis found it missing).
            let allowed = request.path == "/logout" || request.path.hasPrefix("/api/workout/") || DevicesAPI.Route(request.path) != nil ? "POST"
                : request.path == ProfileAPI.path ? "GET, HEAD, PUT" : "GET, HEAD"
            var refusal = HTTPResponse.text(405, "\(request.method) is not allowed on \(request.path) (\(allowed) is)\n")
            refusal.headers.append(("Allow", allowed))
            return refusal
        }
        return .text(404, "no such page: \(request.path)\n")
    }

    /// Every path with an endpoint, for 405 on the other methods; OpenAPITests hold the
    /// OpenAPI document's paths to this list.
    public static let endpoints = ["/metrics", "/events", "/api/status", "/api/devices", "/logout", OpenAPIDocument.path, ProfileAPI.path] + WorkoutAPI.paths + HistoryAPI.paths + DevicesAPI.paths

    /// A control request: its body checked and decoded, then one socket operation whose result
    /// is the answer. `WebSecurity` has already checked the origin and the credentials.
    private func control(_ request: HTTPRequest, _ decode: ([UInt8]) throws(WorkoutAPI.RequestError) -> (String, JSONObject)) -> HTTPResponse {
        let op: String, params: JSONObject
        do {
            try WorkoutAPI.checkContentType(request.header("Content-Type"))
            (op, params) = try decode(request.body)
        } catch {
            return Self.json(error.status, WorkoutAPI.errorBody(error.description))
        }
        return ask(op, params)
    }

    private func openSessions() -> HTTPResponse {
        do {
            return Self.json(200, WorkoutAPI.openSessions(try link.request("workout.list", ["limit": .int(1)])))
        } catch {
            return Self.json(WorkoutAPI.status(for: error), WorkoutAPI.errorBody(error.description, code: Self.code(error)))
        }
    }

    /// A refusal in plain text (the security checks', a 404 or 405) as `{"error": …}`: an API
    /// client reads every answer of `/api/` as JSON.
    static func jsonRefusal(_ response: HTTPResponse) -> HTTPResponse {
        guard response.status >= 400, case .bytes(let bytes) = response.body,
              response.headers.contains(where: { $0.0 == "Content-Type" && $0.1.hasPrefix("text/plain") }) else { return response }
        var json = Self.json(response.status, WorkoutAPI.errorBody(WorkoutAPI.trimmed(String(decoding: bytes, as: UTF8.self))))
        json.headers = response.headers.filter { $0.0 != "Content-Type" } + json.headers
        return json
    }

    static func json(_ status: Int, _ object: JSONObject) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: .bytes(JSONWriter.bytes(.object(object)) + [10]))
    }

    static func code(_ error: DaemonLinkError) -> String? {
        if case .strapKit(let e) = error { e.code?.rawValue } else { nil }
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

    private func events(overlay: Bool) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("X-Accel-Buffering", "no")],
                     body: .stream(relay.subscribe(overlay: overlay)))
    }

    /// One of strapd's read operations as JSON, its result unchanged (the socket's shape,
    /// docs/protocol.md).
    private func forward(_ op: String) -> HTTPResponse { ask(op, [:]) }

    /// strapd's answer to `op`, or its refusal with the status of WorkoutAPI's table.
    private func ask(_ op: String, _ params: JSONObject) -> HTTPResponse {
        do {
            return Self.json(200, try link.request(op, params))
        } catch {
            return Self.json(WorkoutAPI.status(for: error), WorkoutAPI.errorBody(error.description, code: Self.code(error)))
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
