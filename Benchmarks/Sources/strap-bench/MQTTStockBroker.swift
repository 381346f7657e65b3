import Foundation
import StrapKit

/// `strap-bench mqtt`, part `stock` (docs/benchmarks.md#strap-bench-mqtt): what users run. A
/// stock mosquitto (its CONNACK announces Receive Maximum 20, 1 000 messages queued per
/// client), `strapd --simulate=64` (the documented maximum), and a Paho consumer with a
/// persistent QoS 1 session. Measured from strapd's `status`: the lag while the sensors run,
/// the catch-up after a 10 s broker outage, and the drain rate of a backlog once the sensors
/// stop (strapd restarted over the same store, no sensors) beside the paho-mqtt script
/// publishing the same store to the same broker.
enum MQTTStockBroker {
    struct Status {
        var latest: Int
        var cursor: Int
        var acknowledged: Int
        var lagItems: Int
        var lagSeconds: Double
        var inflightLimit: Int?
        var state: String
    }

    static func status(_ client: StrapStore) throws -> Status {
        let result = try client.requestNow("status")
        let m = result.object("mqtt") ?? [:]
        let store = result.object("store") ?? [:]
        return Status(latest: store.int("latestAnchor") ?? 0, cursor: m.int("cursor") ?? 0,
                      acknowledged: m.int("acknowledged") ?? 0, lagItems: m.int("lagItems") ?? 0,
                      lagSeconds: m.double("lagSeconds") ?? 0, inflightLimit: m.int("inflightLimit"),
                      state: m.string("state") ?? "?")
    }

    /// Polls every 10 ms until the cursor reaches `target`; the seconds it took.
    static func waitCursor(_ client: StrapStore, _ target: Int, seconds: Double, log: String) throws -> Double {
        let began = DecodeBench.now()
        while DecodeBench.now() - began < seconds {
            if try status(client).cursor >= target { return DecodeBench.now() - began }
            usleep(10_000)
        }
        throw DaemonFootprint.failure("the cursor did not reach \(target) in \(Int(seconds)) s", log: log)
    }

