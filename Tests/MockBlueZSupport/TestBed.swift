import Dispatch
import Foundation
import StrapBlueZ
import StrapDBus

// The mock BlueZ test bed, shared by StrapBlueZTests and StrapDaemonTests (a plain target,
// since test targets cannot depend on each other).

/// Paths and availability of the external tools the integration tests need.
public enum TestTools {
    public static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/mockbluez")
    /// Debian's interpreter: the python3 first on PATH may lack python3-dbus
    /// (docs/swift-on-linux.md#private-buses-and-a-mock-bluez).
    public static let python = "/usr/bin/python3"
    public static let dbusDaemon = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].first { FileManager.default.isExecutableFile(atPath: $0) }

    public static let available: Bool = {
        guard dbusDaemon != nil, FileManager.default.isExecutableFile(atPath: python) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", "import dbus, dbusmock, gi"]
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    public static let skipText = "needs dbus-daemon and /usr/bin/python3 with python3-dbus and python3-dbusmock (scripts/deps.sh)"
}

/// A child process killed by PID when the test is done, whatever happened.
public final class Child: @unchecked Sendable {
    public let process = Process()
    private let output = Pipe()
    private let lock = NSLock()
    private var lines: [String] = []
    private var buffer = Data()

    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], quiet: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardOutput = output
        // dbus-daemon complains that it may not raise its fd limit when unprivileged; harmless.
        if quiet { process.standardError = FileHandle.nullDevice }
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.buffer.append(data)
            while let nl = self.buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: self.buffer[self.buffer.startIndex..<nl], as: UTF8.self)
                self.lines.append(line)
                self.buffer.removeSubrange(self.buffer.startIndex...nl)
            }
            self.lock.unlock()
        }
        try process.run()
    }

    /// Waits for the first stdout line satisfying `match` (startup handshakes).
    public func waitForLine(timeout: TimeInterval = 20, _ match: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            lock.lock()
            let found = lines.first(where: match)
            lock.unlock()
            if let found { return found }
            if !process.isRunning { throw TestBedError.childExited(process.executableURL?.lastPathComponent ?? "?", process.terminationStatus) }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestBedError.timeout("waiting for output of \(process.executableURL?.lastPathComponent ?? "?")")
    }

    public func kill(_ signal: Int32 = SIGTERM) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    public func waitForExit(timeout: TimeInterval = 10) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    deinit {
        kill(SIGKILL)
        output.fileHandleForReading.readabilityHandler = nil
    }
}

public enum TestBedError: Error, CustomStringConvertible {
    case timeout(String)
    case childExited(String, Int32)
    case command(String)
    public var description: String {
        switch self {
        case .timeout(let what): "timed out \(what)"
        case .childExited(let name, let status): "\(name) exited with \(status)"
        case .command(let text): text
        }
    }
}

/// A private dbus-daemon with a system-bus-like config, in its own temp directory.
public final class PrivateBus: @unchecked Sendable {
    public let directory: URL
    public let address: String
    private let daemon: Child

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-bluez-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let template = try String(contentsOf: TestTools.fixtures.appendingPathComponent("bus.conf"), encoding: .utf8)
        let config = directory.appendingPathComponent("bus.conf")
        try template.replacingOccurrences(of: "LISTEN_DIR", with: directory.path).write(to: config, atomically: true, encoding: .utf8)
        daemon = try Child(TestTools.dbusDaemon!, [
            "--config-file=" + config.path, "--nofork", "--nopidfile", "--nosyslog", "--print-address=1",
        ], quiet: true)
        address = try daemon.waitForLine { $0.hasPrefix("unix:") }
    }

    public func python(_ script: String, _ arguments: [String] = []) throws -> Child {
        try Child(TestTools.python, ["-u", TestTools.fixtures.appendingPathComponent(script).path] + arguments,
                  environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
    }

    /// The bus goes away (dbus-daemon dies), for tests of a lost connection.
    public func kill() {
        daemon.kill(SIGKILL)
        daemon.waitForExit()
    }

    deinit {
        daemon.kill(SIGKILL)
        daemon.waitForExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` on the bus queue and waits for the value it eventually delivers.
public func onQueue<T: Sendable>(_ queue: DispatchQueue, timeout: TimeInterval = 20,
                          _ body: @escaping @Sendable (@escaping @Sendable (T) -> Void) -> Void) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    queue.async { body { value in box.set(value); done.signal() } }
    guard done.wait(timeout: .now() + timeout) == .success, let value = box.get() else {
        throw TestBedError.timeout("for a bus operation")
    }
    return value
}

public final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?
    public init() {}
    public func set(_ v: T) { lock.lock(); if value == nil { value = v }; lock.unlock() }
    public func get() -> T? { lock.lock(); defer { lock.unlock() }; return value }
}

/// Polls `condition` until true; integration tests wait for outcomes, never assert durations.
public func eventually(timeout: TimeInterval = 30, _ what: String, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return }
        Thread.sleep(forTimeInterval: 0.05)
    }
    throw TestBedError.timeout(what)
}

public final class ResultList<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var _items: [T] = []
    public init() {}
    public func append(_ item: T) { lock.lock(); _items.append(item); lock.unlock() }
    public var items: [T] { lock.lock(); defer { lock.unlock() }; return _items }
}
