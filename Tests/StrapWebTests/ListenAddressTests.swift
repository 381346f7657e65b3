import Foundation
import Glibc
import Testing
import StrapWeb

/// Rule: strapd-web listens on loopback unless it serves TLS (docs/web.md, "Security").
/// The addresses refused here are never bound: the check comes before the socket.
@Suite struct ListenAddressTests {
    @Test(arguments: ["0.0.0.0:8420", "[::]:8420", "192.0.2.1:8420", "[2001:db8::1]:8420"])
    func anAddressThatIsNotLoopbackIsRefusedWithoutTLS(_ text: String) throws {
        let address = try ListenAddress(parsing: text)
        #expect(!address.isLoopback)
        #expect(throws: ListenerError.notLoopback(text)) { try address.requireLoopback(unlessTLS: false) }
        let refusal = #expect(throws: WebOptions.UsageError.self) { try WebOptions(arguments: ["--listen", text]) }
        #expect(refusal?.description == ListenerError.notLoopback(text).description)
        let served = try WebOptions(arguments: ["--listen", text, "--tls-cert", "c.pem", "--tls-key", "k.pem"])
        #expect(served.listen == address)
        #expect(served.tlsCertificate == "c.pem" && served.tlsKey == "k.pem")
    }

    @Test func wildcardAndOwnAddressNames() throws {
        #expect(try ListenAddress(parsing: "0.0.0.0:1").isWildcard)
        #expect(try ListenAddress(parsing: "[::]:1").isWildcard)
        #expect(try !ListenAddress(parsing: "192.0.2.1:1").isWildcard)
        #expect(try ListenAddress(parsing: "[fd00::2]:8443").hostHeaderName == "[fd00::2]")
        #expect(try ListenAddress(parsing: "192.0.2.1:8443").hostHeaderName == "192.0.2.1")
    }

    @Test(arguments: ["localhost:8420", "8420", "127.0.0.1", "127.0.0.1:99999", "[::1]8420"])
    func aNameOrAMalformedAddressIsRefused(_ text: String) {
        #expect(throws: ListenerError.badAddress(text)) { try ListenAddress(parsing: text) }
    }

    @Test(arguments: [("127.0.0.1:8420", "127.0.0.1:8420"), ("127.1.2.3:0", "127.1.2.3:0"), ("[::1]:8420", "[::1]:8420")])
    func loopbackIsAccepted(_ text: String, _ shown: String) throws {
        let address = try ListenAddress(parsing: text)
        #expect(address.description == shown)
        #expect(address.isLoopback)
        try address.requireLoopback(unlessTLS: false)
    }

    /// What systemd passes is taken only as one listening TCP socket (WebMain then puts its
    /// address through the same loopback rule as --listen).
    @Test func anActivatedSocketMustBeOneListeningTCPSocket() throws {
        let listening = try Listener.bind(ListenAddress(parsing: "127.0.0.1:0"))
        defer { close(listening.fd) }
        let taken = try #require(try Listener.activated(count: 1, firstFD: listening.fd))
        #expect(taken.address == listening.address)
        #expect(try Listener.activated(count: 0, firstFD: listening.fd) == nil)
        #expect(throws: ListenerError.unexpectedActivationCount(2)) { try Listener.activated(count: 2, firstFD: listening.fd) }
        let unix = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(unix) }
        #expect(throws: ListenerError.activatedNotTCP) { try Listener.activated(count: 1, firstFD: unix) }
        // Bound on loopback but not listening: not a socket to serve on.
        let quiet = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(quiet) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(quiet, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0)
        #expect(throws: ListenerError.activatedNotTCP) { try Listener.activated(count: 1, firstFD: quiet) }
    }

    /// The executable refuses at start, with a usage error (exit 2) that says why.
    @Test func strapdWebExitsOnANonLoopbackListenAddress() throws {
        let p = Process()
        p.executableURL = WebHarness.buildDirectory.appendingPathComponent("strapd-web")
        let state = NSTemporaryDirectory() + "strapweb-listen-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        p.arguments = ["--listen", "192.0.2.1:8420", "--socket", state + "/none.sock", "--state-dir", state]
        let stderr = Pipe()
        p.standardError = stderr
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // Without the rule it would try to bind and serve: give it 10 s, then end it.
        for _ in 0..<1000 where p.isRunning { usleep(10_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == 2, "\(text)")
        #expect(text.contains("not loopback") && text.contains("--tls-cert"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: state + "/token"), "a token was made before the refusal")
    }
}
