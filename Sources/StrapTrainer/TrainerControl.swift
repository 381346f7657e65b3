import StrapGATT
import StrapModel

/// The control side of one FTMS trainer (docs/trainer.md): given what the link reports and
/// what the user commands, the Fitness Machine Control Point writes to make, in order, and
/// what to tell the user. Pure: no I/O, the clock passed in (`now`, monotonic milliseconds),
/// writes returned for the caller to perform. Not thread-safe; one owner drives it.
///
/// The rules, in short: control is requested before any target; one request is in flight at a
/// time (the next write only after the previous one's indication); a request with no answer
/// within `timeout` (or whose write failed) is sent again up to `attempts` times in all, then
/// reported; result codes other than success are final for that command; Control Not Permitted
/// makes us request control once more, then reports the trainer as held by another app;
/// "control permission lost" stops us until the user commands again; a disconnect keeps the
/// desired target and a reconnect requests control and sets it again; a release resets the
/// trainer (op 0x01), also on the next connection when it came while disconnected.
public struct TrainerControl: Sendable {
    public struct Configuration: Equatable, Sendable {
        /// How long to wait for a request's indication, ms.
        public var timeout: Millis
        /// Writes of one request in all (the first and its retries) before giving up.
        public var attempts: Int

        public init(timeout: Millis = 3000, attempts: Int = 3) {
            self.timeout = timeout
            self.attempts = max(1, attempts)
        }
    }

    /// Why nothing is being sent although there may be a desired target.
    enum Block: Equatable, Sendable {
        case lost
        case heldByAnotherApp
        case failed(TrainerError)
    }

    struct InFlight: Equatable, Sendable {
        var request: FitnessMachineControlPointRequest
        /// The target this request sets, if it sets one.
        var target: TrainerTarget?
        var attempts: Int
        var deadline: Millis
    }

    public let configuration: Configuration
    public private(set) var connected = false
    /// The last capabilities a connection reported (kept across disconnects to check commands).
    public private(set) var capabilities: TrainerCapabilities?
    /// What the user last asked for; nil after a release or a final refusal.
    public private(set) var desired: TrainerTarget?
    /// What the trainer acknowledged on this connection.
    public private(set) var applied: TrainerTarget?
    /// Request Control acknowledged on this connection (and not lost or reset since).
    public private(set) var hasControl = false
    /// A release not yet carried out (waiting for the link, control or the request in flight).
    public private(set) var releasePending = false
    /// We may have left a target on the trainer: a target write went out and no reset (ours,
    /// or the trainer's) has been seen since. Only then does a release write anything.
    public private(set) var mayHoldTarget: Bool
    var inFlight: InFlight?
    var block: Block?
    /// The one Request Control allowed after a Control Not Permitted was used.
    var controlReRequested = false
    /// When our last reset was acknowledged: the trainer's Machine Status "reset" may follow
    /// its indication rather than precede it (the order is not fixed), and is ours then too.
    var ownResetAcknowledged: Millis?
    /// How long after our reset's acknowledgement a Machine Status "reset" is taken as its echo.
    static let resetEchoWindow: Millis = 2000

    /// `mayHoldTarget`: true when the trainer may still hold a target from an earlier run (a
    /// daemon restarting after a crash), so that a `release` resets it on the next connection.
    public init(configuration: Configuration = Configuration(), mayHoldTarget: Bool = false) {
        self.configuration = configuration
        self.mayHoldTarget = mayHoldTarget
    }

    public var state: TrainerControlState {
        guard connected else { return .disconnected }
        switch block {
        case .lost: return .controlLost
        case .heldByAnotherApp: return .controlHeldByAnotherApp
        case let .failed(e): return .failed(e)
        case nil: break
        }
        if let f = inFlight { return .busy(f.request) }
        if let a = applied { return .holding(a) }
        return .idle
    }

    // MARK: Commands

    /// Sets the target to hold (now, or on the next connection). Refused before any write when
    /// the last reported capabilities cannot carry it; a new command ends a "control lost",
    /// "held by another app" or failed state: the user asked again.
    public mutating func setTarget(_ target: TrainerTarget, now: Millis) throws(TrainerError) -> TrainerStep {
        if let caps = capabilities { _ = try Self.request(for: target, caps) }
        desired = target
        block = nil
        controlReRequested = false
        releasePending = false
        return pump(now: now, alerts: [])
    }

