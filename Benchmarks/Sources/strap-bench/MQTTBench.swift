import Foundation
import StrapKit
import StrapModel
import StrapStore

/// `strap-bench mqtt` (docs/benchmarks.md#mqtt): the shipped strapd publishing its store
/// to a mosquitto broker on loopback at QoS 1, measured from the daemon's own `status`
/// (the broker's acknowledgements), against the peer a user would script today: Python with
/// paho-mqtt reading the same samples from strapd's socket and publishing each at QoS 1.
enum MQTTBench: BenchSection {
    static let name = "mqtt"
    static let summary = "publisher throughput and catch-up at QoS 1 vs a paho-mqtt script; footprint with [mqtt] on"

    /// `STRAP_BENCH_MQTT=publish,subscriber,catchup,stock,footprint` runs only those parts (use
    /// `--out` with another file: a section run replaces its figures).
    static func run(quick: Bool) throws -> [BenchFigure] {
        let parts = Set(getenv("STRAP_BENCH_MQTT").map { String(cString: $0).split(separator: ",").map(String.init) }
            ?? ["publish", "subscriber", "catchup", "stock", "footprint"])
        if let unknown = parts.subtracting(["publish", "subscriber", "catchup", "stock", "footprint"]).first {
            throw BenchFailure("STRAP_BENCH_MQTT: unknown part \(unknown) (publish, subscriber, catchup, stock, footprint)")
        }
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  mqtt: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        print("  mqtt: measuring \(strapd) (\(DaemonFootprint.linkage(strapd)))")
        let run = try DaemonFootprint.freshRunDirectory("mq")
        defer { try? FileManager.default.removeItem(atPath: run) }
        let broker = try BenchBroker(tag: "mqtt")
        defer { broker.stop() }
        var figures: [BenchFigure] = []

        // Sustained: a store of simulated sensors' samples (heart rate with beat series,
        // speed and cadence, battery...), published from the beginning.
        let count = quick ? 100_000 : 600_000
        let big = run + "/big"
        let stored = parts.contains("publish") || parts.contains("subscriber") ? try fill(big, samples: count) : 0
        if parts.contains("publish") {
            let ours = try publish(strapd, state: big, broker: broker, target: stored, run: run, tag: "big")
            print(String(format: "  mqtt: strapd published %d samples at QoS 1 in %.2f s: %.0f samples/s (no subscriber)",
                         ours.samples, ours.seconds, ours.rate))
            let peer = ProcessInfo.processInfo.environment["STRAP_BENCH_MQTT_PEER"] == "0" ? nil
                : try pahoPeer(strapd, state: big, broker: broker, run: run)
            figures.append(BenchFigure(section: name, name: "publish at QoS 1 to mosquitto on loopback, \(count / 1000) k stored samples",
                                       unit: "samples/s", ours: ours.rate, peer: "Python paho-mqtt 2.1 script reading strapd's socket",
                                       peerValue: peer, higherIsBetter: true))
            // The same messages from a bare libmosquitto loop: what this broker and library allow here.
            let ceiling = try MQTTCeiling.measure(state: big, port: broker.port)
            print(String(format: "  mqtt: a bare libmosquitto client published the same %d messages at QoS 1 in %.2f s: %.0f/s; strapd reached %.0f %% of it",
                         ceiling.samples, ceiling.seconds, ceiling.rate, ours.rate / ceiling.rate * 100))
            figures.append(BenchFigure(section: name, name: "publish at QoS 1, strapd vs a bare libmosquitto client sending the same messages",
                                       unit: "samples/s", ours: ours.rate, peer: "libmosquitto loop, messages built beforehand (the ceiling)",
                                       peerValue: ceiling.rate, higherIsBetter: true))
        }
        // With a consumer: mosquitto_sub at QoS 1 takes every message too.
        if parts.contains("subscriber"), let sub = try? Subscriber(port: broker.port, topic: "strapd/bench/#") {
            let withSub = try publish(strapd, state: big, broker: broker, target: stored, run: run, tag: "sub")
            sub.stop()
            print(String(format: "  mqtt: with one QoS 1 subscriber (mosquitto_sub): %.0f samples/s; the subscriber got %d messages",
                         withSub.rate, sub.lines))
            figures.append(BenchFigure(section: name, name: "publish at QoS 1 with one QoS 1 subscriber (mosquitto_sub)",
                                       unit: "samples/s", ours: withSub.rate, higherIsBetter: true))
        }

        // Catch-up: 10 sensors at 1 Hz for an hour (36 000 samples) waiting behind the cursor.
        if parts.contains("catchup") {
            let hour = run + "/hour"
            let backlog = try fillHour(hour)
            let caught = try publish(strapd, state: hour, broker: broker, target: backlog, run: run, tag: "hour")
            print(String(format: "  mqtt: caught up on a 1 h outage of 10 sensors (%d samples) in %.3f s", caught.samples, caught.seconds))
            figures.append(BenchFigure(section: name, name: "catch-up after a 1 h outage, 10 sensors at 1 Hz (36 000 samples)",
                                       unit: "s", ours: caught.seconds, higherIsBetter: false))
        }

        if parts.contains("stock") { figures += try MQTTStockBroker.run(strapd, run: run, quick: quick) }

        // The idle footprint with [mqtt] on, as the footprint section measures it without.
        guard parts.contains("footprint") else { return figures }
        let idle = try DaemonFootprint.steadyState(strapd, run: run, seconds: quick ? 10 : 120, followers: 0,
                                                   extra: mqttArguments(broker, cursor: "idle"), tag: "mqtt")
        figures += [
            BenchFigure(section: name, name: "daemon RSS (max), 4 simulated sensors, [mqtt] on", unit: "MB",
                        ours: Double(idle.maxRSS) / 1024, higherIsBetter: false),
            BenchFigure(section: name, name: "daemon CPU share, 4 simulated sensors, [mqtt] on", unit: "% of one core",
                        ours: idle.cpuPerHour / 36, higherIsBetter: false),
        ]
        // The same daemon without [mqtt], right after: what the publisher adds, in one run.
        let base = try DaemonFootprint.steadyState(strapd, run: run, seconds: quick ? 10 : 120, followers: 0, tag: "base")
        print(String(format: "  mqtt: [mqtt] on adds %.3f %% of a core (%.1f s/h) and %.1f context switches/s over the daemon without it",
                     (idle.cpuPerHour - base.cpuPerHour) / 36, idle.cpuPerHour - base.cpuPerHour,
                     (idle.switchesPerHour - base.switchesPerHour) / 3600))
        figures.append(BenchFigure(section: name, name: "daemon CPU share, 4 simulated sensors, [mqtt] off (same run)", unit: "% of one core",
                                   ours: base.cpuPerHour / 36, higherIsBetter: false))
        return figures
    }

