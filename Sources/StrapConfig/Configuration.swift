/// strapd's configuration (`/etc/strapd/strapd.conf`, documented in strapd.conf(5)).
/// Plain values with the documented defaults; `ConfigParser` fills it, command-line flags
/// override it, and `ConfigSchema` knows every key.
public struct Configuration: Sendable, Equatable {
    public var daemon = Daemon()
    public var store = Store()
    public var bluetooth = Bluetooth()
    public var access = Access()
    public var simulate = Simulate()
    /// `[mqtt]`: the publisher is off unless a broker is named (docs/mqtt.md).
    public var mqtt = MQTT()
    /// Per-device settings by normalised (upper-case) address.
    public var devices: [String: DeviceSettings] = [:]

    public init() {}

    public struct Daemon: Sendable, Equatable {
        public var stateDirectory = "/var/lib/strapd"
        public var socket = "/run/strapd/strapd.sock"
        public var logLevel = ConfiguredLogLevel.info
        /// Group owning the socket we bind ourselves; nil leaves the daemon's own group.
        /// Ignored under socket activation, where the socket unit's SocketGroup= applies.
        public var socketGroup: String? = "strapd"
        /// Per-client output bound (docs/protocol.md#slow-clients); high water is a quarter of it.
        public var clientBuffer = 4 * 1024 * 1024
        public var maxClients = 1024
        /// Workout sessions open at once (`workout.start` beyond it is `busy`).
        public var maxWorkoutSessions = 64
    }

    public struct Store: Sendable, Equatable {
        public var sync = SyncMode.interval
        public var syncInterval = Duration.milliseconds(100)
        public var retention = Retention.forever
    }

    public struct Bluetooth: Sendable, Equatable {
        /// `hciN` or an adapter address; nil uses every adapter.
        public var adapter: String?
        public var autoConnect = true
        public var notifyMode = NotifyMode.notify
        public var scanTimeout = Duration.seconds(30)
        public var pairAgent = false
    }

    public struct Access: Sendable, Equatable {
        public var read: [PrincipalSpec] = []
        /// Principals whose read is limited to these sample types, in file order.
        public var readTypes: [PrincipalSpec: [String]] = [:]
        public var record: [PrincipalSpec] = []
        public var admin: [PrincipalSpec] = []
    }

    public struct Simulate: Sendable, Equatable {
        public var devices: [SimulatedSensorKind] = [.hr, .csc]
    }

    public struct DeviceSettings: Sendable, Equatable {
        public var name: String?
        /// Metres.
        public var wheelCircumference: Double?
        public var notifyMode: NotifyMode?
        /// The RSC cadence is already steps per minute (some foot pods) rather than strides.
        public var cadenceIsSpm: Bool?
        /// Connect only through this adapter (`hciN` or its address); nil: any adapter.
        public var adapter: String?
        public init() {}
    }
}

public enum ConfiguredLogLevel: String, Sendable, CaseIterable {
    case debug, info, notice, warning, error
}

public enum SyncMode: String, Sendable, CaseIterable {
    case always, interval, none
}

public enum NotifyMode: String, Sendable, CaseIterable {
    /// StartNotify + PropertiesChanged.
    case notify
    /// AcquireNotify: an fd per characteristic.
    case acquire
}

public enum SimulatedSensorKind: String, Sendable, CaseIterable {
    /// Heart-rate strap.
    case hr
    /// Cycling speed and cadence sensor.
    case csc
    /// Running foot pod.
    case rsc
    /// Crank power meter (Cycling Power).
    case power
    /// Smart trainer (Fitness Machine, indoor bike) whose control point strapd can write.
    case trainer
}

public enum Retention: Sendable, Equatable {
    case forever
    case duration(Duration)
}

/// Who an `[access]` entry names, as written; the daemon resolves names to ids.
public enum PrincipalSpec: Sendable, Hashable, CustomStringConvertible {
    case uid(UInt32)
    case user(String)
    case gid(UInt32)
    case group(String)

    public var description: String {
        switch self {
        case .uid(let u): "uid:\(u)"
        case .user(let n): "user:\(n)"
        case .gid(let g): "gid:\(g)"
        case .group(let n): "group:\(n)"
        }
    }
}

/// The sample types `read_types` may name (docs/product.md §3.4, plus workouts).
public let knownSampleTypes: [String] = [
    "heartRate", "heartbeatSeries", "energyExpended", "activeEnergy", "cyclingSpeed",
    "cyclingCadence", "cyclingDistance", "runningSpeed", "runningCadence", "strideLength",
    "runningDistance", "batteryLevel", "sensorContact", "workout",
]
