import Foundation
import Testing
import StrapControl
import StrapModel
import StrapWire
@testable import StrapDaemon

/// Clients run as another user (nobody, 65534) in a child process: credentials come from
/// SO_PEERCRED, so they must really be another uid. The tests run as root (CI too).
@Suite(.enabled(if: getuid() == 0, "needs root to start a client under another uid"))
struct AccessControlTests {
    static let nobody: UInt32 = 65534

    /// Sends each request, prints the reply; after a reply to `live.subscribe` it also
    /// prints the next `events` lines.
    static let script = """
        import json, socket, sys
        path, events = sys.argv[1], int(sys.argv[2])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        try:
            s.connect(path)
        except PermissionError:
            print(json.dumps({"connect": "EACCES"})); sys.exit(0)
        f = s.makefile("rb")
        for line in sys.argv[3:]:
            req = json.loads(line)
            s.sendall((line + "\\n").encode())
            while True:
                msg = json.loads(f.readline())
                if msg.get("id") == req["id"] and "ok" in msg:
                    print(json.dumps(msg)); break
            if req["op"] == "live.subscribe" and msg["ok"]:
                for _ in range(events):
                    print(f.readline().decode().strip())
        """

    /// Runs the script as nobody; returns one JSON object per printed line.
    static func runAsNobody(_ h: RouterHarness, events: Int = 0, _ requests: [String]) throws -> [JSONObject] {
        let scriptPath = h.directory + "/client.py"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        chmod(scriptPath, 0o644)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "/usr/bin/python3", scriptPath,
                       h.socketPath, String(events)] + requests
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            if case .object(let o)? = try? JSONParser.parse(Array(line.utf8)) { o } else { nil }
        }
    }

    @Test func aPeerGrantedNothingIsRefusedEverythingButStatus() throws {
        let h = try RouterHarness(access: AccessPolicy(daemonUID: 0))
        defer { h.close() }
        try h.ingest(seconds: 10)
        let address = h.identities[0].address
        let replies = try Self.runAsNobody(h, [
            #"{"id":1,"op":"status"}"#,
            #"{"id":2,"op":"samples.query"}"#,
            #"{"id":3,"op":"samples.anchored","follow":true}"#,
            #"{"id":4,"op":"live.subscribe"}"#,
            #"{"id":5,"op":"devices.connect","address":"\#(address)"}"#,
            #"{"id":6,"op":"samples.delete","uuids":["\#(UUID())"]}"#,
            #"{"id":7,"op":"statistics.query","type":"heartRate","options":["average"],"from":"2023-01-01T00:00:00Z","to":"2030-01-01T00:00:00Z"}"#,
            #"{"id":8,"op":"devices.list"}"#,
        ])
        #expect(replies.count == 8)
        #expect(replies.first?.isOK == true)
        #expect(replies.dropFirst().allSatisfy { $0.errorCode == "notAuthorized" })
    }

    @Test func aReadGrantLimitedToHeartRateSeesOnlyHeartRate() throws {
        let policy = AccessPolicy(readTypes: [.uid(Self.nobody): ["heartRate"]], daemonUID: 0)
        let h = try RouterHarness(access: policy)
        defer { h.close() }
        try h.ingest(seconds: 30)
        let replies = try Self.runAsNobody(h, [
            #"{"id":1,"op":"samples.query"}"#,
            #"{"id":2,"op":"samples.anchored","limit":100000}"#,
            #"{"id":3,"op":"samples.query","types":["cyclingSpeed"]}"#,
            #"{"id":4,"op":"samples.anchored","types":["heartRate","batteryLevel"]}"#,
            #"{"id":5,"op":"statistics.query","type":"cyclingSpeed","options":["average"],"from":"2023-01-01T00:00:00Z","to":"2030-01-01T00:00:00Z"}"#,
            #"{"id":6,"op":"samples.query","predicate":{"types":["batteryLevel"]}}"#,
            #"{"id":7,"op":"devices.disconnect","address":"\#(h.identities[0].address)"}"#,
            #"{"id":8,"op":"statistics.query","type":"heartRate","options":["average"],"from":"2023-01-01T00:00:00Z","to":"2030-01-01T00:00:00Z"}"#,
        ])
        #expect(replies.count == 8)
        guard replies.count == 8 else { return }
        let queried = replies[0].result.objects("samples")
        let heartRates = try h.store.samples(matching: .types([.heartRate]))
        #expect(!queried.isEmpty && queried.allSatisfy { $0.string("type") == "heartRate" })
        #expect(queried.count == heartRates.count)
        let anchored = replies[1].result.objects("added")
        #expect(anchored.count == heartRates.count && anchored.allSatisfy { $0.string("type") == "heartRate" })
        #expect(replies[2...6].allSatisfy { $0.errorCode == "notAuthorized" })
        #expect(replies[7].isOK)
    }

    @Test func aLimitedLiveSubscriberGetsOnlyGrantedSamples() throws {
        let policy = AccessPolicy(readTypes: [.uid(Self.nobody): ["batteryLevel", "heartRate"]], daemonUID: 0)
        let h = try RouterHarness(access: policy)
        defer { h.close() }
        // Feed the pipeline until the child has its events.
        let feeding = Thread {
            for seed in 1...40 where !Thread.current.isCancelled {
                h.pipeline.submit(contentsOf: simulatedEvents(count: 3, seconds: 5, seed: UInt64(seed)))
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        feeding.start()
        defer { feeding.cancel() }
        let replies = try Self.runAsNobody(h, events: 60, [#"{"id":"live","op":"live.subscribe"}"#])
        #expect(replies.first?.isOK == true && replies.count == 61)
        let samples = replies.dropFirst().filter { $0.event == "sample" }
        #expect(!samples.isEmpty)
        #expect(samples.allSatisfy { ["heartRate", "batteryLevel"].contains($0.data.string("type")) })
    }

    /// `access.status` answers from the same table the router enforces: every operation it
    /// calls refused is `notAuthorized` when tried, and every one it allows is not.
    @Test func accessStatusSaysWhatThePeerMayDoAndRequestsAgree() throws {
        let policy = AccessPolicy(readTypes: [.uid(Self.nobody): ["heartRate", "workout"]], record: [.uid(Self.nobody)], daemonUID: 0)
        let h = try RouterHarness(access: policy)
        defer { h.close() }
        let range = #""from":"2023-01-01T00:00:00Z","to":"2030-01-01T00:00:00Z""#
        let probes: [(op: String, request: String)] = [
            ("samples.query", #"{"id":2,"op":"samples.query"}"#),
            ("workout.list", #"{"id":3,"op":"workout.list"}"#),
            ("workout.hrv", #"{"id":4,"op":"workout.hrv",\#(range)}"#),
            ("workout.start", #"{"id":5,"op":"workout.start","activityType":"juggling"}"#),
            ("devices.list", #"{"id":6,"op":"devices.list"}"#),
            ("samples.delete", #"{"id":7,"op":"samples.delete","uuids":["\#(UUID())"]}"#),
            ("profile.set", #"{"id":8,"op":"profile.set","profile":{}}"#),
            ("workout.watch", #"{"id":9,"op":"workout.watch"}"#),
        ]
        let replies = try Self.runAsNobody(h, [#"{"id":1,"op":"access.status"}"#] + probes.map(\.request))
        try #require(replies.count == probes.count + 1)
        let status = replies[0].result
        guard case .object(let operations)? = status["operations"], case .object(let types)? = status["types"],
              case .object(let grants)? = status["grants"], case .object(let peer)? = status["peer"] else {
            Issue.record("access.status: \(replies[0])"); return
        }
        #expect(peer.int("uid") == Int64(Self.nobody))
        #expect(grants["read"] == .string("limited") && grants["record"] == .bool(true) && grants["admin"] == .bool(false))
        #expect(types["heartRate"] == .bool(true) && types["workout"] == .bool(true))
        #expect(types["cyclingSpeed"] == .bool(false) && types["heartbeatSeries"] == .bool(false))
        #expect(Set(operations.entries.map(\.key)) == Set(Operation.table.keys))
        for (probe, reply) in zip(probes, replies.dropFirst()) {
            let allowed = operations[probe.op] == .bool(true)
            #expect(allowed == (reply.errorCode != "notAuthorized"), "\(probe.op): \(reply)")
        }
        // What the probes show, spelled out: reads of its types and recording are open to it,
        // HRV (heartbeatSeries) and admin operations are not.
        #expect(operations["samples.query"] == .bool(true) && operations["workout.start"] == .bool(true))
        #expect(operations["workout.hrv"] == .bool(false) && operations["samples.delete"] == .bool(false))
    }

    @Test func aSocketTheUserCannotOpenIsPermissionDeniedNotNotRunning() throws {
        let h = try RouterHarness()
        defer { h.close() }
        chmod(h.socketPath, 0o600)
        let replies = try Self.runAsNobody(h, [#"{"id":1,"op":"status"}"#])
        #expect(replies.first?.string("connect") == "EACCES")
        // strapctl's own mapping of the same situation, when the binary was built alongside.
        let strapctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("strapctl").path
        if FileManager.default.isExecutableFile(atPath: strapctl) {
            let nobody = try NobodyExecutable(strapctl)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = nobody.asNobody(["--socket", h.socketPath, "status"])
            p.environment = nobody.environment
            let err = Pipe()
            p.standardError = err
            p.standardOutput = Pipe()
            try p.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationStatus == ExitCode.notAuthorized)
            #expect(text.contains("permission denied"))
        }
    }

    @Test func strapctlRefusedByPolicyExitsFour() throws {
        let h = try RouterHarness(access: AccessPolicy(daemonUID: 0))
        defer { h.close() }
        let strapctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("strapctl").path
        try #require(FileManager.default.isExecutableFile(atPath: strapctl), "strapctl is built with the tests")
        let nobody = try NobodyExecutable(strapctl)
        for (args, code) in [(["status"], ExitCode.success), (["query"], ExitCode.notAuthorized), (["forget", "AA:BB"], ExitCode.notAuthorized)] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = nobody.asNobody(["--socket", h.socketPath] + args)
            p.environment = nobody.environment
            let err = Pipe()
            p.standardError = err
            p.standardOutput = Pipe()
            try p.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationStatus == code, "\(args)")
            if code == ExitCode.notAuthorized { #expect(text.contains("(notAuthorized)")) }
        }
    }
}
