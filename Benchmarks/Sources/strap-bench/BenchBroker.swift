import Foundation

/// Debian's mosquitto broker, started by strap-bench on a free loopback port with a
/// throwaway configuration: nothing on disk, errors only in its log, no queue limit (a
/// subscriber that falls behind is slowed down, not silently dropped). The live-latency
/// peer and the MQTT section run against it.
final class BenchBroker {
    let directory: String
    let port: Int
    private var process: Process

    init(tag: String, _ extra: [String] = []) throws {
        let binary = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let binary else { throw BenchFailure("mosquitto is not installed (scripts/deps.sh bench installs it)") }
        directory = NSTemporaryDirectory() + "strap-bench-mosquitto-\(tag)-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        var lines = ["listener \(port) 127.0.0.1", "allow_anonymous true", "persistence false", "max_queued_messages 0",
                     "log_dest stderr", "log_type error", "log_type warning"]
        // mosquitto started as root switches to the `mosquitto` user unless told otherwise.
        if getuid() == 0 { lines.append("user root") }
        try (lines + extra).joined(separator: "\n").appending("\n").write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        process = Process()
        try launch(binary)
    }

    /// A broker outage: SIGKILL (nothing persisted), then `start` brings it back on the same port.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The same configuration, after `kill`.
    func start() throws {
        guard let binary = process.executableURL?.path else { throw BenchFailure("mosquitto was never started") }
        try launch(binary)
    }

    private func launch(_ binary: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-c", directory + "/mosquitto.conf"]
        if !FileManager.default.fileExists(atPath: directory + "/broker.log") {
            _ = FileManager.default.createFile(atPath: directory + "/broker.log", contents: nil)
        }
        let log = FileHandle(forWritingAtPath: directory + "/broker.log")
        log?.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let deadline = monotonicNanos() + 5_000_000_000
        while !Self.accepts(port: port) {
            guard process.isRunning, monotonicNanos() < deadline else {
                let text = (try? String(contentsOfFile: directory + "/broker.log", encoding: .utf8)) ?? ""
                stop()
                throw BenchFailure("mosquitto did not start: \(text.split(separator: "\n").last ?? "no output")")
            }
            usleep(20_000)
        }
    }

    var pid: Int32 { process.processIdentifier }

    func stop() {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else { throw BenchFailure("no free loopback port for mosquitto") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
