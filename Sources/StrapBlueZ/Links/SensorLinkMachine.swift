import StrapDBus

/// Where a sensor link is. Pure value; the D-Bus adapter (SensorLink) drives it.
public enum LinkPhase: Sendable, Equatable, CustomStringConvertible {
    case idle
    /// No usable device object (never seen, removed, adapter off or gone, bluetoothd absent).
    case waitingForDevice
    case connecting(attempt: Int)
    /// Connected; waiting for the characteristic objects we need, not just ServicesResolved.
    case resolving
    case subscribing
    case streaming
    /// We asked BlueZ to disconnect; `clearCache` removes an unbonded device afterwards.
    case disconnecting(clearCache: Bool)
    case backingOff(attempt: Int, until: UInt64)

    /// Connecting or connected: the link holds (or is getting) one of its adapter's few
    /// connection slots.
    public var occupiesAdapter: Bool {
        switch self {
        case .connecting, .resolving, .subscribing, .streaming: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .idle: "idle"
        case .waitingForDevice: "waiting-for-device"
        case .connecting(let n): "connecting(#\(n))"
        case .resolving: "resolving"
        case .subscribing: "subscribing"
        case .streaming: "streaming"
        case .disconnecting(let clear): clear ? "disconnecting(clear-cache)" : "disconnecting"
        case .backingOff(let n, _): "backing-off(#\(n))"
        }
    }
}

public enum LinkInput: Sendable, Equatable {
    case start
    case stop
    /// The device object exists on a powered adapter (or stopped doing so).
    case deviceAvailable(Bool)
    case connectFinished(error: FailureClass?, detail: String)
    case connectionChanged(connected: Bool)
    /// Every characteristic the link needs is exported.
    case characteristicsReady
    case subscribeFinished(error: String?)
    /// BlueZ closed a notification fd (or stopped notifying) while the link stayed up.
    case notificationsStopped
    case disconnectFinished
    case timer
}

public enum LinkCommand: Sendable, Equatable {
    case connect
    case disconnect
    case removeDevice
    /// Attach handlers, then enable notifications.
    case subscribe
    /// Drop handlers and fds of a link that is gone.
    case dropSubscriptions
    case readDeviceInformation
    case setTimer(deadline: UInt64)
    case cancelTimer
    case wantDiscovery(Bool)
    case log(BlueZLogLevel, String)
}

public struct LinkTimeouts: Sendable, Equatable {
    /// Nanoseconds allowed for Connect before giving up on the attempt.
    public var connect: UInt64
    /// Nanoseconds to wait for the characteristic objects after connecting.
    public var resolve: UInt64
    public var subscribe: UInt64
    public var disconnect: UInt64

    public init(connect: UInt64 = 30_000_000_000, resolve: UInt64 = 10_000_000_000,
                subscribe: UInt64 = 10_000_000_000, disconnect: UInt64 = 5_000_000_000) {
        self.connect = connect
        self.resolve = resolve
        self.subscribe = subscribe
        self.disconnect = disconnect
    }
}

/// The per-device connection state machine: clock-injected (every input carries `now`,
/// monotonic nanoseconds) and free of I/O, so it is tested without D-Bus.
public struct SensorLinkMachine: Sendable {
    public private(set) var phase: LinkPhase = .idle
    public private(set) var failures = 0
    public var bonded = false
    private var available = false
    private var connected = false
    private let policy: BackoffPolicy
    private let timeouts: LinkTimeouts
    private var random: @Sendable () -> Double

