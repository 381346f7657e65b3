/// How a request proved it holds the token.
public enum Authentication: Equatable, Sendable {
    /// `Authorization: Bearer <token>`: a script. Browsers never add this header by themselves,
    /// so a cross-site page cannot make a request carrying it.
    case bearer
    /// The session cookie the token URL set: a browser.
    case session(String)
    /// The overlay's read-only token, by any of the three ways: it opens `WebSecurity.overlayPaths`
    /// and nothing else. `opened` is the overlay session its `?token=` just opened, for the
    /// answer's cookie.
    case overlay(opened: String?)

    var isOverlay: Bool {
        if case .overlay = self { return true }
        return false
    }
}

/// The rules every request passes before any endpoint sees it (docs/web.md, "Security"),
/// in this order: Host allow-list, Origin on requests that change something, the token.
public struct WebSecurity: Sendable {
    /// On every response: no inline script or style, nothing from elsewhere, no framing,
    /// no Referer (a page opened by the token URL must not hand the URL on).
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    public static let headers: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    public enum Verdict {
        case allowed(Authentication)
        /// Refused, or the token URL answered with a redirect that sets the cookie.
        case answered(HTTPResponse)
    }

    let token: String
    let sessions: SessionBook
    /// nil: no overlay token (a test's server); only the main token opens anything.
    let overlayToken: String?
    let overlaySessions = SessionBook()
    public static let overlayCookieName = "strapd_web_overlay"
    /// All the overlay token opens, with GET or HEAD only: the page, its two files, and the
    /// live stream (which it gets filtered, LiveRelay.subscribe(overlay:)).
    public static let overlayPaths: Set<String> = ["/overlay", "/overlay.js", "/overlay.css", "/events"]
    /// Host names (lower case, no port) a request may name in its Host header.
    let allowedHosts: Set<String>
    /// Served over TLS: the page's Origin is `https://`, and the cookies are `Secure`.
    let tls: Bool

    /// `localhost` and the loopback addresses are always allowed; `extraHosts` adds names an
    /// administrator puts in front (`--allow-host`) and, served beyond loopback, the listening
    /// address itself. A DNS-rebinding page reaches strapd-web under its own name, which is on
    /// no list.
    public init(token: String, sessions: SessionBook, overlayToken: String? = nil, extraHosts: [String] = [], tls: Bool = false) {
        self.token = token
        self.sessions = sessions
        self.overlayToken = overlayToken
        self.tls = tls
        allowedHosts = Set(["localhost", "127.0.0.1", "[::1]"] + extraHosts.map { $0.lowercased() })
    }

    /// The Set-Cookie value for a session this server opened.
    func sessionCookie(_ session: String, name: String = SessionBook.cookieName) -> String {
        Self.cookie(session, name: name, secure: tls)
    }

    public func check(_ request: HTTPRequest) -> Verdict {
        check(method: request.method, path: request.path, host: request.header("Host"), origin: request.header("Origin"),
              authorization: request.header("Authorization"), cookie: request.cookie(SessionBook.cookieName),
              queryToken: request.query("token"), overlayCookie: request.cookie(Self.overlayCookieName))
    }

    public func check(method: String, path: String, host: String?, origin: String?, authorization: String?,
                      cookie: String?, queryToken: String?, overlayCookie: String? = nil) -> Verdict {
        let verdict = authenticate(method: method, path: path, host: host, origin: origin, authorization: authorization,
                                   cookie: cookie, queryToken: queryToken, overlayCookie: overlayCookie)
        // Read-only: whatever the Origin, whatever the path's own rules, the overlay token
        // reads the overlay and its stream, and nothing else.
        if case .allowed(.overlay) = verdict, !((method == "GET" || method == "HEAD") && Self.overlayPaths.contains(path)) {
            return .answered(.text(403, "the overlay token opens GET /overlay and /events only\n"))
        }
        return verdict
    }

    private func authenticate(method: String, path: String, host: String?, origin: String?, authorization: String?,
                              cookie: String?, queryToken: String?, overlayCookie: String?) -> Verdict {
        guard let host, allowedHosts.contains(Self.hostName(host)) else {
            return .answered(.text(403, "host not allowed: strapd-web answers only to the names in docs/web.md (--allow-host)\n"))
        }
        let bearer = authorization.flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
        }
        let safe = method == "GET" || method == "HEAD"
        if !safe {
            // CSRF: a browser names the page that made the request. A cookie alone is not
            // enough for a change; a script with the bearer token sends no Origin at all.
            if let origin {
                guard origin.lowercased() == (tls ? "https://" : "http://") + host.lowercased() else {
                    return .answered(.text(403, "origin \(origin) may not send \(method) requests here\n"))
                }
            } else if bearer == nil {
                return .answered(.text(403, "\(method) with a session cookie needs an Origin header\n"))
            }
        }
        if let bearer {
            if AccessToken.matches(bearer, token) { return .allowed(.bearer) }
            if let overlayToken, AccessToken.matches(bearer, overlayToken) { return .allowed(.overlay(opened: nil)) }
            return .answered(Self.unauthorized)
        }
        if let cookie, sessions.isOpen(cookie) { return .allowed(.session(cookie)) }
        if let overlayCookie, overlaySessions.isOpen(overlayCookie) { return .allowed(.overlay(opened: nil)) }
        if safe, let queryToken, let overlayToken, AccessToken.matches(queryToken, overlayToken) {
            // No redirect, unlike the main token: the overlay's settings are in its query, and
            // OBS shows no address bar. The cookie carries the page's own requests.
            return .allowed(.overlay(opened: overlaySessions.open()))
        }
        if safe, let queryToken, AccessToken.matches(queryToken, token) {
            // The token leaves the address bar (and the history) at once: the cookie carries on.
            let session = sessions.open()
            return .answered(HTTPResponse(status: 303, headers: [
                ("Location", Self.localRedirect(path)),
                ("Set-Cookie", sessionCookie(session)),
            ]))
        }
        return .answered(Self.unauthorized)
    }

    /// `secure`: over TLS the browser must never send the cookie back over plain HTTP (a LAN
    /// peer answering as this name on port 80 would otherwise collect it).
    public static func cookie(_ session: String, name: String = SessionBook.cookieName, secure: Bool = false) -> String {
        "\(name)=\(session); Path=/; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static let unauthorized = HTTPResponse(status: 401, headers: [("Content-Type", "text/plain; charset=utf-8"), ("WWW-Authenticate", "Bearer")],
                                           body: .bytes(Array("a token is needed: open the URL in strapd-web's state directory (the file `url`), or send Authorization: Bearer\n".utf8)))

    /// `path` as a redirect target that stays on this server: `//evil.example/` (or `/` and a backslash,
    /// which browsers read the same way) would send the browser, freshly given its cookie, to
    /// another host; such a path goes to `/` instead.
    static func localRedirect(_ path: String) -> String {
        guard path.hasPrefix("/"), !path.dropFirst().hasPrefix("/"), !path.dropFirst().hasPrefix("\\"),
              !path.contains(where: { $0.isNewline }) else { return "/" }
        return path
    }

    /// The host part of a Host header: `[::1]:8420` → `[::1]`, `Localhost:8420` → `localhost`.
    static func hostName(_ header: String) -> String {
        let h = header.lowercased()
        if h.hasPrefix("[") { return h.firstIndex(of: "]").map { String(h[...$0]) } ?? h }
        return h.split(separator: ":", maxSplits: 1).first.map(String.init) ?? h
    }
}
