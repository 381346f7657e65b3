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

    /// A socket passed by socket activation meets the --listen rule: beyond loopback, served
    /// with TLS, refused without. systemd-socket-activate (systemd's own tool) listens on the
    /// LAN address and execs strapd-web with the socket at the first connection, as
    /// strapd-web.socket would.
    @Test(.enabled(if: TLSFixture.lanAddress != nil && FileManager.default.isExecutableFile(atPath: TLSTests.activator),
                   "no non-loopback IPv4 address, or no systemd-socket-activate (scripts/deps.sh test: systemd)"))
    func aPassedSocketBeyondLoopbackIsServedWithTLSOnly() throws {
        let lan = try #require(TLSFixture.lanAddress)
        let tls = try TLSFixture()
        let refused = try Activation(address: lan, [])
        let (status, stderr) = refused.waitForExit()
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("is not loopback") && stderr.contains("--tls-cert"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: refused.state + "/token"))

        let served = try Activation(address: lan, tls.arguments)
        let urlFile = served.state + "/" + AccessToken.urlFileName
        for _ in 0..<1000 where !FileManager.default.fileExists(atPath: urlFile) { usleep(10_000) }
        let url = try String(contentsOfFile: urlFile, encoding: .utf8)
        #expect(url.hasPrefix("https://\(lan):\(served.port)/"), "\(url)")
        let token = try String(contentsOfFile: served.state + "/token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let page = try TLSClient.request(address: lan, port: served.port, caFile: tls.certificate, path: "/", host: "\(lan):\(served.port)",
                                         headers: [("Authorization", "Bearer \(token)")])
        #expect(page.status == 200)
    }

    static let activator = "/usr/bin/systemd-socket-activate"

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
        // A file, not a pipe: a child another test starts meanwhile may inherit a pipe's write end.
        let log = state + ".stderr"
        FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        for _ in 0..<1000 where p.isRunning { usleep(10_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        status = p.terminationStatus
        stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        madeToken = FileManager.default.fileExists(atPath: state + "/token")
        madeURL = FileManager.default.fileExists(atPath: state + "/" + AccessToken.urlFileName)
    }
}

/// strapd-web under systemd-socket-activate on `address` and a free port of it (found by
/// binding port 0 and letting it go: another process could take it meanwhile, which fails the
/// test, not passes it). Started with posix_spawn, not Foundation's Process: systemd-socket-activate
/// closes every descriptor it does not pass before it execs, Process' watch on its child among
/// them, and Process then waits for that child without end, and for every other one with it.
final class Activation {
    let port: UInt16
    let state: String
    private var pid: pid_t = 0
    private var exited: Int32?
    /// strapd-web's stderr, a file for the reason StartAttempt's is.
    private var log: String { state + ".stderr" }

    init(address: String, _ arguments: [String]) throws {
        let probe = try Listener.bind(ListenAddress(parsing: "\(address):0"))
        port = probe.address.port
        close(probe.fd)
        state = NSTemporaryDirectory() + "strapweb-activate-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let argv = [TLSTests.activator, "-l", "\(address):\(port)", WebHarness.buildDirectory.appendingPathComponent("strapd-web").path,
                    "--socket", state + "/none.sock", "--state-dir", state] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, TLSTests.activator, &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw TLSClient.Refused(description: "posix_spawn \(TLSTests.activator): \(spawned)") }
        // The first connection that goes through is what makes systemd-socket-activate exec
        // strapd-web with the socket (and strapd-web then accepts and drops it); the ones before
        // it listens are refused and change nothing.
        for _ in 0..<500 {
            if Self.canConnect(address, port) { return }
            usleep(10_000)
        }
    }

    private static func canConnect(_ address: String, _ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, address, &a.sin_addr)
        return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }

    /// Its exit status and stderr once it exits by itself, within 10 s (else ended: -SIGTERM).
    func waitForExit() -> (Int32, String) {
        for _ in 0..<1000 where reap(WNOHANG) == nil { usleep(10_000) }
        if exited == nil { kill(pid, SIGTERM) }
        let status = reap(0) ?? -1
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// The exit status (negative: the signal that ended it), or nil while it runs.
    private func reap(_ options: Int32) -> Int32? {
        if let exited { return exited }
        var status: Int32 = 0
        guard waitpid(pid, &status, options) == pid else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        exited = status & 0x7f == 0 ? (status >> 8) & 0xff : -(status & 0x7f)
        return exited
    }

    deinit {
        if reap(WNOHANG) == nil {
            kill(pid, SIGTERM)
            _ = reap(0)
        }
        try? FileManager.default.removeItem(atPath: state)
        try? FileManager.default.removeItem(atPath: log)
    }
}
