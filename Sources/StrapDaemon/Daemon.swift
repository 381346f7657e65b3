import Dispatch
import Glibc
import StrapBluetooth
import StrapConfig
import StrapIngest
import StrapModel
import StrapOS
import StrapSimulator
import StrapStore
import StrapSystem
import StrapWire
import Synchronization

/// strapd's lifecycle: configuration, then the services in order (`services`, listed in
/// docs/architecture.md) ending with READY; SIGHUP reloads what can be reloaded; SIGTERM stops
/// the services in reverse (the source first, then the final flush and fsync, a final event
/// to every stream, the socket, the store). Lifecycle work runs on `queue`.
public final class Daemon: @unchecked Sendable {
    public static let version = "0.2.0~dev"

    public let options: DaemonOptions
    public private(set) var configuration: Configuration
    public let logger: Logger
    let queue = DispatchQueue(label: "strapd.daemon")
    let startedAt = ReceiveTime.now().wall

    /// Set by `start`, before any service runs.
    private var group: ServiceGroup?
    private var storeService: StoreService?
    private var frontEndService: FrontEndService?
    private var source: SourceService?
    private var recorderService: RecorderService?
    private var mqttService: MQTTService?
    private let environment: [String: String]
    /// sd_notify reads NOTIFY_SOCKET from the process environment; the daemon only talks to
    /// systemd when the environment it was given names a socket. In production that is the
    /// same thing (strapd passes its own); in the tests, daemons run in-process with an empty
    /// one, and a test runner started by a service manager must not hear READY=1 from them.
    private var underSystemd: Bool { environment["NOTIFY_SOCKET"] != nil }
    /// The same for socket activation: sd_listen_fds(1) unsets LISTEN_* in the process
    /// environment, which an in-process test daemon must never touch (docs/testing.md, "The
    /// environment"), so it is asked only when the daemon's environment names a LISTEN_PID.
    private var maybeSocketActivated: Bool { environment["LISTEN_PID"] != nil }
    /// Confined to `queue`.
    private var lastStatus = ""
    /// Confined to `queue`.
    private var memoryReturn = MemoryReturnSchedule()
    private var rate = RateMeter()
    private var stopping = false
    private var storeDegraded: String?
    /// Called when the daemon has stopped (the executable exits then).
    public var onStopped: (@Sendable (Int32) -> Void)?

    public init(options: DaemonOptions, environment: [String: String]) throws(StartupError) {
        self.options = options
        self.environment = environment
        let parsed = try DaemonSetup.loadConfiguration(options)
        configuration = parsed.configuration
        logger = Logger(level: DaemonSetup.logLevel(parsed.configuration.daemon.logLevel),
                        sink: LogSink.detect(environment: environment))
        for w in parsed.warnings { logger.warning("\(w)") }
        // With a broker named, contradictions stop the start (MQTTService); without, they are
        // settings that do nothing, which the operator should hear about.
        if !configuration.mqtt.enabled { for p in configuration.mqtt.problems() { logger.warning("\(p)") } }
    }

    private var frontEnd: DaemonFrontEnd? { frontEndService?.frontEnd }
    public var context: DaemonContext? { frontEnd?.context }
    private var store: Store? { storeService?.store }
    private var bluetooth: BlueZDeviceService? { source?.bluetooth }
    private var recorder: Recorder? { recorderService?.recorder }

    /// Starts every service in order, ending with READY=1. A failure stops the ones already
    /// started, in reverse, and is thrown.
    public func start() throws(StartupError) {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let group = ServiceGroup(try services(), log: { [logger] in logger.debug($0) })
        self.group = group
        try group.start()
    }

