import Foundation
import StrapDaemon
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapWorkout
import Synchronization

/// How long `WorkoutService.end` of a long workout holds up the ingest path (issue 32, item 6):
/// the daemon's objects (store with the default durable policy, `StoreStage`, `Pipeline`,
/// `LiveHub`, `WorkoutService` attached as the front end attaches it) hold a session fed 4 h
/// (1 h with --quick) of a simulated strap; while `end` runs (flush, beat-series scan for the
/// HRV, save, syncs), another thread submits a packet of a second sensor to the pipeline every
/// millisecond and times it through the ingest queue (whose live delivery makes the service
/// take the engine lock). The figure is the longest of those during `end`.
/// The wait for the strap's next beats is set to 0: it holds no lock, and here no beat comes.
/// Run twice: on whatever /var/tmp is on the machine, and on a slow disk, every fsync and
/// fdatasync of the store and the session journals made `slowSyncMilliseconds` slower
/// through the store's system-call table (an SD card on a board beside the trainer); the
/// slow-disk figure is compared with one such sync, what the end would stall ingest at least
/// if any of its syncs ran under the engine lock.
enum WorkoutEndStall {
    static let slowSyncMilliseconds: UInt32 = 50

    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        try measure(section: section, quick: quick, syncDelay: 0)
            + measure(section: section, quick: quick, syncDelay: slowSyncMilliseconds)
    }

    static func measure(section: String, quick: Bool, syncDelay: UInt32) throws -> [BenchFigure] {
        let seconds: Double = quick ? 3_600 : 4 * 3_600
        let events = PipelineBench.makeEvents(devices: 1, seconds: seconds)
        let address = Simulation(count: 1, seed: 42, dropouts: .none).devices[0].identity.address
        let origin: Millis = 1_700_000_000_000
        let dir = makeTemporaryDirectory("strap-bench-end")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = StoreConfig(directory: dir, sync: .interval(0.1))
        if syncDelay > 0 {
            let delay = useconds_t(syncDelay) * 1_000
            config.syscalls.fsync = { fd in usleep(delay); return fsync(fd) }
            config.syscalls.fdatasync = { fd in usleep(delay); return fdatasync(fd) }
        }
        let store = try Store.open(config)
        defer { store.close() }
        let clock = Atomic<Int64>(origin - 1_000)
        let service = try WorkoutService(store: store, profiles: ProfileBook(), now: { clock.load(ordering: .relaxed) },
                                         endBeatWait: 0)
        let live = LiveHub()
        let pipeline = Pipeline(capacity: .max, storeStage: StoreStage(store: store), live: live) { address, name in
            (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings())
        }
        service.attach(hub: live) {
            pipeline.drain()
            try pipeline.storeStage.flushAndSync()
        }
        defer { service.detach(hub: live) }
        let id = try service.start(WorkoutConfiguration(activityType: .running, deviceIDs: [address]), connected: []).session.id
        var i = 0
        while i < events.count {
            let end = min(events.count, i + 64)
            pipeline.submit(contentsOf: Array(events[i..<end]))
            i = end
        }
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        clock.store(origin + Millis(seconds * 1000), ordering: .relaxed)

        // Another sensor's packets through the pipeline, one a millisecond, each timed from
        // its submission until the ingest queue has handed it on (decoded, delivered to the
        // live hub, where the service takes the engine lock, and passed to the store stage).
        let otherEvents = PipelineBench.makeEvents(devices: 2, seconds: 600).filter { $0.address != events[0].address }
        let ending = Atomic<Bool>(false), stop = Atomic<Bool>(false)
        let delays = Mutex<(during: [Double], before: [Double])>(([], []))
        let done = DispatchSemaphore(value: 0)
        Thread {
            var during: [Double] = [], before: [Double] = []
            var k = 0
            while !stop.load(ordering: .relaxed), k < otherEvents.count {
                let t0 = DecodeBench.now()
                pipeline.submit(contentsOf: [otherEvents[k]])
                pipeline.drain()
                let d = DecodeBench.now() - t0
                k += 1
                if ending.load(ordering: .relaxed) { during.append(d) } else { before.append(d) }
                usleep(1_000)
            }
            delays.withLock { $0 = (during, before) }
            done.signal()
        }.start()
        usleep(200_000)
        ending.store(true, ordering: .relaxed)
        let t0 = DecodeBench.now()
        let saved = try service.end(id)
        let endSeconds = DecodeBench.now() - t0
        ending.store(false, ordering: .relaxed)
        usleep(100_000)
        stop.store(true, ordering: .relaxed)
        done.wait()
        let (during, before) = delays.withLock { $0 }
        guard !during.isEmpty, saved.summary["hrvIntervals"] != nil else { throw BenchFailure("end: no delivery during the end, or no HRV saved") }
        let longest = during.max()! * 1000, usual = median(before) * 1000
        let disk = syncDelay > 0 ? "a slow disk (each sync +\(syncDelay) ms)" : "this machine's disk"
        print(String(format: "  end on %@: %.0f h workout (%d samples stored), end took %.1f ms; %d deliveries during it, longest %.3f ms (median before it %.4f ms)",
                     disk, seconds / 3600, Int(store.latestAnchor), endSeconds * 1000, during.count, longest, usual))
        let workout = "end of a \(Int(seconds / 3600)) h workout"
        if syncDelay > 0 {
            return [
                BenchFigure(section: section, name: "\(workout) on \(disk): longest ingest delivery during it", unit: "ms",
                            ours: longest, peer: "one sync of that disk", peerValue: Double(syncDelay), higherIsBetter: false),
                BenchFigure(section: section, name: "\(workout) on \(disk): its duration", unit: "ms",
                            ours: endSeconds * 1000, higherIsBetter: false),
            ]
        }
        return [
            BenchFigure(section: section, name: "\(workout): longest ingest delivery during it", unit: "ms",
                        ours: longest, higherIsBetter: false),
            BenchFigure(section: section, name: "\(workout): its duration (HRV scan, save, syncs)", unit: "ms",
                        ours: endSeconds * 1000, higherIsBetter: false),
        ]
    }
}
