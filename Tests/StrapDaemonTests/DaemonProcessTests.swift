import ProtocolDriver
import Foundation
import Glibc
import Testing
import StrapControl
import StrapIngest
import StrapModel
import StrapStore
import StrapWire
@testable import StrapDaemon

/// The real `strapd` binary as a child process: killed with SIGKILL mid-ingest and restarted,
/// stopped with SIGTERM; readers resume from their anchors.
final class DaemonProcess {
    static var binary: String {
        // The test bundle sits in .build/<triple>/debug next to the executables it depends on.
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("strapd").path
    }

    let directory: String
    var socket: String { directory + "/s.sock" }
    var logPath: String { directory + "/strapd.log" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    private(set) var process: Process?

    init(name: String = #function) throws {
        directory = "/tmp/strapd-dp-\(name.filter(\.isLetter).prefix(10))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func start(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["--state-dir", directory + "/state", "--socket", socket, "--set", "daemon.socket_group=",
                       "--log-level", "warning"] + arguments
        // Appended across restarts; tests read it through `log`.
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        p.standardError = log ?? FileHandle.nullDevice
        try p.run()
        process = p
        // A killed daemon leaves its socket file behind: wait until a status call is answered.
        for attempt in 0..<300 {
            do {
                _ = try client().call(#"{"id":0,"op":"status"}"#)
                return
            } catch {
                if attempt == 299 || !p.isRunning { throw error }
                usleep(20_000)
            }
        }
    }

    func client() throws -> RawProtocolDriver { try RawProtocolDriver(path: socket, timeout: 20) }

    /// SIGSTOP (true) or SIGCONT (false): the process held, not ended.
    func hold(_ held: Bool) {
        if let p = process { kill(p.processIdentifier, held ? SIGSTOP : SIGCONT) }
    }

    /// Sends `sig` and waits for the exit, 60 s at most: a daemon that ignores SIGTERM (a lost
    /// signal once hung a whole CI run here) is then killed and the test fails.
    func signal(_ sig: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let p = process else { return }
        kill(p.processIdentifier, sig)
        var waited = 0
        while p.isRunning, waited < 6000 { usleep(10_000); waited += 1 }
        if p.isRunning {
            Issue.record("strapd did not exit within 60 s of signal \(sig); killed", sourceLocation: sourceLocation)
            kill(p.processIdentifier, SIGKILL)
        }
        p.waitUntilExit()
        process = nil
    }

    deinit {
        if let p = process { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `executable` to its end; its exit status and what it wrote to stderr.
func runToExit(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, stderr: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    if let environment { p.environment = environment }
    let stderr = Pipe()
    p.standardError = stderr
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, text)
}

/// Reads `samples.anchored` pages from `anchor` until the page is empty; returns (uuid, anchor) pairs and the next anchor.
func readAnchored(_ client: RawProtocolDriver, from anchor: Int64, limit: Int = 500) throws -> (items: [(String, Int64)], anchor: Int64) {
    var items: [(String, Int64)] = []
    var a = anchor
    var id: Int64 = 100
    while true {
        id += 1
        let reply = try client.call(#"{"id":\#(id),"op":"samples.anchored","anchor":\#(a),"limit":\#(limit)}"#)
        guard reply.isOK, let next = reply.result.int("anchor") else {
            Issue.record("bad anchored reply \(reply)")
            return (items, a)
        }
        for s in reply.result.objects("added") { items.append((s.string("uuid") ?? "", s.int("anchor") ?? -1)) }
        if next == a { return (items, a) }
        a = next
    }
}

@Suite(.serialized) struct DaemonProcessTests {
    @Test func killedDaemonResumesAnchoredReadersWithoutGapOrRepeat() throws {
        let daemon = try DaemonProcess()
        var seen: [String: Int64] = [:]
        var anchor: Int64 = 0
        var kills = 0
        for round in 0..<4 {
            try daemon.start(["--simulate=6"])
            let client = try daemon.client()
            // Read as a follower does until this run has stored a few seconds' worth (not a
            // fixed sleep: a loaded machine starts the daemon slower), then kill mid-ingest.
            var fresh = 0
            let deadline = DispatchTime.now() + .seconds(60)
            while fresh < 15 + 10 * round, DispatchTime.now() < deadline {
                let (items, next) = try readAnchored(client, from: anchor)
                for (uuid, a) in items {
                    #expect(seen[uuid] == nil, "sample \(uuid) served twice")
                    #expect(a > anchor)
                    seen[uuid] = a
                }
                fresh += items.count
                anchor = next
                usleep(100_000)
            }
            // Mid-ingest: the simulator keeps submitting while we kill.
            daemon.signal(SIGKILL)
            kills += 1
        }
        try daemon.start(["--simulate=6"])
        let client = try daemon.client()
        let (rest, restAnchor) = try readAnchored(client, from: anchor)
        for (uuid, a) in rest {
            #expect(seen[uuid] == nil, "sample \(uuid) served twice")
            seen[uuid] = a
        }
        // Everything a reader was given before any kill is still there, at the same anchor.
        let (all, _) = try readAnchored(client, from: 0)
        let stored = Dictionary(all.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(seen.count > 50 && kills == 4)
        #expect(seen.allSatisfy { stored[$0.key] == $0.value }, "a sample a reader had seen is gone or moved")
        // Resuming readers saw every stored item exactly once: anchors 1...n with no hole. The
        // simulator still runs, so the full read may hold newer items than the resumed one
        // reached: compare up to where that stopped.
        let anchors = seen.values.sorted()
        #expect(anchors == all.map(\.1).filter { $0 <= restAnchor }.sorted())
        daemon.signal(SIGTERM)
    }

    /// Issue 15 item 0: two writers on one store truncated each other's records as torn
    /// tails. The second daemon must refuse, name the holder, and touch nothing.
    @Test func aSecondDaemonOnTheSameStateDirectoryRefusesToStart() throws {
        let daemon = try DaemonProcess()
        try daemon.start(["--simulate=3"])
        let holder = try #require(daemon.process).processIdentifier
        usleep(500_000)
        let (status, message) = try runToExit(DaemonProcess.binary, ["--state-dir", daemon.directory + "/state",
                                                                     "--socket", daemon.directory + "/second.sock",
                                                                     "--set", "daemon.socket_group=", "--simulate=3"])
        #expect(status == 1)
        #expect(message.contains("is in use by another strapd (pid \(holder))"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory + "/second.sock"))
        // The holder went on writing; all it served survives its stop and a restart, whole.
        usleep(500_000)
        let (served, _) = try readAnchored(daemon.client(), from: 0)
        daemon.signal(SIGTERM)
        try daemon.start([])
        #expect(!daemon.log.contains("damage"), "\(daemon.log)")
        let (stored, _) = try readAnchored(daemon.client(), from: 0)
        let byUUID = Dictionary(stored.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(served.count >= 3)
        #expect(served.allSatisfy { byUUID[$0.0] == $0.1 })
        daemon.signal(SIGTERM)
    }

    /// `[daemon] max_workout_sessions` bounds the sessions open at once in the shipped daemon
    /// (the engine's own bound is tested in WorkoutProtocolTests).
    @Test func theConfiguredWorkoutSessionLimitHolds() throws {
        let daemon = try DaemonProcess()
        try daemon.start(["--simulate=1", "--set", "daemon.max_workout_sessions=1"])
        let c = try daemon.client()
        let first = try c.call(#"{"id":1,"op":"workout.start","activityType":"walking","devices":["AA:BB:CC:00:00:01"]}"#)
        #expect(first.isOK, "\(first)")
        let second = try c.call(#"{"id":2,"op":"workout.start","activityType":"walking","devices":["AA:BB:CC:00:00:02"]}"#)
        #expect(second.errorCode == "busy")
        #expect(second.errorMessage?.contains("1 workout sessions are open, the most strapd keeps (1)") == true, "\(second)")
        daemon.signal(SIGTERM)
    }

    /// The lock dies with its holder: a SIGKILLed daemon is replaced at once, no stale lock.
    @Test func aKilledHoldersLockIsReleasedAtOnce() throws {
        let daemon = try DaemonProcess()
        try daemon.start(["--simulate=3"])
        let first = try #require(daemon.process).processIdentifier
        daemon.signal(SIGKILL)
        let lockFile = daemon.directory + "/state/store/store.lock"
        #expect((try? String(contentsOfFile: lockFile, encoding: .utf8))?.contains("\(first)") == true)
        try daemon.start(["--simulate=3"])
        #expect(try daemon.client().call(#"{"id":1,"op":"status"}"#).isOK)
        #expect(!daemon.log.contains("in use"))
        daemon.signal(SIGTERM)
    }

    /// Issue 15 item 5: a simulated sensor disconnected on request stays silent until it is
    /// connected again, as a real one would.
    @Test func aSimulatedSensorDisconnectedOnRequestFallsSilentUntilConnected() throws {
        let daemon = try DaemonProcess()
        try daemon.start(["--simulate=3"])
        let c = try daemon.client()
        usleep(1_500_000)
        let devices = try c.call(#"{"id":1,"op":"devices.list"}"#).result.objects("devices")
        let address = try #require(devices.compactMap { $0.string("address") }.sorted().first)
        func count(_ id: Int) throws -> Int64 {
            let r = try c.call(#"{"id":\#(id),"op":"samples.query","predicate":{"device":{"id":"\#(address)"}}}"#)
            return r.result.int("count") ?? -1
        }
        #expect(try c.call(#"{"id":2,"op":"devices.disconnect","address":"\#(address)"}"#).isOK)
        usleep(300_000)  // what was in the pipeline when the ok came reaches the store
        let atDisconnect = try count(3)
        #expect(atDisconnect > 0)
        #expect(try c.call(#"{"id":4,"op":"devices.info","address":"\#(address)"}"#).result["connected"] == .bool(false))
        usleep(2_500_000)
        #expect(try count(5) == atDisconnect, "samples kept arriving after devices.disconnect")
        #expect(try c.call(#"{"id":6,"op":"devices.connect","address":"\#(address)"}"#).isOK)
        // Up to 15 s: the sensor's own simulated link may be in one of its dropouts (3–12 s,
        // one per 10 minutes on average, seeded by the start time), as a real one could be.
        var resumed = false
        for i in 0..<150 where !resumed {
            usleep(100_000)
            resumed = try count(10 + i) > atDisconnect
        }
        #expect(resumed, "the sensor did not resume after devices.connect")
        daemon.signal(SIGTERM)
    }

    /// Issue 15 item 8: a state directory strapd may not create is explained in words: the
    /// path, the errno's text, who strapd runs as, who owns the directory, what to do.
    @Test func aStateDirectoryStrapdMayNotCreateIsExplained() throws {
        let daemon = try DaemonProcess()
        let locked = daemon.directory + "/locked"
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
        var executable = DaemonProcess.binary
        var arguments = ["--state-dir", locked + "/state", "--socket", daemon.directory + "/x.sock", "--set", "daemon.socket_group=", "--simulate=1"]
        var environment: [String: String]? = nil
        var copy: NobodyExecutable? = nil
        if geteuid() == 0 {
            // Root may write anywhere: run it as nobody, as a service user would be.
            chmod(daemon.directory, 0o755)
            let nobody = try NobodyExecutable(DaemonProcess.binary)
            copy = nobody
            executable = "/usr/bin/setpriv"
            arguments = nobody.asNobody(arguments)
            environment = nobody.environment
        } else {
            chmod(locked, 0o555)
        }
        defer { chmod(locked, 0o755) }
        let (status, message) = try withExtendedLifetime(copy) { try runToExit(executable, arguments, environment: environment) }
        #expect(status == 1)
        #expect(message.contains(locked + "/state"), "\(message)")
        #expect(message.contains("Permission denied"), "\(message)")
        #expect(message.contains("strapd runs as user") && message.contains("install -d"), "\(message)")
        #expect(!message.contains("CocoaError") && !message.contains("rawValue"), "\(message)")
    }

    /// libmosquitto is loaded only for `[mqtt]`: without it (here: a mount namespace where
    /// the library is an empty file) strapd still starts, and a configured broker is a clear
    /// start-up error naming the package, not a loader failure before main.
    static let libmosquitto = "/usr/lib/x86_64-linux-gnu/libmosquitto.so.1"
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
                   && FileManager.default.fileExists(atPath: libmosquitto), "needs root, unshare(1) and libmosquitto1"))
    func withoutLibmosquittoOnlyMQTTIsRefused() throws {
        let daemon = try DaemonProcess()
        let empty = daemon.directory + "/empty"
        FileManager.default.createFile(atPath: empty, contents: nil)
        let library = URL(fileURLWithPath: Self.libmosquitto).resolvingSymlinksInPath().path
        let config = daemon.directory + "/strapd.conf"
        try "[daemon]\nstate_dir = \(daemon.directory)/state\nsocket = \(daemon.socket)\nsocket_group =\n[mqtt]\nhost = 127.0.0.1\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        func withoutLibrary(_ arguments: String) throws -> (status: Int32, stderr: String) {
            try runToExit("/usr/bin/unshare", ["-m", "/bin/sh", "-c", "mount --bind \(empty) \(library) && exec \(DaemonProcess.binary) \(arguments)"])
        }
        let version = try withoutLibrary("--version")
        #expect(version.status == 0, "\(version.stderr)")
        let refused = try withoutLibrary("--config \(config) --simulate=1")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("[mqtt] needs libmosquitto") && refused.stderr.contains("apt install libmosquitto1"), "\(refused.stderr)")
    }

    @Test func sigtermLosesNothingDecoded() throws {
        let daemon = try DaemonProcess()
        // A deterministic capture: what the daemon must store is what an in-process pipeline makes of it.
        let events = simulatedEvents(count: 6, seconds: 1500, seed: 9)
        let capture = daemon.directory + "/capture.jsonl"
        try events.map(CaptureFormat.line).joined(separator: "\n").write(toFile: capture, atomically: true, encoding: .utf8)
        let expected = try expectedSampleCount(events)

        try daemon.start(["--replay", capture, "--replay-speed", "0", "--set", "store.sync=interval", "--set", "store.sync_interval=5s"])
        let client = try daemon.client()
        // Stop as soon as every event has been decoded — the store stage may still be behind.
        for _ in 0..<1000 {
            let status = try client.call(#"{"id":1,"op":"status"}"#).result
            if case .object(let p)? = status["pipeline"], p.int("events") == Int64(events.count) { break }
            usleep(10_000)
        }
        daemon.signal(SIGTERM)
        try daemon.start([])
        let status = try daemon.client().call(#"{"id":2,"op":"status"}"#).result
        guard case .object(let store)? = status["store"] else { Issue.record("no store status"); return }
        #expect(store.int("latestAnchor") == Int64(expected))
        daemon.signal(SIGTERM)
    }

    /// SIGTERM while a replay is still submitting: the replay stops before the final flush,
    /// so what it submitted (all of it recorded by `--record`, a tap at submission) is exactly
    /// what is stored. A replay that went on submitting through the flush leaves samples that
    /// are recorded but not stored, or stored but not recorded.
    @Test func sigtermDuringReplayStopsSubmissionBeforeTheFinalFlush() throws {
        let daemon = try DaemonProcess()
        let events = simulatedEvents(count: 6, seconds: 4 * 3600, seed: 13)
        let capture = daemon.directory + "/capture.jsonl"
        let recording = daemon.directory + "/recording.jsonl"
        try events.map(CaptureFormat.line).joined(separator: "\n").write(toFile: capture, atomically: true, encoding: .utf8)
        // Four hours of six sensors in about 15 s: a batch every millisecond.
        try daemon.start(["--replay", capture, "--replay-speed", "1000", "--record", recording,
                          "--set", "store.sync=interval", "--set", "store.sync_interval=1s"])
        let client = try daemon.client()
        for _ in 0..<1000 {
            let status = try client.call(#"{"id":1,"op":"status"}"#).result
            if case .object(let p)? = status["pipeline"], (p.int("events") ?? 0) >= 3000 { break }
            usleep(10_000)
        }
        daemon.signal(SIGTERM)
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n")
        let recorded = try lines.enumerated().map { try CaptureFormat.parse($0.element, lineNumber: $0.offset + 1) }
        #expect(recorded.count >= 3000 && recorded.count < events.count, "stopped mid-replay: \(recorded.count) of \(events.count)")
        #expect(lines.map(String.init) == events.prefix(recorded.count).map(CaptureFormat.line), "the recording is the capture's start")
        try daemon.start([])
        let status = try daemon.client().call(#"{"id":2,"op":"status"}"#).result
        guard case .object(let store)? = status["store"] else { Issue.record("no store status"); return }
        #expect(store.int("latestAnchor") == Int64(try expectedSampleCount(recorded)))
        daemon.signal(SIGTERM)
    }

    func expectedSampleCount(_ events: [SensorEvent]) throws -> Int {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        let (pipeline, _) = makePipeline(store: store)
        pipeline.submit(contentsOf: events)
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        defer { store.close() }
        return Int(store.latestAnchor)
    }
}
