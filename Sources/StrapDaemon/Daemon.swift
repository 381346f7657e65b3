import Dispatch
import Glibc
import StrapBluetooth
import StrapConfig
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapSystem
import StrapWire
import Synchronization

/// strapd's lifecycle: configuration → state directory → store → pipeline → sources →
/// socket → READY; SIGHUP reloads what can be reloaded; SIGTERM stops gracefully (flush,
/// fsync, a final event to every stream, close). All lifecycle work runs on `queue`.
public final class Daemon: @unchecked Sendable {
    public static let version = "0.1.0"

    public let options: DaemonOptions
    public private(set) var configuration: Configuration
    public let logger: Logger
    let queue = DispatchQueue(label: "strapd.daemon")
    let startedAt = ReceiveTime.now().wall

    private var frontEnd: DaemonFrontEnd?
    public var context: DaemonContext? { frontEnd?.context }
    private var store: Store?
    private var listener: UnixListener?
    private var simulator: SimulatorSource?
    private var replay: ReplaySource?
    private var recorder: Recorder?
    private var bluetooth: BlueZDeviceService?
    private var watchdog: WatchdogPinger?
    private var signals: SignalWatcher?
    private var statusTimer: DispatchSourceTimer?
    private var lastStatus = ""
    private var rate = RateMeter()
    private var stopping = false
    private var storeDegraded: String?
    /// Called when the daemon has stopped (the executable exits then).
    public var onStopped: (@Sendable (Int32) -> Void)?

    public init(options: DaemonOptions, environment: [String: String]) throws(StartupError) {
        self.options = options
        let parsed = try DaemonSetup.loadConfiguration(options)
        configuration = parsed.configuration
        logger = Logger(level: DaemonSetup.logLevel(parsed.configuration.daemon.logLevel),
                        sink: LogSink.detect(environment: environment))
        for w in parsed.warnings { logger.warning("\(w)") }
    }

    /// Brings everything up, ending with READY=1.
    public func start() throws(StartupError) {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let c = configuration
        try DaemonSetup.makeDirectory(c.daemon.stateDirectory, mode: 0o750)
        let store: Store
        do { store = try Store.open(DaemonSetup.storeConfig(c)) } catch { throw .store(error.description) }
        self.store = store
        for damage in store.status.damage { logger.error("store damage: \(damage)") }

        let log = logger
        let (listener, activated) = try DaemonSetup.listener(c) { log.warning($0) }
        self.listener = listener
        let devicesConfig = c.devices
        let frontEnd = try DaemonFrontEnd(
            store: store, listener: listener, access: DaemonSetup.accessPolicy(c.access) { log.warning($0) },
            identity: { address, linkName in
                let settings = devicesConfig[address]
                let name = settings?.name ?? linkName ?? address
                return (Device(id: address, address: address, name: name),
                        DeviceIngest.Settings(wheelCircumference: settings?.wheelCircumference ?? 2.105,
                                              cadenceIsStepsPerMinute: settings?.cadenceIsSpm ?? false))
            },
            server: ServerConfiguration(outputLimits: OutputLimits(clientBuffer: c.daemon.clientBuffer),
                                        maximumConnections: c.daemon.maxClients),
            logger: logger,
            status: { [weak self] _ in self?.currentStatus() ?? DaemonStatus.empty }
        ) { (pipeline: Pipeline) throws(StartupError) -> any DeviceService in
            pipeline.onRejected = { address, reason in log.warning("rejected packet from \(address): \(reason)", metadata: [LogKey.deviceAddress: address]) }
            pipeline.storeStage.onDegradedChange = { [weak self] reason in self?.storeDegradedChanged(reason) }
            return try startSources(pipeline: pipeline)
        }
        self.frontEnd = frontEnd
        frontEnd.start()
        let pipeline = frontEnd.pipeline
        logger.notice("strapd \(Self.version) listening on \(activated ? "socket-activated fd" : c.daemon.socket), store \(c.daemon.stateDirectory)/store at anchor \(store.latestAnchor)")

        queue.sync {
            startStatusTimer()
            watchdog = WatchdogPinger(queue: pipeline.queue)
            watchdog?.start()
            signals = SignalWatcher(signals: [SIGTERM, SIGINT, SIGHUP], queue: queue) { [weak self] sig in
                if sig == SIGHUP { self?.reload() } else { self?.stop(exitCode: 0) }
            }
            signals?.start()
        }
        _ = try? SystemdNotifier.notify(.ready, .status(currentStatus().summary))
    }

    private func startSources(pipeline: Pipeline) throws(StartupError) -> any DeviceService {
        if let path = options.record {
            do { recorder = try Recorder(path: path) } catch { throw .source("cannot record to \(path): \(error)") }
            let r = recorder!
            pipeline.recorder = { r.record($0) }
        }
        if let path = options.replay {
            let replay: ReplaySource
            do { replay = try ReplaySource(path: path, pipeline: pipeline, speed: options.replaySpeed) } catch {
                throw .source("cannot replay \(path): \(error)")
            }
            let log = logger
            replay.onFinished = { log.notice("replay of \(path) finished") }
            self.replay = replay
            replay.start()
            let addresses = Set(replay.events.map(\.address))
            return SimulatedDeviceService(identities: addresses.sorted().map {
                SimulatedIdentity(address: $0, name: $0)
            })
        }
        if let n = options.simulate {
            let kinds = configuration.simulate.devices.compactMap { Simulation.Kind(rawValue: $0.rawValue) }
            let simulation = n > 0 ? Simulation(count: n, seed: UInt64(startedAt)) : Simulation(kinds: kinds, seed: UInt64(startedAt))
            let source = SimulatorSource(simulation: simulation, pipeline: pipeline)
            simulator = source
            source.start()
            logger.notice("simulating \(simulation.devices.count) device(s): \(simulation.devices.map(\.identity.name).joined(separator: ", "))")
            return SimulatedDeviceService(identities: source.identities)
        }
        let service = startBluetooth(pipeline: pipeline)
        bluetooth = service
        return service
    }

