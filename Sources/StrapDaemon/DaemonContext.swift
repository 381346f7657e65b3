import StrapIngest
import StrapMQTT
import StrapModel
import StrapStore
import StrapWire
import Synchronization

/// What `status` reports (docs/protocol.md) and `sd_notify STATUS=` summarises.
public struct DaemonStatus: Sendable {
    public var version: String
    public var startedAt: Millis
    public var mode: String                 // "bluetooth", "simulate", "replay"
    public var connectedSensors: Int
    public var knownSensors: Int
    /// Samples per second over the last status interval.
    public var sampleRate: Double
    public var pipeline: Pipeline.Counters
    /// nil only before the store is open.
    public var store: StoreStatus?
    /// Why the daemon is degraded (disk full, adapter missing, ...), nil when healthy.
    public var degraded: String?
    public var clients: Int
    public var liveSubscribers: Int
    /// Open anchored and statistics follow streams.
    public var followers: Int = 0
    /// The MQTT publisher (docs/mqtt.md); nil when `[mqtt]` names no broker.
    public var mqtt: MQTTStatus?

    /// The one-line summary for `systemctl status`.
    public var summary: String {
        if let degraded { return "degraded: \(degraded)" }
        let rate = sampleRate >= 10 ? String(Int(sampleRate.rounded())) : String((sampleRate * 10).rounded() / 10)
        return "\(connectedSensors) sensor\(connectedSensors == 1 ? "" : "s") connected, \(rate) samples/s, \(clients) client\(clients == 1 ? "" : "s")"
    }
}

/// Everything request handlers may use. Built once by `Daemon`; tests build their own.
public final class DaemonContext: @unchecked Sendable {
    public let store: Store
    public let pipeline: Pipeline
    public let live: LiveHub
    public let devices: DeviceService
    public let directory: DeviceDirectory
    /// Workout sessions and athlete profiles; nil where a front end runs without them.
    public let workouts: WorkoutService?
    /// Smart trainers' control (docs/trainer.md).
    public let trainers: TrainerService
    private let accessPolicy: Mutex<AccessPolicy>
    /// The `[access]` rules in force; SIGHUP may replace them.
    public var access: AccessPolicy {
        get { accessPolicy.withLock { $0 } }
        set { accessPolicy.withLock { $0 = newValue } }
    }
    /// Current status, computed on demand (clients count filled in by the router).
    public let status: @Sendable () -> DaemonStatus

    public init(store: Store, pipeline: Pipeline, live: LiveHub, devices: DeviceService, directory: DeviceDirectory,
                workouts: WorkoutService? = nil, trainers: TrainerService? = nil, access: AccessPolicy,
                status: @escaping @Sendable () -> DaemonStatus) {
        self.store = store
        self.pipeline = pipeline
        self.live = live
        self.devices = devices
        self.directory = directory
        self.workouts = workouts
        self.trainers = trainers ?? TrainerService(devices: devices)
        accessPolicy = Mutex(access)
        self.status = status
    }
}
