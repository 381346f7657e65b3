import Foundation
import Glibc
import Testing
import StrapWeb

/// Rules (docs/web.md, "Security", "TLS"): with --tls-cert and --tls-key strapd-web speaks TLS
/// only, through libmicrohttpd's GnuTLS; beyond loopback it serves only so; the cookie is then
/// `Secure` and the Origin a change needs is `https://`; bad TLS files end it before it serves.
@Suite struct TLSTests {
    @Test func thePageIsServedOverTLSAndVerifiesAgainstTheCertificate() throws {
        let tls = try TLSFixture()
        let web = try WebHarness(webArguments: tls.arguments)
        let url = try String(contentsOfFile: web.webState + "/" + AccessToken.urlFileName, encoding: .utf8)
        #expect(url.hasPrefix("https://127.0.0.1:\(web.port)/?token="), "\(url)")
        let page = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/", host: web.host, headers: [web.bearer])
        #expect(page.status == 200)
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.body.contains("<html"))
        #expect(web.log("web").contains("listening on https://127.0.0.1:\(web.port)/"), "\(web.log("web"))")
    }

    @Test func plainHTTPToTheTLSPortGetsNoHTTPAnswer() throws {
        let tls = try TLSFixture()
        let web = try WebHarness(webArguments: tls.arguments)
        #expect(throws: HTTPFailure.self) {
            try RawHTTP.request(port: web.port, path: "/", host: web.host, headers: [web.bearer], timeout: 15)
        }
        // The refusal is the connection's alone: the server still serves TLS after it.
        #expect(try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/", host: web.host, headers: [web.bearer]).status == 200)
    }

    @Test func theTokenURLsCookieIsSecureOverTLS() throws {
        let tls = try TLSFixture()
        let web = try WebHarness(webArguments: tls.arguments)
        let reply = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/?token=\(web.token)", host: web.host)
        #expect(reply.status == 303)
        let cookie = try #require(reply.header("Set-Cookie"))
        #expect(cookie.hasPrefix(SessionBook.cookieName + "="))
        #expect(cookie.hasSuffix("; Secure"), "\(cookie)")
        let overlay = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/overlay?token=\(web.overlayToken)", host: web.host)
        #expect(overlay.status == 200)
        #expect(overlay.header("Set-Cookie")?.hasSuffix("; Secure") == true, "\(overlay.headers)")
    }

    @Test func aHostOffTheListIsRefusedOverTLS() throws {
        let tls = try TLSFixture()
        let web = try WebHarness(webArguments: tls.arguments + ["--allow-host", "strap.lan"])
        let foreign = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/", host: "rebound.example:\(web.port)", headers: [web.bearer])
        #expect(foreign.status == 403)
        #expect(foreign.body.contains("host not allowed"))
        let named = try TLSClient.request(port: web.port, caFile: tls.certificate, path: "/", host: "strap.lan:\(web.port)", headers: [web.bearer])
        #expect(named.status == 200)
        // The URL files name the --allow-host name: the certificate is for it, not for 127.0.0.1.
        let url = try String(contentsOfFile: web.webState + "/" + AccessToken.urlFileName, encoding: .utf8)
        #expect(url.hasPrefix("https://strap.lan:\(web.port)/?token="), "\(url)")
    }

    /// On this machine's own LAN address (the sandbox's eth0 has one; a machine without any
    /// skips this test): served over TLS, and the address itself is a Host the header may carry.
    @Test(.enabled(if: TLSFixture.lanAddress != nil, "no non-loopback IPv4 address to bind"))
    func aLANAddressIsServedWithTLSAndAnswersToItsOwnAddress() throws {
        let lan = try #require(TLSFixture.lanAddress)
        let tls = try TLSFixture()
        let web = try WebHarness(webArguments: tls.arguments + ["--listen", "\(lan):0"])
        let url = try String(contentsOfFile: web.webState + "/" + AccessToken.urlFileName, encoding: .utf8)
        #expect(url.hasPrefix("https://\(lan):\(web.port)/?token="), "\(url)")
        let page = try TLSClient.request(address: lan, port: web.port, caFile: tls.certificate, path: "/", host: "\(lan):\(web.port)", headers: [web.bearer])
        #expect(page.status == 200)
        let rebound = try TLSClient.request(address: lan, port: web.port, caFile: tls.certificate, path: "/", host: "rebound.example", headers: [web.bearer])
        #expect(rebound.status == 403)
    }

    /// The opt-in's shape: beyond loopback only with both files; one file alone is a mistake.
    @Test(arguments: [["--listen", "192.0.2.1:8420"], ["--listen", "0.0.0.0:8420", "--tls-key", "k.pem"], ["--tls-cert", "c.pem"]])
    func withoutBothTLSFilesStrapdWebExitsBeforeItServes(_ arguments: [String]) throws {
        let run = try StartAttempt(arguments)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("--tls-cert") && run.stderr.contains("--tls-key"), "\(run.stderr)")
        #expect(!run.madeToken)
    }

    @Test func aMissingCertificateEndsItBeforeItBindsOrMakesAToken() throws {
        let tls = try TLSFixture()
        let run = try StartAttempt(["--tls-cert", tls.directory + "/absent.pem", "--tls-key", tls.key])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("absent.pem: No such file or directory"), "\(run.stderr)")
        #expect(!run.madeToken)
    }

    @Test func aKeyThatIsNotTheCertificatesIsRefusedAndNothingIsServed() throws {
        let tls = try TLSFixture()
        let run = try StartAttempt(["--tls-cert", tls.certificate, "--tls-key", tls.otherKey])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("refused the certificate"), "\(run.stderr)")
        #expect(!run.madeURL, "a URL was written")
        // The files swapped: the certificate where the key goes is no key at all.
        let swapped = try StartAttempt(["--tls-cert", tls.key, "--tls-key", tls.certificate])
        #expect(swapped.status == 1, "\(swapped.stderr)")
        #expect(swapped.stderr.contains("holds no PEM certificate"), "\(swapped.stderr)")
    }
}