    // MARK: status

    private func startStatusTimer() {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + 2, repeating: 2)
        t.setEventHandler { @Sendable [weak self] in self?.statusTick() }
        t.resume()
        statusTimer = t
    }

    private func statusTick() {
        guard let context else { return }
        rate.record(samples: context.pipeline.counters.samples, at: ReceiveTime.now().monotonic)
        recorder?.flush()
        let summary = currentStatus().summary
        if summary != lastStatus {
            lastStatus = summary
            SystemdNotifier.notifyInBackground(.status(summary))
        }
    }

    func currentStatus() -> DaemonStatus {
        guard let context, let store else { return .empty }
        let storeStatus = store.status
        let degraded = storeDegraded ?? storeStatus.degraded
        return DaemonStatus(version: Self.version, startedAt: startedAt,
                            mode: options.replay != nil ? "replay" : options.simulate != nil ? "simulate" : "bluetooth",
                            connectedSensors: context.directory.connectedCount, knownSensors: context.devices.snapshot().filter(\.known).count,
                            sampleRate: rate.perSecond, pipeline: context.pipeline.counters, store: storeStatus,
                            degraded: degraded.map { "store: \($0)" } ?? bluetooth?.degraded.map { "bluetooth: \($0)" }, clients: frontEnd?.clientCount ?? 0,
                            liveSubscribers: context.live.subscriberCount)
    }

    private func storeDegradedChanged(_ reason: String?) {
        queue.async { [self] in
            storeDegraded = reason
            if let reason { logger.error("store degraded, samples are kept in memory and retried: \(reason)") } else {
                logger.notice("store writable again; pending samples written")
            }
            statusTick()
        }
    }

    // MARK: reload and stop

    /// SIGHUP: re-reads the file and applies what can change without a restart (log level,
    /// access rules, per-device settings for new links); says what needs a restart.
    public func reload() {
        _ = try? SystemdNotifier.notify(.reloading)
        do {
            let parsed = try DaemonSetup.loadConfiguration(options)
            for w in parsed.warnings { logger.warning("\(w)") }
            let new = parsed.configuration
            logger.minimumLevel = DaemonSetup.logLevel(new.daemon.logLevel)
            context?.access = DaemonSetup.accessPolicy(new.access) { logger.warning($0) }
            bluetooth?.reload(bluetooth: new.bluetooth, devices: new.devices)
            // The BusLog threshold follows the new log level.
            if bluetooth != nil && options.forwardBusLog { BlueZDeviceService.forwardBusLog(to: logger) }
            if new.daemon != configuration.daemon || new.store != configuration.store {
                logger.warning("reload: [daemon] and [store] changes take effect after a restart")
            }
            configuration = new
            logger.notice("configuration reloaded from \(options.configPath)")
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
        }
        _ = try? SystemdNotifier.notify(.ready, .status(currentStatus().summary))
    }

    /// Graceful stop: sources first, then everything decoded is stored and fsynced, streams
    /// get their final event, the socket closes.
    public func stop(exitCode: Int32) {
        queue.async { [self] in
            guard !stopping else { return }
            stopping = true
            logger.notice("stopping")
            _ = try? SystemdNotifier.notify(.stopping)
            simulator?.stop()
            bluetooth?.stop()
            watchdog?.stop()
            statusTimer?.cancel()
            if let frontEnd {
                do { try frontEnd.flush() } catch {
                    logger.error("final flush failed: \(error); \(frontEnd.pipeline.storeStage.pendingCount) samples not stored")
                }
            }
            recorder?.flush()
            let finish: @Sendable () -> Void = { [self] in
                queue.async { [self] in
                    listener?.close()
                    store?.close()
                    logger.notice("stopped")
                    onStopped?(exitCode)
                }
            }
            if let frontEnd { frontEnd.stop(completion: finish) } else { finish() }
        }
    }
}

extension DaemonStatus {
    /// Public for in-process front ends that never report status (strap-bench).
    public static let empty = DaemonStatus(version: Daemon.version, startedAt: 0, mode: "", connectedSensors: 0, knownSensors: 0,
                                    sampleRate: 0, pipeline: .init(), store: nil,
                                    degraded: nil, clients: 0, liveSubscribers: 0)
}

/// Samples per second over the last status interval.
struct RateMeter {
    private var lastCount = 0
    private var lastTime: Double?
    private(set) var perSecond = 0.0

    mutating func record(samples: Int, at time: Double) {
        if let lastTime, time > lastTime { perSecond = Double(samples - lastCount) / (time - lastTime) }
        lastCount = samples
        lastTime = time
    }
}