    /// `STRAP_BENCH_MQTT_SET="mqtt.protocol=3.1.1 mqtt.max_inflight=256"` tries other settings.
    static func mqttArguments(_ broker: BenchBroker, cursor: String) -> [String] {
        let extra = (ProcessInfo.processInfo.environment["STRAP_BENCH_MQTT_SET"] ?? "").split(separator: " ").flatMap { ["--set", String($0)] }
        return ["--set", "mqtt.host=127.0.0.1", "--set", "mqtt.port=\(broker.port)", "--set", "mqtt.topic_prefix=strapd/bench",
                "--set", "mqtt.client_id=strap-bench-\(cursor)"] + extra
    }

    /// No sensors: strapd replays an empty capture, so nothing but the stored samples moves.
    static func emptyCapture(_ run: String) -> String {
        let path = run + "/empty.capture"
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: Data()) }
        return path
    }

    struct Rate {
        var samples: Int
        var seconds: Double
        var rate: Double { Double(samples) / seconds }
    }

    /// Starts strapd over `state` with [mqtt] on and a fresh cursor, and times the broker's
    /// acknowledgements from the first to the one that covers `target`, polling `status`.
    static func publish(_ strapd: String, state: String, broker: BenchBroker, target: UInt64, run: String, tag: String) throws -> Rate {
        try? FileManager.default.removeItem(atPath: state + "/mqtt-cursor")
        let notify = try NotifyListener(path: run + "/notify-\(tag).sock")
        let socket = run + "/\(tag).sock", log = run + "/\(tag).log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--replay", emptyCapture(run), "--state-dir", state, "--socket", socket]
                                               + mqttArguments(broker, cursor: tag), notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 60) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let client = try StrapStore.connected(socket)
        var first: (t: Double, acked: Int)?
        let deadline = DecodeBench.now() + 120
        while DecodeBench.now() < deadline {
            let reply = try client.requestNow("status")
            let now = DecodeBench.now()
            guard let m = reply.object("mqtt"), let acked = m.int("acknowledged"), let cursor = m.int("cursor") else {
                throw DaemonFootprint.failure("status has no mqtt object", log: log)
            }
            if first == nil && acked > 0 { first = (now, acked) }
            if UInt64(cursor) >= target, let f = first {
                return Rate(samples: acked - f.acked, seconds: now - f.t)
            }
            usleep(10_000)
        }
        throw DaemonFootprint.failure("strapd did not deliver \(target) items in 120 s", log: log)
    }

    /// The peer over the same store: strapd serves the socket with [mqtt] off; the script
    /// reads every page and publishes each sample (its own clock: first read to last PUBACK).
    static func pahoPeer(_ strapd: String, state: String, broker: BenchBroker, run: String) throws -> Double? {
        let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/venv/bin/python").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("peers/paho_publisher.py").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            print("  mqtt: peer skipped: no \(python) (scripts/pyvenv.sh makes it)")
            return nil
        }
        let notify = try NotifyListener(path: run + "/notify-peer.sock")
        let socket = run + "/peer.sock", log = run + "/peer.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--replay", emptyCapture(run), "--state-dir", state, "--socket", socket],
                                               notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 60) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script, "--socket", socket, "--host", "127.0.0.1", "--port", String(broker.port), "--prefix", "strapd/peer"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0,
              let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let rate = o["rate"] as? Double, let n = o["samples"] as? Int, let s = o["seconds"] as? Double else {
            print("  mqtt: peer failed (exit \(p.terminationStatus)): \(String(decoding: data, as: UTF8.self).suffix(300))")
            return nil
        }
        print(String(format: "  mqtt: peer (paho-mqtt) published %d samples in %.2f s: %.0f samples/s", n, s, rate))
        return rate
    }

    /// `samples` of the simulator's mix (4 heart-rate straps, 4 speed/cadence sensors, 2 foot
    /// pods) in a store at `state`/store; returns its latest anchor.
    static func fill(_ state: String, samples: Int) throws -> UInt64 {
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        var feed = SimulatedSamples.Feed(kinds: [.hr, .hr, .hr, .hr, .csc, .csc, .csc, .csc, .rsc, .rsc])
        var written = 0, t = 0.0
        while written < samples {
            t += 60
            let batch = Array(feed.advance(to: t).prefix(samples - written))
            try store.appendBatch(batch)
            written += batch.count
        }
        try store.sync()
        return store.latestAnchor
    }

    /// 10 heart-rate sensors at 1 Hz for an hour.
    static func fillHour(_ state: String) throws -> UInt64 {
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        let devices = (0..<10).map { i in
            let a = String(format: "5E:1A:00:00:%02X:01", i)
            return Device(id: a, address: a, name: "Strap \(i)")
        }
        for second in 0..<3600 {
            let t = SimulatedSamples.origin + Millis(second) * 1000
            try store.appendBatch(devices.enumerated().map { i, d in
                Sample(type: .heartRate, value: Double(120 + (second + i * 7) % 40), start: t, device: d)
            })
        }
        try store.sync()
        return store.latestAnchor
    }

    /// mosquitto_sub taking every message at QoS 1 into a file, counting its lines.
    final class Subscriber {
        private let process = Process()
        private let file = NSTemporaryDirectory() + "strap-bench-sub-\(getpid()).txt"
        private(set) var lines = 0

        init(port: Int, topic: String) throws {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub") else { throw BenchFailure("no mosquitto_sub") }
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
            process.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic]
            process.standardOutput = FileHandle(forWritingAtPath: file)
            try process.run()
            usleep(300_000)
        }

        func stop() {
            usleep(500_000)
            process.terminate()
            process.waitUntilExit()
            lines = (FileManager.default.contents(atPath: file) ?? Data()).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            try? FileManager.default.removeItem(atPath: file)
        }
    }
}