/// The same rules in WebSecurity alone, served over TLS and not.
@Suite struct TLSSecurityRuleTests {
    static func security(tls: Bool) -> (WebSecurity, SessionBook) {
        let sessions = SessionBook()
        return (WebSecurity(token: "t0ken", sessions: sessions, extraHosts: ["strap.lan"], tls: tls), sessions)
    }

    /// A change from the page carries the page's Origin, whose scheme is the one it was served with.
    @Test(arguments: [(true, "https", true), (true, "http", false), (false, "http", true), (false, "https", false)])
    func aChangeNeedsTheOriginOfTheSchemeServed(_ tls: Bool, _ scheme: String, _ allowed: Bool) {
        let (security, sessions) = Self.security(tls: tls)
        let session = sessions.open()
        let verdict = security.check(method: "POST", path: "/api/workout/start", host: "strap.lan:8443", origin: "\(scheme)://strap.lan:8443",
                                     authorization: nil, cookie: session, queryToken: nil)
        switch verdict {
        case .allowed(let a): #expect(allowed && a == .session(session))
        case .answered(let r):
            guard case .bytes(let body) = r.body else { Issue.record("a refusal with a streamed body"); return }
            #expect(!allowed && r.status == 403 && String(decoding: body, as: UTF8.self).hasPrefix("origin "), "\(r.status) \(body)")
        }
    }

    @Test(arguments: [true, false])
    func theSessionCookieIsSecureExactlyWhenServedOverTLS(_ tls: Bool) throws {
        let (security, _) = Self.security(tls: tls)
        guard case .answered(let r) = security.check(method: "GET", path: "/", host: "localhost", origin: nil, authorization: nil,
                                                      cookie: nil, queryToken: "t0ken") else {
            Issue.record("the token URL did not answer with its redirect")
            return
        }
        let cookie = try #require(r.headers.first { $0.0 == "Set-Cookie" }?.1)
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.hasSuffix("; Secure") == tls, "\(cookie)")
    }
}

/// strapd-web started with `arguments` on 127.0.0.1:0 and a state directory of its own, given
/// 10 s to exit by itself (a start that goes on to serve is ended then, and fails the test
/// by its status).
struct StartAttempt {
    let status: Int32
    let stderr: String
    let madeToken: Bool
    let madeURL: Bool

    init(_ arguments: [String]) throws {
        let state = NSTemporaryDirectory() + "strapweb-start-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let p = Process()
        p.executableURL = WebHarness.buildDirectory.appendingPathComponent("strapd-web")
        p.arguments = ["--listen", "127.0.0.1:0", "--socket", state + "/none.sock", "--state-dir", state] + arguments
        let pipe = Pipe()
        p.standardError = pipe
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        for _ in 0..<1000 where p.isRunning { usleep(10_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        status = p.terminationStatus
        stderr = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        madeToken = FileManager.default.fileExists(atPath: state + "/token")
        madeURL = FileManager.default.fileExists(atPath: state + "/" + AccessToken.urlFileName)
    }
}
