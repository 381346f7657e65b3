import CShims
import Dispatch
import FoundationEssentials
import Glibc
import StrapOS

/// strapd-web's command line (strapd-web --help).
public struct WebOptions: Equatable, Sendable {
    public var listen = ListenAddress.defaultAddress
    public var socket = "/run/strapd/strapd.sock"
    /// systemd's StateDirectory= when set, else the packaged default.
    public var stateDirectory = "/var/lib/strapd-web"
    public var allowedHosts: [String] = []
    /// Both or neither (TLSError.incomplete): PEM files, read at start.
    public var tlsCertificate: String?
    public var tlsKey: String?

    public static let usage = """
        usage: strapd-web [--listen 127.0.0.1:8420] [--socket /run/strapd/strapd.sock] [--state-dir DIR] [--allow-host NAME]...
                          [--tls-cert FILE --tls-key FILE]
          --listen ADDR      address and port (ignored under socket activation: strapd-web.socket);
                             anything but loopback needs --tls-cert and --tls-key
          --socket PATH      strapd's socket
          --state-dir DIR    where the token file lives (default $STATE_DIRECTORY, else /var/lib/strapd-web)
          --allow-host NAME  one more name the Host header may carry (besides localhost, 127.0.0.1, [::1]
                             and the listening address)
          --tls-cert FILE    serve HTTPS: the PEM certificate (chain, the server's first)
          --tls-key FILE     and its PEM private key (unencrypted)
        """

    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    public init() {
        if let d = getenv("STATE_DIRECTORY").map({ String(cString: $0) }), !d.isEmpty {
            // StateDirectory= may list several, colon-separated; strapd-web's unit names one.
            stateDirectory = String(d.split(separator: ":").first ?? Substring(d))
        }
    }

    public init(arguments: [String]) throws(UsageError) {
        self.init()
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let v = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return v
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--listen":
                let text = try value(flag)
                do { listen = try ListenAddress(parsing: text) } catch { throw UsageError(description: error.description) }
            case "--socket": socket = try value(flag)
            case "--state-dir": stateDirectory = try value(flag)
            case "--tls-cert": tlsCertificate = try value(flag)
            case "--tls-key": tlsKey = try value(flag)
            case "--allow-host":
                let host = try value(flag)
                guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == " " }) else { throw UsageError(description: "--allow-host takes a host name, not '\(host)'") }
                allowedHosts.append(host)
            default: throw UsageError(description: "unknown option '\(flag)'")
            }
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else { throw UsageError(description: TLSError.incomplete.description) }
        do { try listen.requireLoopback(unlessTLS: tlsCertificate != nil) } catch { throw UsageError(description: error.description) }
    }
}

/// strapd-web's start and stop: socket (activated or bound), token, live relay, HTTP server,
/// then SIGTERM/SIGINT.
public enum WebMain {
    /// How often the pages only start-up or a page's first visit used are handed back.
    static let memoryReleaseInterval: Double = 20
    public static func run(arguments: [String]) -> Never {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(WebOptions.usage)
            exit(0)
        }
        let options: WebOptions
        do { options = try WebOptions(arguments: arguments) } catch { fail("\(error)\n\(WebOptions.usage)", code: 2) }
        // As strapd does (StrapOS): few arenas, large blocks in mappings of their own, so what a
        // burst of connections (a thread each) allocated goes back when they end.
        let environment = ProcessInfo.processInfo.environment
        MallocArenas.limit(to: 2, environment: environment)
        MallocArenas.returnFreedMemory(environment: environment)
        let listener: Listener
        let token: String, overlayToken: String
        var tls: TLSMaterial?
        do {
            // The TLS files first: a missing one ends strapd-web before it binds or makes a token.
            if let certificate = options.tlsCertificate, let key = options.tlsKey { tls = try TLSMaterial.load(certificate: certificate, key: key) }
            listener = try Listener.activated() ?? Listener.bind(options.listen)
            // A passed socket meets the rule --listen met in WebOptions.
            try listener.address.requireLoopback(unlessTLS: tls != nil)
            token = try AccessToken.loadOrCreate(in: options.stateDirectory)
            overlayToken = try AccessToken.loadOrCreate(in: options.stateDirectory, file: AccessToken.overlayFileName)
        } catch { fail("\(error)", code: 1) }
        // A copied file would make the read-only URL a steering one.
        if AccessToken.matches(overlayToken, token) { fail("\(options.stateDirectory)/\(AccessToken.overlayFileName) equals the token; remove it", code: 1) }

