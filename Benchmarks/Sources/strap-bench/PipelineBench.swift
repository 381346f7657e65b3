import Foundation
import StrapDaemon
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import Synchronization

/// `strap-bench pipeline`: notifications/s through decode → derive → store (durable, default
/// 100 ms sync interval) → one live subscriber, in-process, with real simulator packets; then
/// live latency beside mosquitto (LiveLatencyBench.swift) and the real daemon's footprint and
/// start-up (DaemonFootprint.swift).
enum PipelineBench: BenchSection {
    static let name = "pipeline"
    static let summary = "throughput, live latency vs mosquitto, daemon footprint and start-up"

    static func run(quick: Bool) throws -> [BenchFigure] {
        // STRAP_BENCH_LIVE (a diagnosis aid) runs only the chosen live-latency configurations.
        if getenv("STRAP_BENCH_LIVE") != nil { return try LiveLatency.figures(section: name, quick: quick) }
        // STRAP_BENCH_THROUGHPUT (a profiling aid) runs only the throughput figure.
        if getenv("STRAP_BENCH_THROUGHPUT") != nil { return try throughput(quick: quick) }
        // STRAP_BENCH_FOOTPRINT: only the daemon's footprint and start-up.
        if getenv("STRAP_BENCH_FOOTPRINT") != nil { return try DaemonFootprint.figures(section: name, quick: quick) }
        var figures = try throughput(quick: quick)
        figures += try LiveLatency.figures(section: name, quick: quick)
        figures += try DaemonFootprint.figures(section: name, quick: quick)
        return figures
    }

    static func throughput(quick: Bool) throws -> [BenchFigure] {
        let events = makeEvents(devices: 30, seconds: quick ? 2_000 : 34_000)
        let notifications = events.filter { if case .notification = $0 { true } else { false } }.count
        let dir = NSTemporaryDirectory() + "strap-bench-pipeline-\(getpid())"
        try? FileManager.default.removeItem(atPath: dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .interval(0.1)))
        let live = LiveHub()
        let pipeline = Pipeline(capacity: .max, storeStage: StoreStage(store: store), live: live) { address, name in
            (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings())
        }
        let received = Atomic<Int>(0)
        _ = live.subscribe { batch in received.add(batch.count, ordering: .relaxed) }

        // Split before the clock: copying the events out of one array retained every event's
        // address on this thread while the ingest thread released them.
        let batches = stride(from: 0, to: events.count, by: 4096).map { Array(events[$0..<min(events.count, $0 + 4096)]) }
        let start = DecodeBench.now()
        for batch in batches { pipeline.submit(contentsOf: batch) }
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        let seconds = DecodeBench.now() - start
        let stored = store.latestAnchor
        store.close()
        guard received.load(ordering: .relaxed) > 0, stored > 0 else { throw BenchFailure("pipeline delivered nothing") }
        return [
            BenchFigure(section: name, name: "notifications through the pipeline", unit: "notifications/s",
                        ours: Double(notifications) / seconds, higherIsBetter: true),
            BenchFigure(section: name, name: "samples stored durably", unit: "samples/s",
                        ours: Double(stored) / seconds, higherIsBetter: true),
        ]
    }

    static func makeEvents(devices: Int, seconds: Double) -> [SensorEvent] {
        var simulation = Simulation(count: devices, seed: 42, dropouts: .none)
        let origin = ReceiveTime(wall: 1_700_000_000_000, monotonic: 0)
        return simulation.advance(to: seconds).map { t, identity, event in
            let time = ReceiveTime(wall: origin.wall + Int64(t * 1000), monotonic: t)
            switch event {
            case let .notification(c, v): return .notification(identity.address, c, v, time)
            case let .read(c, v): return .read(identity.address, c, v, time)
            case .connected: return .linkUp(identity.address, name: identity.name, time)
            case let .disconnected(r): return .linkDown(identity.address, reason: r, time)
            }
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
