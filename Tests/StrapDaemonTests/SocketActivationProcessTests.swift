import Foundation
import Glibc
import ProtocolDriver
import Testing

/// The real `strapd` socket-activated by systemd's own `systemd-socket-activate`, which binds
/// the socket, sets LISTEN_FDS and LISTEN_PID (its pid, which strapd keeps through exec) and
/// execs strapd at the first connection. In-process daemons never ask sd_listen_fds (their
/// environment is empty, docs/testing.md "The environment"), so this is where the daemon's
/// activation path runs outside the lab.
@Suite struct SocketActivationProcessTests {
    static let activator = "/usr/bin/systemd-socket-activate"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: activator),
                   "needs systemd-socket-activate (scripts/deps.sh test: systemd)"))
    func socketActivatedDaemonServesThePassedSocket() throws {
        let dir = try DaemonProcess()
        let ownSocket = dir.directory + "/own.sock"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.activator)
        // The activator hands strapd only PATH, TERM, USER, HOME and LISTEN_*, and what `-E`
        // names: the run's sanitizer settings (the ASan run turns leak detection off).
        let sanitizer = ["ASAN_OPTIONS", "LSAN_OPTIONS", "SWIFT_BACKTRACE"].compactMap { name in
            ProcessInfo.processInfo.environment[name].map { "\(name)=\($0)" }
        }
        p.arguments = ["-l", dir.socket] + sanitizer.flatMap { ["-E", $0] }
            + [DaemonProcess.binary, "--state-dir", dir.directory + "/state", "--socket", ownSocket,
               "--set", "daemon.socket_group=", "--simulate=1", "--log-level", "notice"]
        p.environment = ["PATH": "/usr/bin:/bin"]
        _ = FileManager.default.createFile(atPath: dir.logPath, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: dir.logPath) ?? FileHandle.nullDevice
        try p.run()
        defer {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
        }
        // The activator binds the path before it waits; 20 s only bounds a failure.
        var waited = 0
        while !FileManager.default.fileExists(atPath: dir.socket), p.isRunning, waited < 2000 { usleep(10_000); waited += 1 }
        let client = try RawProtocolDriver(path: dir.socket, timeout: 20)
        let reply = try client.call(#"{"id":1,"op":"status"}"#)
        #expect(reply.isOK, "\(reply)\n\(dir.log)")
        // It served the passed socket and bound none of its own.
        #expect(!FileManager.default.fileExists(atPath: ownSocket))
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(dir.log)")
        #expect(dir.log.contains("listening on socket-activated fd"), "\(dir.log)")
    }
}
