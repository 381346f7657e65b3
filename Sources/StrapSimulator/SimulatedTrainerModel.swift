import Glibc
import StrapGATT

/// The inside of a simulated FTMS indoor bike (docs/operations.md#a-simulated-trainer): what it
/// answers on its Fitness Machine Control Point and the power its brake lets through. A plain
/// value, deterministic given its seed and the times it is called with: `SimulatedTrainer`
/// shares one between the simulation's thread and the device service's writes.
public struct SimulatedTrainerModel: Sendable {
    /// What the brake is asked to hold. One at a time, as a trainer's modes are.
    public enum Target: Sendable, Equatable {
        case power(Int16)
        /// 1/10, unitless, as the control point carries it.
        case resistance(UInt8)
        case simulation(IndoorBikeSimulationParameters)
    }

    /// What a control point write produced: the indication, then the Machine Status
    /// notifications it caused, in the order the trainer sends them.
    public struct Answer: Sendable, Equatable {
        public var indication: [UInt8]
        public var statuses: [[UInt8]]
    }

    public static let feature = FitnessMachineFeature(
        // Cadence (bit 1) and power measurement (bit 14); speed needs no bit.
        machineFeatures: 1 << 1 | 1 << 14,
        // Resistance target (2), power target (3), indoor bike simulation (13).
        targetSettingFeatures: 1 << 2 | 1 << 3 | 1 << 13)
    public static let powerRange = SupportedRange(minimum: 0, maximum: 2000, increment: 1)
    /// 0.0–20.0 in steps of 1.0 (fields in 1/10): the one-octet control point field reaches 25.5.
    public static let resistanceRange = SupportedRange(minimum: 0, maximum: 200, increment: 10)
    /// Grades beyond ±40 % are refused (1/100 %): FTMS gives simulation no range characteristic.
    public static let gradeLimit: Int16 = 4000
    /// The brake's response to a new target: first order, this time constant (s). Trainers'
    /// flywheels and eddy-current or motor brakes reach a new ERG target over a few seconds
    /// (roughly 1–3 s to settle within a few watts at a steady cadence); 1.5 s is the middle.
    public static let brakeTimeConstant = 1.5
    /// What the simulated rider puts out when nothing is asked of the brake.
    public static let riderPower = 150.0

    public private(set) var connected = true
    public private(set) var controlled = false
    public private(set) var target: Target?
    /// Stop or Pause (0x08) until Start or Resume (0x07): the brake lets go of the target.
    public private(set) var paused = false
    /// The power the brake currently passes, before measurement noise, and when (simulation s).
    public private(set) var power: Double
    public private(set) var time = 0.0
    /// Counts link drops: an answer computed before a drop is not delivered after it.
    public private(set) var connection = 0
    var rng: SimulationRandom

    public init(seed: UInt64) {
        rng = SimulationRandom(seed: seed)
        power = Self.riderPower
    }

    /// The power the brake is heading for.
    public var goal: Double {
        guard !paused, let target else { return Self.riderPower }
        switch target {
        case let .power(watts): return Double(watts)
        // A stand-in curve at a steady cadence: 60 W at level 0, 20 W more per level.
        case let .resistance(tenths): return 60 + 2 * Double(tenths)
        // The rider keeps pedalling; a climb makes it harder (10 W per % of grade), never below 50 W.
        case let .simulation(p): return max(50, Self.riderPower + 0.1 * Double(p.grade))
        }
    }

    /// Moves the brake's power towards its goal up to `t` (earlier times change nothing).
    public mutating func advance(to t: Double) {
        guard t > time else { return }
        power += (goal - power) * (1 - exp(-(t - time) / Self.brakeTimeConstant))
        time = t
    }

    /// What Indoor Bike Data reports at `t`: the brake's power with ±2 % measurement noise, a
    /// cadence near 90 rpm, and the speed a 75 kg rider would ride on a flat road at that power.
    public mutating func measurement(at t: Double) -> IndoorBikeData {
        advance(to: t)
        let watts = max(0, power * (1 + rng.uniform(-0.02, 0.02)))
        let cadence = 90 + rng.uniform(-2, 2)
        return IndoorBikeData(instantaneousSpeed: UInt16((Self.flatSpeed(watts: watts) * 3.6 * 100).rounded()),
                              instantaneousCadence: UInt16((cadence * 2).rounded()),
                              instantaneousPower: Int16(watts.rounded()))
    }