        let link = DaemonLink(socket: options.socket)
        let relay = LiveRelay()
        let sessions = SessionBook()
        // Beyond loopback, the address strapd-web listens on is a name the Host header may carry.
        let ownAddress = listener.address.isLoopback || listener.address.isWildcard ? [] : [listener.address.hostHeaderName]
        let app = WebApp(link: link, relay: relay, security: WebSecurity(token: token, sessions: sessions, overlayToken: overlayToken,
                                                                          extraHosts: options.allowedHosts + ownAddress, tls: tls != nil),
                         sessions: sessions)
        let server = HTTPServer { app.handle($0) }
        relay.start(link)
        do {
            if let tls { try server.start(listener: listener.fd, tls: tls) } else { try server.start(listener: listener.fd) }
        } catch { fail("\(error)", code: 1) }
        // After the server started: a certificate libmicrohttpd refuses leaves the old URL files alone.
        let base = baseURL(listener.address, tls: tls != nil, names: options.allowedHosts)
        do {
            // `url` last: its appearing says both are written (the tests wait for it).
            try AccessToken.writeURL("\(base)/overlay?token=\(overlayToken)", in: options.stateDirectory, file: AccessToken.overlayURLFileName)
            try AccessToken.writeURL("\(base)/?token=\(token)", in: options.stateDirectory)
        } catch { fail("\(error)", code: 1) }
        // The token stays out of the log (journals are widely readable): the URL file, 0600, has it.
        writeError("strapd-web: listening on \(tls != nil ? "https" : "http")://\(listener.address)/ (strapd at \(options.socket)); the URL with the token is in \(options.stateDirectory)/\(AccessToken.urlFileName), the overlay's in \(AccessToken.overlayURLFileName)\n")

        // Start-up leaves most of the static binary's code and read-only data mapped, of which
        // serving touches little (StrapOS.CodePages): handed back now and every 20 s, with the
        // heap's free pages; the page cache keeps them for the next fault. 20 s, not a minute:
        // a page's first visit (its session, strapd's first answers) maps 2 MB that relaying
        // the stream afterwards does not touch, and a relaying strapd-web maps only some
        // 0.4 MB again after each release (a few dozen faults).
        let memory = DispatchSource.makeTimerSource(queue: .main)
        memory.schedule(deadline: .now() + 1, repeating: Self.memoryReleaseInterval)
        memory.setEventHandler {
            MallocArenas.trim()
            _ = try? CodePages.release()
            _ = try? CodePages.releaseProgramReadOnlyData()
        }
        memory.resume()

        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let stop: @Sendable () -> Void = {
            relay.stop()
            server.stop()
            exit(0)
        }
        let term = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
        term.setEventHandler(handler: stop)
        term.resume()
        let int = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
        int.setEventHandler(handler: stop)
        int.resume()
        dispatchMain()
    }

    /// The scheme, host and port the URL files name. Over TLS the first --allow-host name, which
    /// the certificate is most likely for; else the bound address, loopback for a wildcard one.
    static func baseURL(_ address: ListenAddress, tls: Bool, names: [String]) -> String {
        let host = if tls, let name = names.first { name } else if address.isWildcard { address.ipv6 ? "[::1]" : "127.0.0.1" } else { address.hostHeaderName }
        return "\(tls ? "https" : "http")://\(host):\(address.port)"
    }

    static func fail(_ message: String, code: Int32) -> Never {
        writeError("strapd-web: \(message)\n")
        exit(code)
    }

    /// stderr through CShims: Swift 6 refuses the FILE* global (docs/swift-on-linux.md).
    static func writeError(_ text: String) {
        text.withCString { cshims_write_stderr($0, strlen($0)) }
    }
}
