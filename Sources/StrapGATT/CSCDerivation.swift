/// Turns successive CSC Measurements, or the revolution data of Cycling Power Measurements,
/// into speed, cadence and distance (docs/decoding.md#csc-speed-cadence-and-distance-cscderivation).
///
/// Pure and clock-injected: every call takes the packet's receive time (seconds on any
/// monotonic clock the caller chooses). Wheel and crank keep separate baselines because each
/// has its own event time. The rules are the same for both services; only the wheel event
/// time's unit differs (CSC 1/1024 s, Cycling Power 1/2048 s). Feed one derivation from one
/// sensor's packets of one kind.
public struct CSCDerivation: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Metres per wheel revolution (client config; 2.105 m is a 700×25c road wheel).
        public var wheelCircumference: Double
        /// A gap in event time above this is stop-then-restart: re-baseline, compute nothing.
        public var maxEventGap: Double = 10
        /// No new event for max(2 × last Δt, this) seconds of receive time → report 0.
        public var minimumStopTimeout: Double = 3
        /// Plausibility gates: beyond these a value is a glitch (null + warning), not a reading.
        public var maxCadence: Double = 250
        public var maxSpeed: Double = 30
        /// A wheel count that steps back by at most this many revolutions is reverse motion;
        /// a larger step back is a reset or reconnect.
        public var reverseMotionWindow: UInt32 = 16

        public init(wheelCircumference: Double = 2.105) { self.wheelCircumference = wheelCircumference }
    }

    public struct Warnings: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let implausibleSpeed = Warnings(rawValue: 1 << 0)
        public static let implausibleCadence = Warnings(rawValue: 1 << 1)
        /// Event times too far apart (> maxEventGap) or > 64 s of wall clock: Δt is ambiguous.
        public static let rebaselined = Warnings(rawValue: 1 << 2)
        public static let reverseMotion = Warnings(rawValue: 1 << 3)
        public static let counterReset = Warnings(rawValue: 1 << 4)

        public var names: [String] {
            var out: [String] = []
            if contains(.implausibleSpeed) { out.append("implausibleSpeed") }
            if contains(.implausibleCadence) { out.append("implausibleCadence") }
            if contains(.rebaselined) { out.append("rebaselined") }
            if contains(.reverseMotion) { out.append("reverseMotion") }
            if contains(.counterReset) { out.append("counterReset") }
            return out
        }
    }

    /// What one packet yields. nil where the packet cannot say (a baseline, no such data, a glitch).
    public struct Output: Sendable, Equatable {
        public var speed: Double?
        public var cadence: Double?
        /// Metres since the derivation started (nil until the wheel has a baseline).
        public var distance: Double?
        /// Metres this packet added.
        public var distanceDelta: Double
        public var warnings: Warnings
    }

    /// One event-time channel (wheel or crank) with its own baseline and hold/decay state.
    struct Channel: Sendable {
        var revolutions: UInt32 = 0
        var eventTime: UInt16 = 0
        var receivedAt: Double = 0
        var hasBaseline = false
        /// The last computed rate and when its event was first seen.
        var lastRate: Double?
        var lastEventSeconds: Double = 0
        var lastNewEventAt: Double = 0

        mutating func rebaseline(revolutions: UInt32, eventTime: UInt16, at time: Double) {
            self.revolutions = revolutions
            self.eventTime = eventTime
            receivedAt = time
            lastNewEventAt = time
            hasBaseline = true
        }
    }

    public var configuration: Configuration
    var wheel = Channel()
    var crank = Channel()
    public private(set) var totalDistance: Double = 0
    var wheelSeen = false

    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// Forget both baselines: the next packet is a baseline (call after every reconnect).
    public mutating func reset() {
        wheel = Channel()
        crank = Channel()
    }

    public mutating func update(_ m: CSCMeasurement, receivedAt now: Double) -> Output {
        update(wheelRevolutions: m.wheel?.revolutions, wheelEventTime: m.wheel?.eventTime ?? 0,
               wheelTicksPerSecond: 1024, crank: m.crank, receivedAt: now)
    }

    /// The step both services share: wheel data (if `wheelRevolutions` is non-nil) in
    /// `wheelTicksPerSecond` ticks, crank data in 1/1024 s.
    mutating func update(wheelRevolutions: UInt32?, wheelEventTime: UInt16, wheelTicksPerSecond: Double,
                         crank: CSCMeasurement.CrankData?, receivedAt now: Double) -> Output {
        var out = Output(speed: nil, cadence: nil, distance: wheelSeen ? totalDistance : nil,
                         distanceDelta: 0, warnings: [])
        if let revolutions = wheelRevolutions {
            // The very first wheel packet is only a baseline: no distance to report yet.
            defer { wheelSeen = true }
            let (rate, revs) = step(&wheel, revolutions: revolutions, modulus: 1 << 32, eventTime: wheelEventTime,
                                    ticksPerSecond: wheelTicksPerSecond, now: now,
                                    unitPerRevolution: configuration.wheelCircumference,
                                    gate: configuration.maxSpeed, reverse: true, warnings: &out.warnings)
            out.speed = rate
            if revs > 0 {
                let delta = Double(revs) * configuration.wheelCircumference
                totalDistance += delta
                out.distanceDelta = delta
            }
            out.distance = wheelSeen ? totalDistance : nil
        }
        if let c = crank {
            out.cadence = step(&self.crank, revolutions: UInt32(c.revolutions), modulus: 1 << 16, eventTime: c.eventTime,
                               ticksPerSecond: 1024, now: now, unitPerRevolution: 60, gate: configuration.maxCadence,
                               reverse: false, warnings: &out.warnings).rate
        }
        return out
    }

    /// Advances one channel; returns the rate (per second × unitPerRevolution) and the
    /// revolutions that count toward distance.
    private func step(_ ch: inout Channel, revolutions: UInt32, modulus: UInt64, eventTime: UInt16,
                      ticksPerSecond: Double, now: Double,
                      unitPerRevolution: Double, gate: Double, reverse: Bool,
                      warnings: inout Warnings) -> (rate: Double?, revolutions: UInt32) {
        guard ch.hasBaseline else {
            ch.rebaseline(revolutions: revolutions, eventTime: eventTime, at: now)
            return (nil, 0)
        }
        // Beyond one event-time period of wall clock (64 s at 1/1024 s, 32 s at 1/2048 s) the
        // 16-bit event time may have wrapped more than once.
        if now - ch.receivedAt > 65536 / ticksPerSecond {
            warnings.insert(.rebaselined)
            ch.lastRate = nil
            ch.rebaseline(revolutions: revolutions, eventTime: eventTime, at: now)
            return (nil, 0)
        }
        let ticks = eventTime &- ch.eventTime                  // mod 65536, never 65535
        if ticks == 0 {
            ch.receivedAt = now
            // A repeated event time is no new measurement: hold, bounded by "no revolution can
            // have happened since the last event", and report 0 once the stop timeout passes.
            guard let last = ch.lastRate else { return (nil, 0) }
            let waited = now - ch.lastNewEventAt
            if waited >= max(2 * ch.lastEventSeconds, configuration.minimumStopTimeout) {
                ch.lastRate = 0
                return (0, 0)
            }
            return (waited > 0 ? min(last, unitPerRevolution / waited) : last, 0)
        }
        // A stop longer than one event-time period, with packets repeating the old event time
        // all along: Δt mod 2¹⁶ is ambiguous even though packets kept arriving.
        if now - ch.lastNewEventAt > 65536 / ticksPerSecond {
            warnings.insert(.rebaselined)
            ch.lastRate = nil
            ch.rebaseline(revolutions: revolutions, eventTime: eventTime, at: now)
            return (nil, 0)
        }
        let seconds = Double(ticks) / ticksPerSecond
        let rawDelta = (UInt64(revolutions) &+ modulus &- UInt64(ch.revolutions)) % modulus
        if reverse, modulus - rawDelta <= UInt64(configuration.reverseMotionWindow) {
            warnings.insert(.reverseMotion)
            ch.lastRate = 0
            ch.rebaseline(revolutions: revolutions, eventTime: eventTime, at: now)
            ch.lastEventSeconds = seconds
            return (0, 0)
        }
        if seconds > configuration.maxEventGap {
            warnings.insert(.rebaselined)
            ch.lastRate = nil
            ch.rebaseline(revolutions: revolutions, eventTime: eventTime, at: now)
            return (nil, 0)
        }
        let rate = Double(rawDelta) * unitPerRevolution / seconds
        ch.rebaseline(revolutions: revolutions, eventTime: eventTime, at: now)
        ch.lastEventSeconds = seconds
        if rate > gate {
            // A jump this large is a glitch or a counter reset: never add it to distance.
            warnings.insert(unitPerRevolution == 60 ? .implausibleCadence : .implausibleSpeed)
            if rawDelta > UInt64(gate * seconds * 4 / unitPerRevolution) + 1 { warnings.insert(.counterReset) }
            ch.lastRate = nil
            return (nil, 0)
        }
        ch.lastRate = rate
        return (rate, UInt32(rawDelta))
    }
}
