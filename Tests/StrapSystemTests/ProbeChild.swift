import Foundation
import Glibc
import StrapOS
import Testing

/// `strap-env-probe` (Tests/EnvironmentProbe) as a child spawned with exactly the environment
/// a test gives it: what libsystemd reads from the process environment is tested there, since
/// no test may change the test process's own (docs/testing.md, "The environment").
/// Its stdout is read line by line; closing its stdin tells it the test did its part.
final class ProbeChild {
    let pid: pid_t
    private let input: CInt
    private let output: CInt
    private var pending: [UInt8] = []
    private var ended = false

    /// The probe sits next to the test bundle in .build/<triple>/debug/.
    static func path() throws -> String {
        let exe = try #require(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let path = URL(fileURLWithPath: exe).deletingLastPathComponent().path + "/strap-env-probe"
        try #require(FileManager.default.isExecutableFile(atPath: path), "build strap-env-probe first (swift build --build-tests)")
        return path
    }

    /// What every probe gets besides the test's variables: a PATH, and the run's sanitizer and
    /// backtrace settings (the ASan run turns leak detection off; a probe built with ASan would
    /// otherwise fail at exit on sd-bus's and Dispatch's allocations). Read, never written.
    static let inherited: [String: String] = {
        let own = ProcessInfo.processInfo.environment
        var variables = ["PATH": "/usr/bin:/bin"]
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "SWIFT_BACKTRACE"] { variables[name] = own[name] }
        return variables
    }()

    /// `ownPID` names variables set to the child's own pid, as systemd sets WATCHDOG_PID and
    /// LISTEN_PID: a shell exports `$$` and execs the probe, which keeps the pid.
    init(_ arguments: [String], environment: [String: String] = [:], ownPID: [String] = []) throws {
        let probe = try Self.path()
        var stdinPipe: [CInt] = [-1, -1], stdoutPipe: [CInt] = [-1, -1]
        guard pipe(&stdinPipe) == 0 else { throw Errno.current }
        guard pipe(&stdoutPipe) == 0 else {
            let e = Errno.current
            stdinPipe.forEach { Glibc.close($0) }
            throw e
        }
        // Close-on-exec at once (Glibc does not import pipe2), so children spawned by parallel
        // tests do not hold our pipes; the dup2s below give the child its ends without it.
        for fd in stdinPipe + stdoutPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        let program: String, argv: [String]
        if ownPID.isEmpty {
            (program, argv) = (probe, [probe] + arguments)
        } else {
            let exports = ownPID.map { "export \($0)=$$; " }.joined()
            (program, argv) = ("/bin/sh", ["/bin/sh", "-c", exports + "exec \"$0\" \"$@\"", probe] + arguments)
        }
        let variables = Self.inherited.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnvp = variables.map { strdup($0) } + [nil]
        defer { (cArgv + cEnvp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, nil, cArgv, cEnvp)
        Glibc.close(stdinPipe[0])
        Glibc.close(stdoutPipe[1])
        guard rc == 0 else {
            Glibc.close(stdinPipe[1])
            Glibc.close(stdoutPipe[0])
            throw Errno(rawValue: rc)
        }
        self.pid = pid
        input = stdinPipe[1]
        output = stdoutPipe[0]
    }

    deinit {
        if !ended { _ = finish() }
    }

    /// The next line without its newline; nil at EOF or after 20 s (a bound for failures,
    /// not a timing check).
    func readLine() -> String? {
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            var pfd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, 20_000)
            if ready < 0 && errno == EINTR { continue }
            guard ready == 1 else { return nil }
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = buf.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            pending += buf[..<n]
        }
    }

    /// Closes the child's stdin, reads its remaining lines and reaps it. A child still running
    /// 20 s later is killed (a bound for failures).
    func finish() -> (lines: [String], exitStatus: Int32?) {
        guard !ended else { return ([], nil) }
        ended = true
        Glibc.close(input)
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        Glibc.close(output)
        var status: Int32 = 0
        var reaped = false
        for _ in 0..<20_000 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { reaped = true; break }
            if r < 0 && errno != EINTR { break }
            usleep(1000)
        }
        if !reaped {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return (lines, nil)
        }
        // Normal exit: WIFEXITED and WEXITSTATUS, which Swift does not import as macros.
        return (lines, status & 0x7f == 0 ? (status >> 8) & 0xff : nil)
    }
}

/// Runs the probe to its end: its lines, and a recorded issue unless it exited 0.
func probe(_ arguments: [String], environment: [String: String] = [:], ownPID: [String] = [],
           sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
    let child = try ProbeChild(arguments, environment: environment, ownPID: ownPID)
    let (lines, status) = child.finish()
    #expect(status == 0, "strap-env-probe \(arguments) ended with \(String(describing: status)): \(lines)", sourceLocation: sourceLocation)
    return lines
}
