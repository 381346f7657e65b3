import Dispatch
import StrapIngest
import StrapModel
import StrapStore
import StrapSystem
import StrapWire

/// The daemon between its sources and its clients: store stage → pipeline → live hub (with
/// the device directory listening) → request router → unix socket server. `Daemon` builds one
/// from its configuration; the benchmark and the protocol tests build theirs through the same
/// initializer, so what they measure and test is the wiring strapd runs.
public final class DaemonFrontEnd: @unchecked Sendable {
    public let store: Store
    public let pipeline: Pipeline
    public let live: LiveHub
    public let directory: DeviceDirectory
    public let context: DaemonContext
    public let router: RequestRouter
    public let server: UnixServer

    /// `sources` builds whatever feeds the pipeline (BlueZ, the simulator, a replay, or nothing
    /// when the caller submits events itself) and returns the device service behind the
    /// `devices.*` operations; starting the sources is the caller's (the daemon's services).
    /// `status` is asked on demand, for `status` and sd_notify.
    /// The server is built but not started: `start()` once the caller is ready for clients.
    public init<E: Error>(store: Store, listener: UnixListener, access: AccessPolicy,
                          identity: @escaping @Sendable (SensorAddress, String?) -> (Device, DeviceIngest.Settings),
                          server serverConfiguration: ServerConfiguration = ServerConfiguration(),
                          router routerConfiguration: RequestRouter.Configuration = RequestRouter.Configuration(),
                          logger: Logger? = nil,
                          workouts: WorkoutService? = nil,
                          trainerHeldTargets: String? = nil,
                          status: @escaping @Sendable (DaemonFrontEnd) -> DaemonStatus,
                          sources: (Pipeline) throws(E) -> any DeviceService) throws(E) {
        self.store = store
        let live = LiveHub()
        self.live = live
        pipeline = Pipeline(storeStage: StoreStage(store: store), live: live, identity: identity)
        let directory = DeviceDirectory()
        self.directory = directory
        _ = live.subscribe { events in directory.observe(events) }
        // Sessions were recovered before (their service starts first); from here on they count
        // what the sources deliver.
        workouts?.attach(hub: live) { [pipeline] in
            pipeline.drain()
            try pipeline.storeStage.flushAndSync()
        }
        let devices = try sources(pipeline)
        workouts?.onEnergySaturated { [weak devices] address in devices?.resetEnergy(address) { _ in } }
        let trainers = TrainerService(devices: devices, heldTargetsFile: trainerHeldTargets,
                                      log: { [logger] in logger?.notice($0) })
        pipeline.controlTap = { [trainers] in trainers.observe($0) }
        workouts?.planRunner.trainers = trainers
        // The status closure sees the finished front end; set below, before any client can ask.
        let me = WeakFrontEnd()
        context = DaemonContext(store: store, pipeline: pipeline, live: live, devices: devices, directory: directory,
                                workouts: workouts, trainers: trainers, access: access) { me.value.map(status) ?? DaemonStatus.empty }
        router = RequestRouter(context: context, configuration: routerConfiguration, logger: logger)
        server = UnixServer(listener: listener, handler: router, configuration: serverConfiguration)
        me.value = self
    }

    public func start() { server.start() }

    /// Clients currently connected (the server queue's count).
    public var clientCount: Int { server.queue.sync { server.connectionCount } }

    /// Ends every stream with its final event, closes the clients, then calls `completion`
    /// (on the server queue). The store stays open: stopping it is the owner's call.
    public func stop(completion: @escaping @Sendable () -> Void) {
        context.workouts?.detach(hub: live)
        router.shutdown(on: server.queue)
        server.stop(completion: completion)
    }

    /// `stop` and wait for it.
    public func stopAndWait() {
        let done = DispatchSemaphore(value: 0)
        stop { done.signal() }
        done.wait()
    }

    /// Everything submitted so far decoded, handed to live subscribers (delivery happens on
    /// the ingest queue, so draining it is enough), stored and made durable (SIGTERM, tests,
    /// the benchmark between runs).
    public func flush() throws {
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
    }
}

/// Written once in `DaemonFrontEnd.init`, before the server starts; read by status requests.
private final class WeakFrontEnd: @unchecked Sendable {
    weak var value: DaemonFrontEnd?
}
