import CShims
import Glibc
import StrapOS
import StrapSystem
import StrapWire
import Synchronization
import Testing

/// A private directory under /tmp, removed with everything in it by `remove()`.
struct TempDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/strapd-test-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw Errno.current }
        path = String(cString: p)
    }

    func remove() {
        _ = try? run("/bin/rm", ["-rf", path])
    }
}

/// Polls `condition` until it holds; the timeout only bounds a failing test, nothing
/// about timing is asserted.
func eventually(timeoutSeconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeoutSeconds
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A blocking test client on a unix socket.
final class Client {
    let fd: CInt
    private var pending: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        var tv = timeval(tv_sec: 20, tv_usec: 0)  // a hung server fails the test, not the run
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard cshims_unix_connect(fd, path) == 0 else {
            let e = Errno.current
            Glibc.close(fd)
            throw e
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { cshims_send_nosignal(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Errno.current }
            offset += n
        }
    }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// The next line without its newline, or nil at EOF.
    func readLine() throws -> String? {
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            var buf = [UInt8](repeating: 0, count: 65536)
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return nil }
            guard n > 0 else { throw Errno.current }
            pending += buf[..<n]
        }
    }

    func readJSON() throws -> JSONObject? {
        guard let line = try readLine() else { return nil }
        guard case .object(let o) = try JSONParser.parse(Array(line.utf8)) else { return nil }
        return o
    }
}

/// What a `TestHandler` saw, for assertions.
struct Observed {
    var opened: [UInt64] = []
    var lines: [(UInt64, String)] = []
    var closed: [UInt64: CloseReason] = [:]
    var inputEnded: [UInt64] = []
    var highWater: [UInt64] = []
    var drained: [UInt64] = []
    var acceptErrors: [SystemCallError] = []
    var acceptRecoveries: [Int] = []
    var peers: [UInt64: PeerIdentity] = [:]
}

/// Replies to each request per `respond`; by default echoes `op` and the peer.
final class TestHandler: ConnectionHandler {
    let observed = Mutex(Observed())
    let lastConnection = Mutex<Connection?>(nil)
    let respond: @Sendable (Connection, Request) -> Void
    let finishOnInputEnd: Bool
    let onInputEnded: (@Sendable (Connection) -> Void)?

    init(finishOnInputEnd: Bool = true, respond: @escaping @Sendable (Connection, Request) -> Void = TestHandler.echo,
         onInputEnded: (@Sendable (Connection) -> Void)? = nil) {
        self.respond = respond
        self.finishOnInputEnd = finishOnInputEnd
        self.onInputEnded = onInputEnded
    }

    static let echo: @Sendable (Connection, Request) -> Void = { connection, request in
        let p = connection.peer
        connection.write(Reply.success(id: request.id, result: [
            "op": .string(request.op), "pid": .int(Int64(p.pid)), "uid": .int(Int64(p.uid)),
            "gid": .int(Int64(p.gid)), "groups": .array(p.groups.map { .int(Int64($0)) }),
        ]))
    }

    func snapshot() -> Observed { observed.withLock { $0 } }

    func connectionOpened(_ c: Connection) {
        observed.withLock { $0.opened.append(c.id); $0.peers[c.id] = c.peer }
        lastConnection.withLock { $0 = c }
    }

    func connection(_ c: Connection, received line: [UInt8]) {
        observed.withLock { $0.lines.append((c.id, String(decoding: line, as: UTF8.self))) }
        do {
            respond(c, try Request.parse(line: line))
        } catch {
            c.write(Reply.failure(error))
        }
    }

    func connectionInputEnded(_ c: Connection) {
        observed.withLock { $0.inputEnded.append(c.id) }
        onInputEnded?(c)
        if finishOnInputEnd { c.finish() }
    }

    func connectionOutputHighWater(_ c: Connection) { observed.withLock { $0.highWater.append(c.id) } }
    func connectionOutputDrained(_ c: Connection) { observed.withLock { $0.drained.append(c.id) } }
    func connectionClosed(_ c: Connection, reason: CloseReason) { observed.withLock { $0.closed[c.id] = reason } }
    func serverAcceptFailed(_ error: SystemCallError) { observed.withLock { $0.acceptErrors.append(error) } }
    func serverAcceptRecovered(from error: SystemCallError, failures: Int, seconds: Double) {
        observed.withLock { $0.acceptRecoveries.append(failures) }
    }
}

/// A server on a fresh socket in a fresh directory; `stop()` cleans both.
struct TestServer {
    let directory: TempDirectory
    let path: String
    let server: UnixServer
    let handler: TestHandler

    init(handler: TestHandler = TestHandler(), configuration: ServerConfiguration = ServerConfiguration(),
         syscalls: Syscalls = .live, mode: mode_t = 0o660) throws {
        directory = try TempDirectory()
        path = directory.path + "/strapd.sock"
        self.handler = handler
        let listener = try UnixListener.bind(path: path, mode: mode)
        server = UnixServer(listener: listener, handler: handler, configuration: configuration, syscalls: syscalls)
        server.start()
    }

    func connectionCount() -> Int { server.queue.sync { server.connectionCount } }

    func stop() {
        let done = Mutex(false)
        server.stop { done.withLock { $0 = true } }
        _ = eventually { done.withLock { $0 } }
        directory.remove()
    }
}

/// posix_spawn with an explicit environment (never the process's, which other tests
/// may be changing), stdout captured. Returns (pid, exit status, stdout).
@discardableResult
func run(_ path: String, _ arguments: [String], environment: [String] = ["PATH=/usr/bin:/bin"]) throws -> (pid: pid_t, status: Int32, output: String) {
    var pipeFDs: [CInt] = [-1, -1]
    guard pipe(&pipeFDs) == 0 else { throw Errno.current }
    // Close-on-exec at once, so children spawned by parallel tests do not hold our pipe.
    for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
    Glibc.close(pipeFDs[1])
    guard rc == 0 else { Glibc.close(pipeFDs[0]); throw Errno(rawValue: rc) }
    var output: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buf.withUnsafeMutableBytes { Glibc.read(pipeFDs[0], $0.baseAddress, $0.count) }
        if n > 0 { output += buf[..<n] } else if n < 0 && errno == EINTR { continue } else { break }
    }
    Glibc.close(pipeFDs[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (pid, status, String(decoding: output, as: UTF8.self))
}
