import StrapBluetooth
import StrapConfig
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapSystem

/// The state directory and the store: opened first, closed last (after the final flush).
final class StoreService: LifecycleService {
    let serviceName = "store"
    private let configuration: Configuration
    private let logger: Logger
    private(set) var store: Store?

    init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    func start() throws(StartupError) {
        try DaemonSetup.makeDirectory(configuration.daemon.stateDirectory, mode: 0o750)
        try DaemonSetup.requireWritable(configuration.daemon.stateDirectory)
        let store: Store
        do { store = try Store.open(DaemonSetup.storeConfig(configuration)) } catch { throw .store(error.description) }
        self.store = store
        for damage in store.status.damage { logger.error("store damage: \(damage)") }
    }

    func stop() { store?.close() }
}

/// Workout sessions, athlete profiles and plans (docs/workouts.md): `profiles.json` and
/// `plans.json` loaded and every
/// open session rebuilt from its journal and the stored samples before the front end exists,
/// so no client sees a session missing and no sample is counted twice.
final class WorkoutsService: LifecycleService {
    let serviceName = "workouts"
    private let storeService: StoreService
    private let configuration: Configuration
    private let logger: Logger
    private(set) var workouts: WorkoutService?

    init(store: StoreService, configuration: Configuration, logger: Logger) {
        storeService = store
        self.configuration = configuration
        self.logger = logger
    }