    /// m/s where rolling resistance (Crr 0.004, 83 kg with the bike) and air (CdA 0.32 m²,
    /// 1.2 kg/m³) take `watts`: the root of a monotonic cubic, by bisection.
    static func flatSpeed(watts: Double) -> Double {
        var low = 0.0, high = 30.0
        for _ in 0..<40 {
            let v = (low + high) / 2
            if 0.004 * 83 * 9.81 * v + 0.5 * 1.2 * 0.32 * v * v * v < watts { low = v } else { high = v }
        }
        return low
    }

    /// The link went down (a dropout, or `devices.disconnect`): control is gone, and so is the
    /// target. Real trainers differ on the target; this one takes the pessimistic side, so a
    /// controller must request control and set the target again after every reconnect.
    public mutating func linkDropped(at t: Double) {
        advance(to: t)
        connected = false
        controlled = false
        target = nil
        paused = false
        connection += 1
    }

    public mutating func linkRestored(at t: Double) {
        advance(to: t)
        connected = true
    }

    /// Answers a control point write at `t` as the trainer would. Nil for an empty write (no
    /// op code to answer); the caller reports that as a failed write.
    public mutating func write(_ bytes: [UInt8], at t: Double) -> Answer? {
        guard let op = bytes.first else { return nil }
        advance(to: t)
        typealias Result = FitnessMachineControlPointResponse.Result
        func answer(_ result: Result, _ statuses: [FitnessMachineStatus] = []) -> Answer {
            Answer(indication: FitnessMachineControlPointResponse(requestOpCode: op, result: result).encoded(),
                   statuses: statuses.map { $0.encoded() })
        }
        let request: FitnessMachineControlPointRequest
        do throws(GATTDecodingError) { request = try FitnessMachineControlPointRequest.decode(bytes) } catch {
            if case .unknownOpCode = error { return answer(.opCodeNotSupported) }
            return answer(.invalidParameter)        // a known op code with the wrong parameter length
        }
        switch request {
        case .requestControl:
            controlled = true
            return answer(.success)
        case .setTargetSpeed, .setTargetInclination, .setTargetHeartRate, .setWheelCircumference,
             .spinDownControl, .setTargetedCadence:
            return answer(.opCodeNotSupported)      // Feature bits clear: this bike has none of them
        default:
            break
        }
        // Every other procedure belongs to the client that requested control (FTMS 4.16.2).
        guard controlled else { return answer(.controlNotPermitted) }
        switch request {
        case .reset:
            controlled = false
            target = nil
            paused = false
            return answer(.success, [.reset])
        case let .setTargetPower(watts):
            guard watts >= Self.powerRange.minimum && watts <= Self.powerRange.maximum else { return answer(.invalidParameter) }
            target = .power(watts)
            return answer(.success, [.targetPowerChanged(watts)])
        case let .setTargetResistanceLevel(tenths):
            guard Int16(tenths) >= Self.resistanceRange.minimum && Int16(tenths) <= Self.resistanceRange.maximum else {
                return answer(.invalidParameter)
            }
            target = .resistance(tenths)
            return answer(.success, [.targetResistanceLevelChanged(tenths)])
        case let .setIndoorBikeSimulationParameters(p):
            guard abs(Int(p.grade)) <= Int(Self.gradeLimit) else { return answer(.invalidParameter) }
            target = .simulation(p)
            return answer(.success, [.indoorBikeSimulationParametersChanged(p)])
        case .startOrResume:
            defer { paused = false }
            return answer(.success, paused ? [.startedOrResumedByUser] : [])
        case let .stopOrPause(how):
            defer { paused = true }
            return answer(.success, paused ? [] : [.stoppedOrPausedByUser(how.rawValue)])
        default:
            return answer(.opCodeNotSupported)      // handled above; kept for exhaustiveness
        }
    }
}