    /// The daemon's parts in start order; `ServiceGroup` stops them in reverse. The order is
    /// what SIGTERM relies on: the source stops submitting, the pipeline drains into the
    /// store and fsyncs, the recorder writes its last lines, and only then do streams get
    /// their final event and the socket and store close.
    private func services() throws(StartupError) -> [any LifecycleService] {
        let c = configuration
        let store = StoreService(configuration: c, logger: logger)
        let source = SourceService(options: options, configuration: c, logger: logger, seed: UInt64(startedAt))
        let workouts = WorkoutsService(store: store, configuration: c, logger: logger)
        let frontEnd = FrontEndService(store: store, workouts: workouts, source: source, configuration: c, logger: logger,
                                       maybeSocketActivated: maybeSocketActivated,
                                       status: { [weak self] in self?.currentStatus() ?? DaemonStatus.empty },
                                       storeDegraded: { [weak self] in self?.storeDegradedChanged($0) })
        let recorder = options.record.map { RecorderService(path: $0, frontEnd: frontEnd) }
        // Its settings (the password file's mode among them) are checked before anything starts:
        // a daemon that would refuse them must not serve its socket meanwhile.
        let mqtt = c.mqtt.enabled ? try MQTTService(configuration: c, frontEnd: frontEnd, logger: logger, environment: environment) : nil
        (storeService, self.source, frontEndService, recorderService, mqttService) = (store, source, frontEnd, recorder, mqtt)
        var statusTimer: DispatchSourceTimer?
        var watchdog: WatchdogPinger?
        var signals: SignalWatcher?
        let services: [(any LifecycleService)?] = [
            store,
            workouts,
            frontEnd,
            recorder,
            // Stops after the final flush below: what the source delivered last is published
            // (or stays behind the persisted cursor) before the broker hears `offline`.
            mqtt,
            ServiceSteps("pipeline", start: {}, stop: { [self] in flushPipeline() }),
            source,
            // Stops before the source: resetting a trainer needs its link (docs/trainer.md).
            ServiceSteps("trainers", start: {}, stop: { frontEnd.frontEnd?.context.trainers.releaseAll() }),
            ServiceSteps("status", start: { [self] in statusTimer = makeStatusTimer() }, stop: { statusTimer?.cancel() }),
            ServiceSteps("watchdog", start: { [underSystemd] in
                watchdog = underSystemd ? frontEnd.frontEnd.flatMap { WatchdogPinger(queue: $0.pipeline.queue) } : nil
                watchdog?.start()
            }, stop: { watchdog?.stop() }),
            ServiceSteps("signals", start: { [self] in
                signals = SignalWatcher(signals: [SIGTERM, SIGINT, SIGHUP], queue: queue) { [weak self] sig in
                    if sig == SIGHUP { self?.reload() } else { self?.stop(exitCode: 0) }
                }
                signals?.start()
            }, stop: { signals?.cancel() }),
            ServiceSteps("notifier", start: { [self] in
                logger.notice("strapd \(Self.version) listening on \(frontEnd.activated ? "socket-activated fd" : c.daemon.socket), store \(c.daemon.stateDirectory)/store at anchor \(self.store?.latestAnchor ?? 0)")
                notifySystemd(.ready, .status(currentStatus().summary))
                releaseCodePages(log: true)
            }, stop: { [self] in
                notifySystemd(.stopping)
            }),
        ]
        return services.compactMap { $0 }
    }

    private func notifySystemd(_ states: NotifyState...) {
        if underSystemd { _ = try? SystemdNotifier.notify(states) }
    }

    /// Everything submitted is decoded, handed to live subscribers, stored and fsynced.
    private func flushPipeline() {
        guard let frontEnd else { return }
        do { try frontEnd.flush() } catch {
            logger.error("final flush failed: \(error); \(frontEnd.pipeline.storeStage.pendingCount) samples not stored")
        }
    }

    // MARK: status

