import ProtocolDriver
import Foundation
import Glibc
import MockBlueZSupport
import StrapControl
import StrapWire
import Testing
@testable import StrapDaemon

extension TestTools {
    static var skipReason: Comment { Comment(rawValue: skipText) }
}

/// A whole `Daemon` in this process (not `--simulate`): state directory and socket in a temp
/// directory, BlueZ reached on a private bus passed through `DaemonOptions.systemBusAddress`
/// (never `setenv`, since tests run in parallel). `restart()` keeps the state directory.
final class BlueZDaemonHarness: @unchecked Sendable {
    let directory: String
    let socketPath: String
    let stateDirectory: String
    let configPath: String
    let busAddress: String
    private(set) var daemon: Daemon?

    init(busAddress: String, config: String = "", pairAgent: Bool = true, startNow: Bool = true, name: String = #function) throws {
        // sun_path holds 108 bytes: keep the socket directory short.
        directory = "/tmp/strapd-bz-\(name.filter(\.isLetter).prefix(10))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/s.sock"
        stateDirectory = directory + "/state"
        configPath = directory + "/strapd.conf"
        self.busAddress = busAddress
        try """
            [daemon]
            state_dir = \(stateDirectory)
            socket = \(socketPath)
            socket_group =
            [store]
            sync = none
            [bluetooth]
            pair_agent = \(pairAgent ? "yes" : "no")
            \(config)
            """.write(toFile: configPath, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        if startNow { try start() }
    }

    func start() throws {
        var options = DaemonOptions()
        options.configPath = configPath
        options.configExplicit = true
        options.systemBusAddress = busAddress
        options.forwardBusLog = false
        let daemon = try Daemon(options: options, environment: [:])
        try daemon.start()
        self.daemon = daemon
    }

    /// Graceful stop (what SIGTERM does), waiting until the daemon says it stopped.
    func stop() {
        guard let daemon else { return }
        let done = DispatchSemaphore(value: 0)
        daemon.onStopped = { _ in done.signal() }
        daemon.stop(exitCode: 0)
        _ = done.wait(timeout: .now() + 30)
        self.daemon = nil
    }

    func restart() throws {
        stop()
        try start()
    }

    func client(timeout: Double = 40) throws -> RawProtocolDriver {
        try RawProtocolDriver(path: socketPath, timeout: timeout)
    }

    func strapctl(_ args: String...) -> CommandOutput {
        Strapctl.run(["--socket", socketPath] + args)
    }

    /// The stored samples of `type`, oldest first, through `samples.anchored`.
    func stored(_ type: String) throws -> [JSONObject] {
        let c = try client()
        let r = try c.call(#"{"id":1,"op":"samples.anchored","types":["\#(type)"],"anchor":0,"limit":100000}"#)
        return r.result.objects("added")
    }

    func info(_ address: String) throws -> JSONObject {
        try client().call(#"{"id":1,"op":"devices.info","address":"\#(address)"}"#).result
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension JSONObject {
    func bool(_ key: String) -> Bool? { if case .bool(let b)? = self[key] { b } else { nil } }
    func number(_ key: String) -> Double? {
        switch self[key] {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }
}

/// The mock numbers its HR notifications: bpm = 60 + seq % 120 (Tests/Fixtures/mockbluez).
/// Valid while fewer than 120 were sent, which the tests keep to.
func mockSequence(_ samples: [JSONObject]) -> [Int] {
    samples.compactMap { $0.number("value").map { Int($0) - 60 } }
}