    /// Lets go of the trainer: forgets the desired target and, if we may have left one on the
    /// trainer, resets it (Request Control first if needed). Done now when connected, else on
    /// the next connection. After control was lost to another app there is nothing of ours to
    /// reset, and nothing is written.
    public mutating func release(now: Millis) -> TrainerStep {
        desired = nil
        controlReRequested = false
        switch block {
        case .lost, .heldByAnotherApp:
            block = nil
            return TrainerStep(deadline: inFlight?.deadline)
        case .failed, nil:
            block = nil
        }
        if mayHoldTarget || applied != nil { releasePending = true }
        return pump(now: now, alerts: [])
    }

    // MARK: Events

    public mutating func handle(_ event: TrainerEvent, now: Millis) -> TrainerStep {
        switch event {
        case let .connected(caps):
            connected = true
            capabilities = caps
            hasControl = false
            applied = nil
            inFlight = nil
            controlReRequested = false
            if case .failed = block { block = nil }
            var alerts: [TrainerAlert] = []
            if let d = desired {
                do throws(TrainerError) { _ = try Self.request(for: d, caps) } catch {
                    desired = nil
                    alerts.append(.targetRefusedOnReconnect(error))
                }
            }
            return pump(now: now, alerts: alerts)

        case .disconnected:
            connected = false
            hasControl = false
            applied = nil
            inFlight = nil
            return TrainerStep()

        case .writeCompleted:
            return TrainerStep(deadline: inFlight?.deadline)

        case .writeFailed:
            guard inFlight != nil else { return TrainerStep() }
            return attemptFailed(now: now)

        case .tick:
            guard let f = inFlight else { return TrainerStep() }
            guard now >= f.deadline else { return TrainerStep(deadline: f.deadline) }
            return attemptFailed(now: now)

        case let .indication(response):
            // A response to something no longer in flight (after a timeout gave up, a
            // disconnect, control lost) or to another op code is not ours to act on.
            guard let f = inFlight, response.requestOpCode == f.request.opCode else {
                return TrainerStep(deadline: inFlight?.deadline)
            }
            inFlight = nil
            return answered(f, response, now: now)

        case let .status(status):
            return machineStatus(status, now: now)
        }
    }

    // MARK: Internals

    private mutating func answered(_ f: InFlight, _ response: FitnessMachineControlPointResponse, now: Millis) -> TrainerStep {
        let op = f.request.opCode
        var alerts: [TrainerAlert] = []
        switch response.result {
        case .success:
            switch f.request {
            case .requestControl:
                hasControl = true
            case .reset:
                hasControl = false
                applied = nil
                mayHoldTarget = false
                releasePending = false
                ownResetAcknowledged = now
                alerts.append(.released)
            default:
                if let t = f.target { applied = t }
                controlReRequested = false
            }
        case .controlNotPermitted:
            hasControl = false
            if f.request == .requestControl || controlReRequested {
                block = .heldByAnotherApp
                releasePending = false
                alerts.append(.controlHeldByAnotherApp)
            } else {
                // Ask once more (the trainer may have reset, or our control lapsed); pump
                // writes Request Control, then this request again.
                controlReRequested = true
            }
        case .opCodeNotSupported, .invalidParameter, .operationFailed, nil:
            let error: TrainerError = switch response.result {
            case .opCodeNotSupported: .opCodeNotSupported(opCode: op)
            case .invalidParameter: .invalidParameter(opCode: op)
            case .operationFailed: .operationFailed(opCode: op)
            default: .unknownResult(opCode: op, result: response.rawResult)
            }
            fail(f, error, &alerts)
        }
        return pump(now: now, alerts: alerts)
    }

    /// A request failed for good: no blind retry. A refused target is forgotten (a reconnect
    /// does not send it again); a refused reset leaves nothing more we can do.
    private mutating func fail(_ f: InFlight, _ error: TrainerError, _ alerts: inout [TrainerAlert]) {
        alerts.append(.failed(f.request, error))
        switch f.request {
        case .requestControl, .reset:
            releasePending = false
            block = .failed(error)
        default:
            // A newer command that came while this one was in flight still goes out.
            guard f.target == desired else { return }
            desired = nil
            block = .failed(error)
        }
    }