    private func makeStatusTimer() -> DispatchSourceTimer {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + 2, repeating: 2)
        t.setEventHandler { @Sendable [weak self] in self?.statusTick() }
        t.resume()
        return t
    }

    private func statusTick() {
        guard let context else { return }
        rate.record(samples: context.pipeline.counters.samples, at: ReceiveTime.now().monotonic)
        recorder?.flush()
        if memoryReturn.tick(connected: context.directory.connectedCount) {
            MallocArenas.trim()
            releaseCodePages()
        }
        // The STATUS= line is for systemd alone: not made when nobody receives it (a
        // snapshot of every count, about 40 k instructions each tick).
        guard underSystemd else { return }
        let summary = currentStatus().summary
        if summary != lastStatus {
            lastStatus = summary
            SystemdNotifier.notifyInBackground(.status(summary))
        }
    }

    /// At start-up (`log`), when the connected count changes, and once a minute; failure (a
    /// kernel without MADV_DONTNEED on this mapping) only costs memory, so it is said once, at
    /// start-up.
    private func releaseCodePages(log: Bool = false) {
        do throws(SystemCallError) {
            let bytes = try CodePages.release()
            if log { logger.debug("code pages handed back: \(bytes >> 20) MiB of the program's code and read-only data") }
        } catch {
            if log { logger.info("code pages stay mapped: \(error)") }
        }
        do throws(SystemCallError) {
            let bytes = try CodePages.releaseProgramReadOnlyData()
            if log { logger.debug("read-only data handed back: \(bytes >> 10) KiB of the program's .rodata") }
        } catch {
            if log { logger.info("the program's .rodata stays mapped: \(error)") }
        }
    }

    func currentStatus() -> DaemonStatus {
        guard let context, let store else { return .empty }
        let storeStatus = store.status
        let degraded = storeDegraded ?? storeStatus.degraded
        return DaemonStatus(version: Self.version, startedAt: startedAt,
                            mode: options.replay != nil ? "replay" : options.simulate != nil ? "simulate" : "bluetooth",
                            connectedSensors: context.directory.connectedCount, knownSensors: context.devices.knownCount,
                            sampleRate: rate.perSecond, pipeline: context.pipeline.counters, store: storeStatus,
                            degraded: degraded.map { "store: \($0)" } ?? bluetooth?.degraded.map { "bluetooth: \($0)" }, clients: frontEnd?.clientCount ?? 0,
                            liveSubscribers: context.live.subscriberCount, mqtt: mqttService?.publisher?.status)
    }

    private func storeDegradedChanged(_ health: StoreStage.Health) {
        queue.async { [self] in
            switch health {
            case .degraded(let reason):
                storeDegraded = reason
                logger.error("store degraded, samples are kept in memory and retried: \(reason)")
            case let .recovered(written, lost):
                storeDegraded = nil
                logger.notice("store writable again: \(written) held sample(s) written" +
                              (lost > 0 ? ", \(lost) dropped while it was not (the memory bound)" : ", none lost"))
            }
            statusTick()
        }
    }

    // MARK: reload and stop

    /// SIGHUP: re-reads the file and applies what can change without a restart (log level,
    /// access rules, per-device settings for new links); says what needs a restart.
    public func reload() {
        notifySystemd(.reloading)
        do {
            let parsed = try DaemonSetup.loadConfiguration(options)
            for w in parsed.warnings { logger.warning("\(w)") }
            let new = parsed.configuration
            logger.minimumLevel = DaemonSetup.logLevel(new.daemon.logLevel)
            context?.access = DaemonSetup.accessPolicy(new.access) { logger.warning($0) }
            bluetooth?.reload(bluetooth: new.bluetooth, devices: new.devices)
            // The BusLog threshold follows the new log level.
            if bluetooth != nil && options.forwardBusLog { BlueZDeviceService.forwardBusLog(to: logger) }
            if new.daemon != configuration.daemon || new.store != configuration.store || new.mqtt != configuration.mqtt {
                logger.warning("reload: [daemon], [store] and [mqtt] changes take effect after a restart")
            }
            configuration = new
            logger.notice("configuration reloaded from \(options.configPath)")
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
        }
        notifySystemd(.ready, .status(currentStatus().summary))
    }

    /// Graceful stop: every service in reverse start order (`services`).
    public func stop(exitCode: Int32) {
        queue.async { [self] in
            guard !stopping else { return }
            stopping = true
            logger.notice("stopping")
            group?.stop()
            logger.notice("stopped")
            onStopped?(exitCode)
        }
    }
}

extension DaemonStatus {
    /// Public for in-process front ends that never report status (strap-bench).
    public static let empty = DaemonStatus(version: Daemon.version, startedAt: 0, mode: "", connectedSensors: 0, knownSensors: 0,
                                    sampleRate: 0, pipeline: .init(), store: nil,
                                    degraded: nil, clients: 0, liveSubscribers: 0, mqtt: nil)
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
