import Foundation
import Glibc
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapSystem
import StrapWire
import Synchronization
@testable import StrapDaemon

/// The daemon StrapKit's tests talk to: the front end strapd runs (store, pipeline fed by the
/// simulator, router, unix server) in this process, on a socket in a temp directory, with a
/// workout clock the test moves. Unlike the daemon tests' harness it can restart on the same
/// state directory and socket, which is what a reconnecting client meets when strapd restarts.
final class DaemonHarness: @unchecked Sendable {
    static let origin: Millis = 1_700_000_000_000

    let directory: String
    let socketPath: String
    let identities: [SimulatedIdentity]
    private(set) var frontEnd: DaemonFrontEnd
    private let clock = TestClock()
    /// The simulated packets, submitted in slices as the test moves time.
    private let events: [SensorEvent]
    private var nextEvent = 0

    var store: Store { frontEnd.store }
    var router: RequestRouter { frontEnd.router }

    init(simulatedSeconds: Double = 120, name: String = #function) throws {
        // sun_path holds 108 bytes: keep the socket directory short.
        directory = "/tmp/strapkit-\(name.filter(\.isLetter).prefix(12))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/s.sock"
        identities = Simulation(count: 3, seed: 1).devices.map(\.identity)
        events = simulatedEvents(count: 3, seconds: simulatedSeconds)
        frontEnd = try Self.makeFrontEnd(directory: directory, socketPath: socketPath, identities: identities, clock: clock)
        frontEnd.start()
    }

    private static func makeFrontEnd(directory: String, socketPath: String, identities: [SimulatedIdentity],
                                     clock: TestClock) throws -> DaemonFrontEnd {
        let store = try Store.open(StoreConfig(directory: directory + "/store", sync: .none))
        let service = SimulatedDeviceService(identities: identities)
        let workouts = try WorkoutService(store: store, profiles: ProfileBook(), now: { clock.read() })
        return DaemonFrontEnd(
            store: store, listener: try UnixListener.bind(path: socketPath, mode: 0o666),
            access: AccessPolicy(daemonUID: getuid()),
            identity: { address, name in (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings()) },
            server: ServerConfiguration(), router: RequestRouter.Configuration(), workouts: workouts,
            status: { f in
                DaemonStatus(version: "test", startedAt: origin, mode: "simulate", connectedSensors: f.directory.connectedCount,
                             knownSensors: f.context.devices.snapshot().count, sampleRate: 0, pipeline: f.pipeline.counters,
                             store: f.store.status, degraded: nil, clients: 0, liveSubscribers: 0, mqtt: nil)
            }
        ) { _ in service }
    }

    /// Simulated packets up to `seconds` after the origin go through the pipeline and are
    /// stored; the workout clock moves there.
    func advance(to seconds: Double) throws {
        let limit = Self.origin + Millis(seconds * 1000)
        var slice: [SensorEvent] = []
        while nextEvent < events.count, events[nextEvent].time.wall <= limit { slice.append(events[nextEvent]); nextEvent += 1 }
        frontEnd.pipeline.submit(contentsOf: slice)
        try frontEnd.flush()
        clock.set(limit)
    }

    /// Stops the daemon (streams get `shutdown`, connections close) and starts it again on
    /// the same state directory and socket.
    func restart() throws {
        frontEnd.stopAndWait()
        frontEnd.store.close()
        // The old listener may close after stopAndWait returns; the new one takes the path.
        unlink(socketPath)
        frontEnd = try Self.makeFrontEnd(directory: directory, socketPath: socketPath, identities: identities, clock: clock)
        frontEnd.start()
    }

    /// Anchored followers parked in the daemon, waiting for commits.
    var parkedFollowers: Int { router.follow.counters.parked }

    func close() {
        frontEnd.stopAndWait()
        frontEnd.store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The workout engine's clock, which the test moves with the simulated packets.
final class TestClock: Sendable {
    private let now = Mutex<Millis>(DaemonHarness.origin)
    func read() -> Millis { now.withLock { $0 } }
    func set(_ value: Millis) { now.withLock { $0 = value } }
}

/// Polls `condition` (up to about 10 s): the daemon's side of a stream ends on its own queue.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// The simulated sensors' events as a source submits them, timed from `DaemonHarness.origin`
/// (the daemon tests' helper of the same name, which this target cannot see).
func simulatedEvents(count: Int, seconds: Double, seed: UInt64 = 1) -> [SensorEvent] {
    var simulation = Simulation(count: count, seed: seed)
    let origin = ReceiveTime(wall: DaemonHarness.origin, monotonic: 1000)
    return simulation.advance(to: seconds).map { t, identity, event in
        let time = ReceiveTime(wall: origin.wall + Millis((t * 1000).rounded()), monotonic: origin.monotonic + t)
        switch event {
        case let .notification(c, v): return .notification(identity.address, c, v, time)
        case let .read(c, v): return .read(identity.address, c, v, time)
        case .connected: return .linkUp(identity.address, name: identity.name, time)
        case let .disconnected(reason): return .linkDown(identity.address, reason: reason, time)
        }
    }
}