    private mutating func attemptFailed(now: Millis) -> TrainerStep {
        guard var f = inFlight else { return TrainerStep() }
        if f.attempts < configuration.attempts {
            f.attempts += 1
            f.deadline = now + configuration.timeout
            inFlight = f
            return TrainerStep(write: f.request, deadline: f.deadline)
        }
        inFlight = nil
        // The trainer does not answer: keep the desired target (and a pending release) for
        // the next connection, which is what usually follows; send nothing more on this one.
        let error = TrainerError.noResponse(opCode: f.request.opCode, attempts: f.attempts)
        block = .failed(error)
        return TrainerStep(alerts: [.failed(f.request, error)])
    }

    private mutating func machineStatus(_ status: FitnessMachineStatus, now: Millis) -> TrainerStep {
        switch status {
        case .controlPermissionLost:
            hasControl = false
            applied = nil
            inFlight = nil
            mayHoldTarget = false
            releasePending = false
            block = .lost
            return TrainerStep(alerts: [.controlLost])
        case .reset:
            // Our own reset announces itself too; any other reset dropped our target.
            if inFlight?.request == .reset { return TrainerStep(deadline: inFlight?.deadline) }
            if let t = ownResetAcknowledged, now - t <= Self.resetEchoWindow, applied == nil, inFlight == nil {
                ownResetAcknowledged = nil
                return TrainerStep()
            }
            hasControl = false
            applied = nil
            inFlight = nil
            mayHoldTarget = false
            releasePending = false
            guard desired != nil else { return TrainerStep(alerts: [.trainerReset]) }
            block = .lost
            return TrainerStep(alerts: [.trainerReset])
        default:
            return TrainerStep(deadline: inFlight?.deadline)
        }
    }

    /// The next write, if one is due: nothing while a request is in flight, disconnected or
    /// blocked; else a pending release, else the desired target, each after Request Control.
    private mutating func pump(now: Millis, alerts: [TrainerAlert]) -> TrainerStep {
        var alerts = alerts
        guard connected, inFlight == nil, block == nil else { return TrainerStep(alerts: alerts, deadline: inFlight?.deadline) }
        var next: (FitnessMachineControlPointRequest, TrainerTarget?)?
        if releasePending {
            next = hasControl ? (.reset, nil) : (.requestControl, nil)
        } else if let d = desired, d != applied, let caps = capabilities {
            do throws(TrainerError) {
                let request = try Self.request(for: d, caps)
                if hasControl {
                    next = (request, d)
                    mayHoldTarget = true
                } else {
                    next = (.requestControl, nil)
                }
            } catch {
                desired = nil
                alerts.append(.targetRefusedOnReconnect(error))
            }
        }
        guard let (request, target) = next else { return TrainerStep(alerts: alerts) }
        let f = InFlight(request: request, target: target, attempts: 1, deadline: now + configuration.timeout)
        inFlight = f
        return TrainerStep(write: request, alerts: alerts, deadline: f.deadline)
    }

    /// The control point request for `target`, checked against what the trainer reported:
    /// the Feature's target bits when it was read, the Supported range (which must have been
    /// read for power and resistance) and the wire field.
    public static func request(for target: TrainerTarget, _ caps: TrainerCapabilities) throws(TrainerError) -> FitnessMachineControlPointRequest {
        switch target {
        case let .power(watts):
            guard caps.feature?.powerTargetSupported ?? true, let range = caps.powerRange else { throw .targetNotSupported(.power) }
            do throws(ControlPointValueError) { return try range.targetPower(watts) } catch { throw .outOfRange(error) }
        case let .resistance(level):
            guard caps.feature?.resistanceTargetSupported ?? true, let range = caps.resistanceRange else {
                throw .targetNotSupported(.resistance)
            }
            do throws(ControlPointValueError) { return try range.targetResistanceLevel(level) } catch { throw .outOfRange(error) }
        case let .simulation(parameters):
            guard caps.feature?.indoorBikeSimulationSupported ?? true else { throw .targetNotSupported(.simulation) }
            return .setIndoorBikeSimulationParameters(parameters)
        }
    }
}