    public init(policy: BackoffPolicy, timeouts: LinkTimeouts = LinkTimeouts(),
                random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }) {
        self.policy = policy
        self.timeouts = timeouts
        self.random = random
    }

    public var isStarted: Bool { phase != .idle }

    public mutating func handle(_ input: LinkInput, now: UInt64) -> [LinkCommand] {
        switch input {
        case .start:
            guard phase == .idle else { return [] }
            return available ? connect(now) : waitForDevice()
        case .stop:
            let wasConnected = connected
            phase = .idle
            failures = 0
            return [.cancelTimer, .dropSubscriptions, .wantDiscovery(false)] + (wasConnected ? [.disconnect] : [])
        case .deviceAvailable(let isAvailable):
            available = isAvailable
            guard phase != .idle else { return [] }
            if !isAvailable {
                if case .disconnecting = phase { return [] }
                connected = false
                return [.log(.notice, "device object unavailable in phase \(phase)"), .cancelTimer, .dropSubscriptions] + waitForDevice()
            }
            if phase == .waitingForDevice { return [.wantDiscovery(false)] + connect(now) }
            return []
        case .connectFinished(let error, let detail):
            guard case .connecting = phase else { return [] }
            guard let error, error != .alreadyConnected else { return resolve(now) }
            return failed(error, "connect failed: \(detail)", now)
        case .connectionChanged(let isConnected):
            let was = connected
            connected = isConnected
            if isConnected && !was {
                // BlueZ connected on its own (GattProfile1 auto-connect): take the link over.
                switch phase {
                case .waitingForDevice, .backingOff: return [.cancelTimer] + resolve(now)
                default: return []
                }
            }
            guard !isConnected && was else { return [] }
            switch phase {
            case .resolving, .subscribing, .streaming:
                let streamed = phase == .streaming
                if streamed { failures = 0 }
                // The driver has already logged the disconnect with BlueZ's reason.
                return [.dropSubscriptions] + failed(.other, "link lost while \(streamed ? "streaming" : "setting up")", now)
            case .disconnecting, .idle:
                return []
            default:
                return []
            }
        case .characteristicsReady:
            guard phase == .resolving else { return [] }
            phase = .subscribing
            return [.cancelTimer, .setTimer(deadline: now + timeouts.subscribe), .subscribe]
        case .subscribeFinished(let error):
            guard phase == .subscribing else { return [] }
            if let error {
                phase = .disconnecting(clearCache: false)
                return [.log(.warning, "subscribing failed: \(error)"), .dropSubscriptions, .cancelTimer,
                        .setTimer(deadline: now + timeouts.disconnect), .disconnect]
            }
            phase = .streaming
            failures = 0
            return [.cancelTimer, .log(.info, "streaming"), .readDeviceInformation]
        case .notificationsStopped:
            guard phase == .streaming, connected else { return [] }
            phase = .subscribing
            return [.log(.warning, "notifications stopped while connected; subscribing again"), .dropSubscriptions,
                    .setTimer(deadline: now + timeouts.subscribe), .subscribe]
        case .disconnectFinished:
            guard case .disconnecting(let clearCache) = phase else { return [] }
            return afterDisconnect(clearCache: clearCache, now)
        case .timer:
            return timerFired(now)
        }
    }

    private mutating func waitForDevice() -> [LinkCommand] {
        phase = .waitingForDevice
        return [.wantDiscovery(true)]
    }

    private mutating func connect(_ now: UInt64) -> [LinkCommand] {
        if connected { return resolve(now) }
        let attempt = failures + 1
        phase = .connecting(attempt: attempt)
        return [.setTimer(deadline: now + timeouts.connect), .connect]
    }

    private mutating func resolve(_ now: UInt64) -> [LinkCommand] {
        connected = true
        phase = .resolving
        // The driver answers with .characteristicsReady at once if the objects already exist.
        return [.cancelTimer, .setTimer(deadline: now + timeouts.resolve)]
    }

    private mutating func failed(_ error: FailureClass, _ why: String, _ now: UInt64) -> [LinkCommand] {
        failures += 1
        switch error {
        case .deviceMissing:
            return [.log(.warning, "\(why); rediscovering"), .cancelTimer] + waitForDevice()
        default:
            let seconds: Double
            switch error {
            case .transient: seconds = policy.jittered(policy.transient, unit: random())
            case .outOfSlots: seconds = policy.jittered(policy.outOfSlots, unit: random())
            default: seconds = policy.jittered(policy.nominal(attempt: failures), unit: random())
            }
            let until = now + UInt64(seconds * 1_000_000_000)
            phase = .backingOff(attempt: failures, until: until)
            return [.log(.notice, "\(why) (\(error)); retry #\(failures) in \(seconds.formatted) s"),
                    .cancelTimer, .setTimer(deadline: until)]
        }
    }

    private mutating func afterDisconnect(clearCache: Bool, _ now: UInt64) -> [LinkCommand] {
        connected = false
        if clearCache && !bonded {
            // The device reappears through discovery with a fresh GATT cache.
            failures += 1
            phase = .waitingForDevice
            return [.cancelTimer, .log(.notice, "removing unbonded device to clear its GATT cache"), .removeDevice, .wantDiscovery(true)]
        }
        return failed(.other, clearCache ? "bonded device kept after missing characteristics" : "disconnected", now)
    }

    private mutating func timerFired(_ now: UInt64) -> [LinkCommand] {
        switch phase {
        case .connecting:
            phase = .disconnecting(clearCache: false)
            return [.log(.warning, "connect timed out"), .setTimer(deadline: now + timeouts.disconnect), .disconnect]
        case .resolving:
            // bluez#1489 / stale cache: connected but the characteristics never appeared.
            phase = .disconnecting(clearCache: true)
            return [.log(.warning, "characteristics missing after connect; disconnecting to clear the cache"),
                    .setTimer(deadline: now + timeouts.disconnect), .disconnect]
        case .subscribing:
            phase = .disconnecting(clearCache: false)
            return [.log(.warning, "subscribing timed out"), .dropSubscriptions,
                    .setTimer(deadline: now + timeouts.disconnect), .disconnect]
        case .disconnecting(let clearCache):
            return afterDisconnect(clearCache: clearCache, now)
        case .backingOff:
            return available ? connect(now) : waitForDevice()
        case .idle, .waitingForDevice, .streaming:
            return []
        }
    }
}