    func start() throws(StartupError) {
        guard let store = storeService.store else { throw .store("not open") }
        let log = logger
        do throws(StrapError) {
            let profiles = try ProfileBook(directory: configuration.daemon.stateDirectory,
                                           today: CalendarDate(utcMillis: ReceiveTime.now().wall),
                                           load: DaemonFiles.read, persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
            if let problem = profiles.loadProblem { log.error("athlete profiles: \(problem)") }
            let plans = try PlanBook(directory: configuration.daemon.stateDirectory, load: DaemonFiles.read,
                                     persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
            if let problem = plans.loadProblem { log.error("workout plans: \(problem)") }
            let workouts = try WorkoutService(store: store, profiles: profiles, plans: plans,
                                              maximumOpenSessions: configuration.daemon.maxWorkoutSessions, log: { log.notice($0) })
            workouts.recover()
            self.workouts = workouts
        } catch { throw .store("workout sessions: \(error)") }
    }

    /// Open sessions stay open: their journals are the state the next start resumes from.
    func stop() {}
}

/// The socket and `DaemonFrontEnd` (pipeline, live hub, device directory, router, server),
/// built on the open store with the source's device service. Clients are accepted from its
/// start on; its stop gives every stream its final event and closes the clients and the socket.
final class FrontEndService: LifecycleService {
    let serviceName = "server"
    private let storeService: StoreService
    private let workoutsService: WorkoutsService
    private let source: SourceService
    private let configuration: Configuration
    private let logger: Logger
    private let maybeSocketActivated: Bool
    private let status: @Sendable () -> DaemonStatus
    private let storeDegraded: @Sendable (StoreStage.Health) -> Void
    private(set) var frontEnd: DaemonFrontEnd?
    private var listener: UnixListener?
    /// systemd passed the socket (socket activation).
    private(set) var activated = false

    init(store: StoreService, workouts: WorkoutsService, source: SourceService, configuration: Configuration, logger: Logger,
         maybeSocketActivated: Bool, status: @escaping @Sendable () -> DaemonStatus, storeDegraded: @escaping @Sendable (StoreStage.Health) -> Void) {
        storeService = store
        workoutsService = workouts
        self.source = source
        self.configuration = configuration
        self.logger = logger
        self.maybeSocketActivated = maybeSocketActivated
        self.status = status
        self.storeDegraded = storeDegraded
    }

    func start() throws(StartupError) {
        guard let store = storeService.store else { throw .store("not open") }
        let c = configuration
        let log = logger
        let (listener, activated) = try DaemonSetup.listener(c, maybeSocketActivated: maybeSocketActivated) { log.warning($0) }
        let devicesConfig = c.devices
        let profiles = workoutsService.workouts?.profiles
        let status = status, storeDegraded = storeDegraded, source = source
        do throws(StartupError) {
            frontEnd = try DaemonFrontEnd(
                store: store, listener: listener, access: DaemonSetup.accessPolicy(c.access) { log.warning($0) },
                identity: { address, linkName in
                    let settings = devicesConfig[address]
                    // strapd.conf's [device.ADDR] is the box owner's word; an athlete's profile
                    // fills in what it leaves unset (strapd.conf(5)).
                    let fromProfile = profiles?.deviceSettings(address)
                    let name = settings?.name ?? linkName ?? address
                    return (Device(id: address, address: address, name: name),
                            DeviceIngest.Settings(
                                wheelCircumference: settings?.wheelCircumference ?? fromProfile?.wheelCircumference ?? 2.105,
                                cadenceIsStepsPerMinute: settings?.cadenceIsSpm ?? fromProfile?.cadenceIsStepsPerMinute ?? false))
                },
                server: ServerConfiguration(outputLimits: OutputLimits(clientBuffer: c.daemon.clientBuffer),
                                            maximumConnections: c.daemon.maxClients),
                logger: logger,
                workouts: workoutsService.workouts,
                trainerHeldTargets: c.daemon.stateDirectory + "/trainers-held",
                status: { _ in status() }
            ) { (pipeline: Pipeline) throws(StartupError) -> any DeviceService in
                pipeline.onRejected = { address, reason in
                    log.warning("rejected packet from \(address): \(reason)", metadata: [LogKey.deviceAddress: address])
                }
                pipeline.storeStage.onDegradedChange = storeDegraded
                return try source.build(pipeline: pipeline)
            }
        } catch {
            listener.close()
            throw error
        }
        self.listener = listener
        self.activated = activated
        frontEnd?.start()
    }

    func stop() {
        // The server closes the listener it was given; closing it here too closed whatever
        // file had meanwhile got the descriptor's number.
        if let frontEnd { frontEnd.stopAndWait() } else { listener?.close() }
    }
}

/// Whatever feeds the pipeline: a replayed capture (`--replay`), the simulator
/// (`--simulate`), or BlueZ. Built with the front end, whose `devices.*` operations it
/// answers; started once the recorder is tapped in, stopped before the final flush.
final class SourceService: LifecycleService {
    enum Mode: Equatable {
        case bluetooth
        /// 0: the configured device set.
        case simulate(devices: Int)
        case replay(path: String, speed: Double)
    }

    let mode: Mode
    private let options: DaemonOptions
    private let configuration: Configuration
    private let logger: Logger
    private let seed: UInt64
    private(set) var bluetooth: BlueZDeviceService?
    private var simulator: SimulatorSource?
    private var replay: ReplaySource?

    init(options: DaemonOptions, configuration: Configuration, logger: Logger, seed: UInt64) {
        if let path = options.replay {
            mode = .replay(path: path, speed: options.replaySpeed)
        } else if let n = options.simulate {
            mode = .simulate(devices: n)
        } else {
            mode = .bluetooth
        }
        self.options = options
        self.configuration = configuration
        self.logger = logger
        self.seed = seed
    }

    var serviceName: String {
        switch mode {
        case .bluetooth: "bluetooth"
        case .simulate: "simulator"
        case .replay: "replay"
        }
    }

    /// Builds the source on `pipeline` (not started) and returns its device service.
    func build(pipeline: Pipeline) throws(StartupError) -> any DeviceService {
        switch mode {
        case let .replay(path, speed):
            let replay: ReplaySource
            do { replay = try ReplaySource(path: path, pipeline: pipeline, speed: speed) } catch {
                throw .source("cannot replay \(path): \(error)")
            }
            let log = logger
            replay.onFinished = { log.notice("replay of \(path) finished") }
            self.replay = replay
            return SimulatedDeviceService(identities: Set(replay.events.map(\.address)).sorted().map {
                SimulatedIdentity(address: $0, name: $0)
            })
        case let .simulate(n):
            let kinds = configuration.simulate.devices.compactMap { Simulation.Kind(rawValue: $0.rawValue) }
            // The demo's scenario is seeded too: every run of `make demo` looks the same.
            let scenario = options.simulateScenario
            let seed = scenario == .demo ? 1 : seed
            let simulation = n > 0 ? Simulation(count: n, seed: seed, scenario: scenario)
                : Simulation(kinds: kinds, seed: seed, scenario: scenario)
            let source = SimulatorSource(simulation: simulation, pipeline: pipeline, speed: options.simulateSpeed)
            simulator = source
            return SimulatedDeviceService(identities: source.identities,
                                          links: { [weak source] address, up in source?.setConnected(address, up) },
                                          writes: { [weak source] address, characteristic, value in
                                              source?.write(address, characteristic, value) ?? (.unavailable("the simulator stopped"), nil)
                                          })
        case .bluetooth:
            let service = BlueZDeviceService.make(options: options, configuration: configuration, logger: logger, pipeline: pipeline)
            bluetooth = service
            return service
        }
    }

    func start() {
        if let replay { replay.start() }
        if let simulator {
            simulator.start()
            logger.notice("simulating \(simulator.identities.count) device(s): \(simulator.identities.map(\.name).joined(separator: ", "))")
        }
        if let bluetooth {
            if options.forwardBusLog { BlueZDeviceService.forwardBusLog(to: logger) }
            bluetooth.start()
        }
    }

    /// Returns once the source submits nothing more.
    func stop() {
        replay?.stop()
        simulator?.stop()
        bluetooth?.stop()
    }
}

/// `--record FILE`: every event as submitted goes to the capture, from before the source
/// starts to after it stopped.
final class RecorderService: LifecycleService {
    let serviceName = "recorder"
    private let path: String
    private let frontEnd: FrontEndService
    private(set) var recorder: Recorder?

    init(path: String, frontEnd: FrontEndService) {
        self.path = path
        self.frontEnd = frontEnd
    }

    func start() throws(StartupError) {
        guard let pipeline = frontEnd.frontEnd?.pipeline else { throw .source("no pipeline to record") }
        let recorder: Recorder
        do { recorder = try Recorder(path: path) } catch { throw .source("cannot record to \(path): \(error)") }
        self.recorder = recorder
        pipeline.recorder = { recorder.record($0) }
    }

    func stop() { recorder?.flush() }
}