    static func run(_ strapd: String, run: String, quick: Bool) throws -> [BenchFigure] {
        let name = MQTTBench.name
        let broker = try BenchBroker(tag: "stock", ["max_queued_messages 1000"])
        defer { broker.stop() }
        let consumer = try PahoConsumer(port: broker.port, out: run + "/stock-consumer.jsonl")
        defer { consumer.stop() }
        let state = run + "/stock"
        let mqtt = MQTTBench.mqttArguments(broker, cursor: "stock")
        let notify = try NotifyListener(path: run + "/notify-stock.sock")
        let socket = run + "/stock.sock", log = run + "/stock.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--simulate=64", "--state-dir", state, "--socket", socket] + mqtt,
                                               notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 60) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let client = try StrapStore.connected(socket)
        usleep(3_000_000)

        // Steady state.
        let window = quick ? 10.0 : 30.0
        let first = try status(client)
        var worstItems = 0, worstSeconds = 0.0
        let began = DecodeBench.now()
        var last = first
        while DecodeBench.now() - began < window {
            usleep(100_000)
            last = try status(client)
            worstItems = max(worstItems, last.lagItems)
            worstSeconds = max(worstSeconds, last.lagSeconds)
        }
        let elapsed = DecodeBench.now() - began
        let stored = Double(last.latest - first.latest) / elapsed, acked = Double(last.acknowledged - first.acknowledged) / elapsed
        print(String(format: "  mqtt stock: 64 sensors, broker Receive Maximum %@: %.0f items/s stored, %.0f/s acknowledged; worst lag %d items, %.1f s",
                     last.inflightLimit.map(String.init) ?? "?", stored, acked, worstItems, worstSeconds))

        // A 10 s outage with the sensors running.
        broker.kill()
        usleep(10_000_000)
        let before = try status(client)
        try broker.start()
        let caught = try waitCursor(client, before.latest, seconds: 120, log: log)
        print(String(format: "  mqtt stock: %d items behind after a 10 s outage, caught up in %.2f s (with the reconnect backoff)",
                     before.lagItems, caught))

        // The sensors stop with a backlog: the broker away for a while, strapd stopped, then
        // strapd over the same store with no sensors and the broker back.
        broker.kill()
        usleep(quick ? 10_000_000 : 60_000_000)
        // Its notify listener closes with the function's defer (closing it twice would wait forever).
        DaemonFootprint.terminate(daemon)
        let notify2 = try NotifyListener(path: run + "/notify-stock2.sock")
        let log2 = run + "/stock2.log"
        let drainer = try DaemonFootprint.spawn(strapd, ["--replay", MQTTBench.emptyCapture(run), "--state-dir", state, "--socket", socket] + mqtt,
                                                notify: notify2.path, log: log2)
        defer { DaemonFootprint.terminate(drainer); notify2.close() }
        guard notify2.waitReady(seconds: 60) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log2) }
        let client2 = try StrapStore.connected(socket)
        let backlog = try status(client2)
        try broker.start()
        // Timed from the first acknowledgement, as the publish figure is.
        var start = try status(client2)
        let deadline = DecodeBench.now() + 60
        while start.acknowledged == 0 && DecodeBench.now() < deadline { usleep(2_000); start = try status(client2) }
        let t0 = DecodeBench.now()
        _ = try waitCursor(client2, backlog.latest, seconds: 120, log: log2)
        let t = DecodeBench.now() - t0
        let end = try status(client2)
        let drained = Double(end.acknowledged - start.acknowledged) / t
        print(String(format: "  mqtt stock: drained a backlog of %d items after the sensors stopped: %d in %.3f s, %.0f items/s",
                     backlog.lagItems, end.acknowledged - start.acknowledged, t, drained))
        DaemonFootprint.terminate(drainer)
        let peer = try MQTTBench.pahoPeer(strapd, state: state, broker: broker, run: run)
        return [
            BenchFigure(section: name, name: "drain after the sensors stop, stock mosquitto (Receive Maximum 20), persistent Paho consumer",
                        unit: "items/s", ours: drained, peer: "Python paho-mqtt 2.1 script publishing the same store to the same broker",
                        peerValue: peer, higherIsBetter: true),
            BenchFigure(section: name, name: "worst lag, 64 simulated sensors, stock mosquitto, persistent Paho consumer",
                        unit: "s", ours: worstSeconds, higherIsBetter: false),
            BenchFigure(section: name, name: "catch-up after a 10 s outage, 64 simulated sensors, stock mosquitto",
                        unit: "s", ours: caught, higherIsBetter: false),
        ]
    }
}

/// Tests/Fixtures/mqtt/consume.py (Eclipse Paho) with a persistent QoS 1 session on
/// `strapd/bench/#`, from the test venv.
final class PahoConsumer {
    private let process = Process()

    init(port: Int, out: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let python = root.appendingPathComponent(".build/venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else { throw BenchFailure("no \(python) (scripts/pyvenv.sh makes it)") }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [root.appendingPathComponent("Tests/Fixtures/mqtt/consume.py").path, "--host", "127.0.0.1",
                             "--port", String(port), "--topic", "strapd/bench/#", "--session", "--client-id", "strap-bench-consumer",
                             "--out", out, "--ready", out + ".ready"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = DecodeBench.now() + 20
        while !FileManager.default.fileExists(atPath: out + ".ready") {
            guard process.isRunning, DecodeBench.now() < deadline else { throw BenchFailure("the Paho consumer did not subscribe") }
            usleep(50_000)
        }
    }

    /// SIGTERM, then SIGKILL after 5 s: the script may sit in its reconnect loop.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = DecodeBench.now() + 5
        while process.isRunning && DecodeBench.now() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
