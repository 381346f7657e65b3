import StrapGATT
import StrapModel

/// What the caller wants the trainer to do (docs/trainer.md). Values are in the user's units;
/// `TrainerControl` checks them against the trainer's Supported ranges and turns them into
/// control point requests.
public enum TrainerTarget: Equatable, Sendable {
    /// ERG: hold this power (W), whatever the cadence.
    case power(watts: Double)
    /// A resistance level (unitless, e.g. 12.5; the wire carries tenths).
    case resistance(level: Double)
    /// Simulation: wind, grade, Crr and Cw, already in the wire's resolutions.
    case simulation(IndoorBikeSimulationParameters)
}

/// What the trainer said it can do, read after connecting: the Fitness Machine Feature and
/// the Supported Power / Resistance Level ranges. A range that was not read (nil) means that
/// kind of target cannot be checked, and so is refused.
public struct TrainerCapabilities: Equatable, Sendable {
    public var feature: FitnessMachineFeature?
    public var powerRange: SupportedRange?
    public var resistanceRange: SupportedRange?

    public init(feature: FitnessMachineFeature? = nil, powerRange: SupportedRange? = nil, resistanceRange: SupportedRange? = nil) {
        self.feature = feature
        self.powerRange = powerRange
        self.resistanceRange = resistanceRange
    }
}

/// Why a target was not (or could not be) set. Each is final for the command that caused it:
/// nothing here is retried on its own.
public enum TrainerError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case power, resistance, simulation }

    /// Outside the Supported range or the wire field: refused before any write.
    case outOfRange(ControlPointValueError)
    /// The trainer does not offer this kind of target (Feature bit clear, or no range read).
    case targetNotSupported(Kind)
    /// Result code 0x02 for this request op code.
    case opCodeNotSupported(opCode: UInt8)
    /// Result code 0x03.
    case invalidParameter(opCode: UInt8)
    /// Result code 0x04.
    case operationFailed(opCode: UInt8)
    /// A reserved result code (0x00, 0x06…0xFF).
    case unknownResult(opCode: UInt8, result: UInt8)
    /// No indication (or the write itself failed) after every attempt.
    case noResponse(opCode: UInt8, attempts: Int)

    public var description: String {
        switch self {
        case let .outOfRange(e): "target refused: \(e)"
        case let .targetNotSupported(k): "the trainer does not support a \(k.rawValue) target"
        case let .opCodeNotSupported(op): "the trainer does not support control point op code \(hex(op))"
        case let .invalidParameter(op): "the trainer refused the parameter of op code \(hex(op)) (invalid parameter)"
        case let .operationFailed(op): "the trainer could not carry out op code \(hex(op)) (operation failed)"
        case let .unknownResult(op, r): "the trainer answered op code \(hex(op)) with reserved result code \(hex(r))"
        case let .noResponse(op, n): "no answer from the trainer to op code \(hex(op)) after \(n) attempts"
        }
    }

    private func hex(_ v: UInt8) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }
}

/// Something the user should hear about, returned with the step that caused it.
public enum TrainerAlert: Equatable, Sendable {
    /// Machine Status "control permission lost" (0xFF): another client took the trainer.
    case controlLost
    /// Control Not Permitted even after requesting control again: another app holds it.
    case controlHeldByAnotherApp
    /// A request failed for good (result code, or no response within the retry bound).
    case failed(FitnessMachineControlPointRequest, TrainerError)
    /// The desired target no longer fits the ranges the trainer reported on reconnecting.
    case targetRefusedOnReconnect(TrainerError)
    /// Machine Status "reset" not caused by us: the trainer dropped every target.
    case trainerReset
    /// Reset (op 0x01) acknowledged: the trainer holds no target of ours.
    case released
}

/// What the caller shows: one value, derived from the controller's fields.
public enum TrainerControlState: Equatable, Sendable {
    case disconnected
    /// Connected, holding no target of ours and with nothing to send.
    case idle
    /// A request is in flight (control, a target or reset).
    case busy(FitnessMachineControlPointRequest)
    /// The trainer acknowledged this target.
    case holding(TrainerTarget)
    /// Control permission lost; nothing is sent until the user commands again.
    case controlLost
    case controlHeldByAnotherApp
    /// The last command failed for good; a new command (or, for `noResponse`, a reconnect) clears it.
    case failed(TrainerError)
}

/// Inputs from the GATT link.
public enum TrainerEvent: Equatable, Sendable {
    /// Connected, the control point's indications and the status notifications enabled,
    /// the Feature and ranges read.
    case connected(TrainerCapabilities)
    case disconnected
    /// A Fitness Machine Control Point indication.
    case indication(FitnessMachineControlPointResponse)
    /// A Fitness Machine Status notification.
    case status(FitnessMachineStatus)
    /// The ATT write of the request in flight was acknowledged (the indication comes after).
    case writeCompleted
    /// The ATT write failed: counts as an attempt, like a timeout.
    case writeFailed
    /// Time passed (the caller's timer); deadlines are checked against the step's `now`.
    case tick
}

/// The result of one step: at most one write (one request in flight at a time) and the alerts.
public struct TrainerStep: Equatable, Sendable {
    public var write: FitnessMachineControlPointRequest?
    public var alerts: [TrainerAlert]
    /// When to call again with `.tick` if nothing else happens (the in-flight deadline), ms.
    public var deadline: Millis?

    public init(write: FitnessMachineControlPointRequest? = nil, alerts: [TrainerAlert] = [], deadline: Millis? = nil) {
        self.write = write
        self.alerts = alerts
        self.deadline = deadline
    }
}
