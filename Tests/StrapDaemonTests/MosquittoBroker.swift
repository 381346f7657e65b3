import Foundation
import Glibc
import Testing
import ThirdPartyReaders

/// A real mosquitto broker (Debian's) for one test, on a free loopback port, in a directory
/// of its own. Persistence off; `max_queued_messages 0` so that a slow consumer is never
/// dropped from under a test (mosquitto's default drops QoS 1 messages past 1000).
final class MosquittoBroker {
    let directory: String
    let port: Int
    private var extra: [String]
    private var process: ChildProcess?

    init(_ extra: [String] = [], name: String = #function) throws {
        directory = "/tmp/strapd-mq-\(name.filter(\.isLetter).prefix(10))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        self.extra = extra
        try start()
    }

    static var binary: String? {
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// (Re)starts the broker with `extra` configuration lines (replacing the previous ones
    /// when given) and waits until it accepts connections.
    func start(_ newExtra: [String]? = nil) throws {
        // A running broker goes first: the new one must be able to bind the same port.
        kill()
        if let newExtra { extra = newExtra }
        guard let binary = Self.binary else { throw BrokerFailure("mosquitto is missing: run scripts/deps.sh test") }
        var lines = ["per_listener_settings false", "persistence false", "log_dest file \(directory)/broker.log",
                     "log_type all", "listener \(port) 127.0.0.1"]
        if !extra.contains(where: { $0.hasPrefix("max_queued_messages") }) { lines.append("max_queued_messages 0") }
        if getuid() == 0 { lines.append("user root") }   // mosquitto drops root to `mosquitto`, who cannot read our files
        if !extra.contains(where: { $0.hasPrefix("allow_anonymous") }) { lines.append("allow_anonymous true") }
        lines += extra
        try (lines.joined(separator: "\n") + "\n").write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        let p = try ChildProcess(binary, ["-c", directory + "/mosquitto.conf"])
        process = p
        for _ in 0..<250 {
            if Self.accepts(port) { return }
            guard p.isRunning else { break }
            usleep(20_000)
        }
        throw BrokerFailure("mosquitto did not start: \(log.suffix(500))")
    }

    /// SIGKILL: no clean shutdown, nothing persisted.
    func kill() {
        process?.signal(SIGKILL)
        process?.wait()
        process = nil
    }

    /// SIGHUP: mosquitto re-reads its password and ACL files.
    func reload() {
        process?.signal(SIGHUP)
    }

    var log: String { (try? String(contentsOfFile: directory + "/broker.log", encoding: .utf8)) ?? "" }

    /// A mosquitto password file (hashed by mosquitto_passwd) holding `users`.
    func writePasswords(_ users: [String: String], to name: String = "passwd") throws -> String {
        let path = directory + "/" + name
        try "".write(toFile: path, atomically: true, encoding: .utf8)
        for (user, password) in users {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
            p.arguments = ["-b", path, user, password]
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw BrokerFailure("mosquitto_passwd failed") }
        }
        chmod(path, 0o600)
        return path
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw BrokerFailure("no free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// Eclipse Paho (Tests/Fixtures/mqtt/consume.py, in the test venv) subscribed to a broker:
/// an MQTT client nobody here wrote, recording every message it receives.
final class MQTTConsumer {
    struct Message {
        var topic: String
        var retain: Bool
        var payload: String
        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any]
        }
    }

    let out: String
    let ready: String
    private let process: ChildProcess

    init(port: Int, topics: [String] = ["#"], name: String, extra: [String] = []) throws {
        let python = try ThirdPartyReaders.requirePython()
        out = "/tmp/strapd-mqc-\(name)-\(UUID().uuidString.prefix(8)).jsonl"
        ready = out + ".ready"
        process = try ChildProcess(python.path, [ThirdPartyReaders.root.appendingPathComponent("Tests/Fixtures/mqtt/consume.py").path,
                                                 "--host", "127.0.0.1", "--port", String(port), "--out", out, "--ready", ready]
                                                + topics.flatMap { ["--topic", $0] } + extra)
        try waitReady(connects: 1)
    }

    /// Waits until the consumer is subscribed for the `connects`th time.
    func waitReady(connects: Int, seconds: Double = 20) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let data = FileManager.default.contents(atPath: ready),
               let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
               let n = o["connects"] as? Int, n >= connects { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw BrokerFailure("the MQTT consumer did not subscribe (connect #\(connects))")
    }

    /// Waits until no message has arrived for `quiet` seconds (at most `seconds` in all).
    func waitQuiet(quiet: Double = 1, seconds: Double = 15) {
        let deadline = Date().addingTimeInterval(seconds)
        var count = messages.count
        var since = Date()
        while Date() < deadline {
            usleep(100_000)
            let now = messages.count
            if now != count { count = now; since = Date() } else if Date().timeIntervalSince(since) >= quiet { return }
        }
    }

    var messages: [Message] {
        guard let text = try? String(contentsOfFile: out, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let topic = o["topic"] as? String, let payload = o["payload"] as? String else { return nil }
            return Message(topic: topic, retain: o["retain"] as? Bool ?? false, payload: payload)
        }
    }

    /// (uuid, anchor) of every sample message under `prefix`, in arrival order.
    func samples(under prefix: String) -> [(uuid: String, anchor: Int64)] {
        messages.filter { $0.topic.hasPrefix(prefix + "/samples/") }.compactMap { m in
            guard let o = m.json, let uuid = o["uuid"] as? String, let anchor = (o["anchor"] as? NSNumber)?.int64Value else { return nil }
            return (uuid, anchor)
        }
    }

    /// SIGTERM (it flushes and exits), SIGKILL if it has not after 5 s.
    func stop() {
        process.signal(SIGTERM)
        if !process.wait(seconds: 5) {
            process.signal(SIGKILL)
            process.wait()
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: out)
        try? FileManager.default.removeItem(atPath: ready)
    }
}

struct BrokerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A child started with posix_spawn and a clean signal state. Foundation's `Process` hands
/// the spawning thread's signal mask on, and a test runs on a Dispatch worker that blocks
/// every signal: mosquitto would then never see SIGHUP (reload) or SIGTERM.
final class ChildProcess {
    let pid: pid_t
    private var status: Int32?

    init(_ path: String, _ arguments: [String]) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw BrokerFailure("cannot start \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    var isRunning: Bool {
        guard status == nil else { return false }
        var s: Int32 = 0
        if waitpid(pid, &s, WNOHANG) == pid { status = s; return false }
        return true
    }

    func signal(_ sig: Int32) { if isRunning { Glibc.kill(pid, sig) } }

    /// Waits for the exit; false if it did not within `seconds`.
    @discardableResult
    func wait(seconds: Double = .infinity) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    deinit {
        if isRunning { Glibc.kill(pid, SIGKILL); wait() }
    }
}
