import Dispatch
import FoundationEssentials
import Glibc
import StrapGATT
import StrapIngest
import StrapModel
import StrapTrainer

/// Who set a trainer's target: a client (`trainer.set`) or a session riding a plan.
public enum TrainerOwner: Equatable, Sendable {
    case user
    case session(UUID)
}

/// One trainer as `trainer.status` reports it.
public struct TrainerStatus: Equatable, Sendable {
    public var device: SensorAddress
    public var state: TrainerControlState
    /// What strapd wants the trainer to hold (sent now, or on the next connection).
    public var desired: TrainerTarget?
    public var owner: TrainerOwner?
    public var capabilities: TrainerCapabilities?
    /// The latest alerts, oldest first (at most `TrainerService.keptAlerts`).
    public var alerts: [String]
}

/// The daemon's side of smart trainers (docs/trainer.md): one `TrainerControl` per trainer,
/// fed with what the source delivers on the trainer's control path (through the pipeline's
/// tap) and with commands from clients and from sessions riding a plan; its writes go out
/// through the device service, its deadlines through a timer. Everything on `queue`.
///
/// A device is a trainer once it has reported a Fitness Machine Feature, a Supported Power
/// Range or a control point indication. While strapd may have left a target on a trainer, its
/// address is in the held-targets file, so a restart after a crash resets it on connection.
public final class TrainerService: @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd.trainer")
    private let devices: any DeviceService
    /// Monotonic milliseconds: `TrainerControl`'s deadlines.
    private let clock: @Sendable () -> Millis
    private let held: HeldTargetsFile?
    private let log: @Sendable (String) -> Void
    /// How long after a link comes up to wait for the Supported Power Range before the
    /// controller is told it is connected with what was read on an earlier connection.
    let capabilityWait: DispatchTimeInterval
    static let keptAlerts = 8

    final class Entry {
        var control: TrainerControl
        var capabilities = TrainerCapabilities()
        var owner: TrainerOwner?
        /// Told `.connected` on this link.
        var connected = false
        var connectWait: DispatchWorkItem?
        var tick: DispatchWorkItem?
        var alerts: [String] = []
        init(_ control: TrainerControl) { self.control = control }
    }
    private var trainers: [SensorAddress: Entry] = [:]
    private var linksUp: Set<SensorAddress> = []

    public init(devices: any DeviceService, heldTargetsFile: String? = nil,
                clock: @escaping @Sendable () -> Millis = { Millis(ReceiveTime.now().monotonic * 1000) },
                capabilityWait: DispatchTimeInterval = .milliseconds(1500),
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.devices = devices
        self.clock = clock
        self.capabilityWait = capabilityWait
        self.log = log
        held = heldTargetsFile.map { HeldTargetsFile(path: $0, log: log) }
        // Trainers a previous run may have left holding a target (it stopped without
        // resetting them: a crash, a power cut): reset on their next connection.
        for address in held?.load() ?? [] {
            let e = Entry(TrainerControl(mayHoldTarget: true))
            _ = e.control.release(now: clock())
            e.alerts.append("may hold a target from before strapd restarted: it is reset on connection")
            trainers[address] = e
            log("trainer \(address): may hold a target from before the restart; resetting it on connection")
        }
    }

    // MARK: Events from the source (the pipeline's tap)

    /// Control point indications, Machine Status, the Feature and ranges read, link changes.
    public func observe(_ event: SensorEvent) {
        queue.async { [self] in handle(event) }
    }

    private func handle(_ event: SensorEvent) {
        dispatchPrecondition(condition: .onQueue(queue))
        let a = event.address
        switch event {
        case .linkUp:
            linksUp.insert(a)
            guard let e = trainers[a] else { return }
            e.connected = false
            awaitCapabilities(a, e)
        case .linkDown:
            linksUp.remove(a)
            guard let e = trainers[a] else { return }
            e.connectWait?.cancel()
            e.connected = false
            run(a, e, e.control.handle(.disconnected, now: clock()))
        case let .read(_, characteristic, value, _):
            let e = entry(a)
            do throws(GATTDecodingError) {
                switch characteristic {
                case .fitnessMachineFeature: e.capabilities.feature = try FitnessMachineFeature.decode(value)
                case .supportedPowerRange: e.capabilities.powerRange = try SupportedRange.decode(characteristic, value)
                case .supportedResistanceLevelRange: e.capabilities.resistanceRange = try SupportedRange.decode(characteristic, value)
                default: return
                }
            } catch {
                log("trainer \(a): \(characteristic.name) unreadable: \(error)")
            }
            if characteristic == .supportedPowerRange, linksUp.contains(a), !e.connected { connect(a, e) }
            else if linksUp.contains(a), !e.connected, e.connectWait == nil { awaitCapabilities(a, e) }
        case let .notification(_, characteristic, value, _):
            let e = entry(a)
            if linksUp.contains(a), !e.connected { connect(a, e) }
            do throws(GATTDecodingError) {
                switch characteristic {
                case .fitnessMachineControlPoint:
                    run(a, e, e.control.handle(.indication(try FitnessMachineControlPointResponse.decode(value)), now: clock()))
                case .fitnessMachineStatus:
                    run(a, e, e.control.handle(.status(try FitnessMachineStatus.decode(value)), now: clock()))
                default: return
                }
            } catch {
                log("trainer \(a): \(characteristic.name) undecodable: \(error)")
            }
        }
    }

    private func entry(_ a: SensorAddress) -> Entry {
        if let e = trainers[a] { return e }
        let e = Entry(TrainerControl())
        trainers[a] = e
        return e
    }

    /// Waits a moment for this connection's ranges; connects with what is known meanwhile.
    private func awaitCapabilities(_ a: SensorAddress, _ e: Entry) {
        e.connectWait?.cancel()
        let item = DispatchWorkItem { [weak self, weak e] in
            guard let self, let e, self.linksUp.contains(a), !e.connected else { return }
            self.connect(a, e)
        }
        e.connectWait = item
        queue.asyncAfter(deadline: .now() + capabilityWait, execute: item)
    }

    private func connect(_ a: SensorAddress, _ e: Entry) {
        e.connectWait?.cancel()
        e.connectWait = nil
        e.connected = true
        run(a, e, e.control.handle(.connected(e.capabilities), now: clock()))
    }

    // MARK: Commands

    /// Sets `target` on `device` (the only trainer when nil) for `owner`. A trainer a session
    /// drives refuses a client's target (`busy`): end the session, or ride it.
    public func set(_ target: TrainerTarget, device: SensorAddress?, owner: TrainerOwner) throws(StrapError) -> TrainerStatus {
        try queue.sync { () -> Result<TrainerStatus, StrapError> in
            Result { () throws(StrapError) -> TrainerStatus in
                let a = try resolve(device)
                let e = trainers[a]!
                if case .session(let id)? = e.owner, owner != e.owner {
                    throw .busy("trainer \(a) is driven by workout session \(id)")
                }
                let step: TrainerStep
                do throws(TrainerError) { step = try e.control.setTarget(target, now: clock()) } catch {
                    throw .invalidOption("trainer \(a): \(error)")
                }
                e.owner = owner
                run(a, e, step)
                return status(a, e)
            }
        }.get()
    }

    /// Lets go of `device` (the only trainer when nil): the trainer is reset if strapd may
    /// have left a target on it. A client may release any trainer, a session's too.
    public func release(device: SensorAddress?) throws(StrapError) -> TrainerStatus {
        try queue.sync { () -> Result<TrainerStatus, StrapError> in
            Result { () throws(StrapError) -> TrainerStatus in
                let a = try resolve(device)
                let e = trainers[a]!
                e.owner = nil
                run(a, e, e.control.release(now: clock()))
                return status(a, e)
            }
        }.get()
    }

    public func status() -> [TrainerStatus] {
        queue.sync { trainers.keys.sorted().map { status($0, trainers[$0]!) } }
    }

    /// Sessions riding a plan, each with the target its step asks of the trainers it holds
    /// (nil: the step leaves the trainer free). A trainer a session drove that is no longer
    /// asked for (the session ended, its step has no trainer target) is released.
    func drive(_ wanted: [UUID: (devices: [String], target: TrainerTarget?)]) {
        queue.async { [self] in
            for (a, e) in trainers {
                guard case .session(let id)? = e.owner else { continue }
                let asked = wanted[id].flatMap { w in w.devices.contains(a) ? w.target : nil }
                if asked == nil {
                    e.owner = nil
                    run(a, e, e.control.release(now: clock()))
                }
            }
            for (id, w) in wanted {
                if let target = w.target { set(target, session: id, devices: w.devices) }
            }
        }
    }

    /// One session's new target, now (the plan runner at a step boundary); nothing released.
    /// Synchronous: run on the caller's thread while the queue is idle, so the write leaves
    /// without waiting for another thread to wake.
    func drive(session id: UUID, devices: [String], target: TrainerTarget) {
        queue.sync { set(target, session: id, devices: devices) }
    }

    private func set(_ target: TrainerTarget, session id: UUID, devices: [String]) {
        dispatchPrecondition(condition: .onQueue(queue))
        for a in devices {
            guard let e = trainers[a] else { continue }
            if let owner = e.owner, owner != .session(id) { continue }
            if e.owner == .session(id), e.control.desired == target { continue }
            do throws(TrainerError) {
                let step = try e.control.setTarget(target, now: clock())
                e.owner = .session(id)
                run(a, e, step)
            } catch {
                note(a, e, "session \(id): \(error)")
            }
        }
    }

    /// SIGTERM: every trainer strapd may have left holding a target is reset, waiting up to
    /// `timeout` for the trainers' answers. One that does not answer stays in the held-targets
    /// file and is reset by the next start.
    public func releaseAll(timeout: DispatchTimeInterval = .seconds(2)) {
        queue.sync {
            for (a, e) in trainers where e.control.desired != nil || e.control.mayHoldTarget {
                e.owner = nil
                run(a, e, e.control.release(now: clock()))
            }
        }
        let deadline = DispatchTime.now() + timeout
        while DispatchTime.now() < deadline {
            let pending = queue.sync { trainers.values.contains { $0.control.releasePending && $0.connected } }
            if !pending { return }
            usleep(20_000)
        }
    }

    // MARK: Internals

    private func resolve(_ device: SensorAddress?) throws(StrapError) -> SensorAddress {
        dispatchPrecondition(condition: .onQueue(queue))
        if let device {
            let a = device.uppercased()
            guard trainers[a] != nil else { throw .notFound("no trainer \(a) (a device is a trainer once it has reported a Fitness Machine Feature)") }
            return a
        }
        let all = trainers.keys.sorted()
        guard all.count == 1 else {
            throw all.isEmpty ? .notFound("no trainer has connected") : .invalidOption("several trainers (\(all.joined(separator: ", "))): name one with device")
        }
        return all[0]
    }

    private func run(_ a: SensorAddress, _ e: Entry, _ step: TrainerStep) {
        dispatchPrecondition(condition: .onQueue(queue))
        for alert in step.alerts { note(a, e, Self.describe(alert)) }
        if let request = step.write {
            switch request {
            case .setTargetPower, .setTargetResistanceLevel, .setIndoorBikeSimulationParameters: held?.add(a)
            default: break
            }
            devices.write(a, .fitnessMachineControlPoint, request.encoded()) { [weak self] error in
                guard let self else { return }
                self.queue.async {
                    guard let e = self.trainers[a] else { return }
                    if let error { self.log("trainer \(a): control point write failed: \(error)") }
                    self.run(a, e, e.control.handle(error == nil ? .writeCompleted : .writeFailed, now: self.clock()))
                }
            }
        }
        if !e.control.mayHoldTarget { held?.remove(a) }
        e.tick?.cancel()
        e.tick = nil
        if let deadline = step.deadline {
            let item = DispatchWorkItem { [weak self, weak e] in
                guard let self, let e else { return }
                self.run(a, e, e.control.handle(.tick, now: self.clock()))
            }
            e.tick = item
            queue.asyncAfter(deadline: .now() + .milliseconds(Int(max(0, deadline - clock()))), execute: item)
        }
    }

    private func note(_ a: SensorAddress, _ e: Entry, _ text: String) {
        log("trainer \(a): \(text)")
        e.alerts.append(text)
        if e.alerts.count > Self.keptAlerts { e.alerts.removeFirst(e.alerts.count - Self.keptAlerts) }
    }

    private func status(_ a: SensorAddress, _ e: Entry) -> TrainerStatus {
        TrainerStatus(device: a, state: e.control.state, desired: e.control.desired, owner: e.owner,
                      capabilities: e.control.capabilities, alerts: e.alerts)
    }

    static func describe(_ alert: TrainerAlert) -> String {
        switch alert {
        case .controlLost: "control permission lost: another app took the trainer"
        case .controlHeldByAnotherApp: "another app holds the trainer (Control Not Permitted)"
        case let .failed(request, error): "control point op code \(request.opCode) failed: \(error)"
        case let .targetRefusedOnReconnect(error): "the target no longer fits the trainer after reconnecting: \(error)"
        case .trainerReset: "the trainer reset itself: it holds no target"
        case .released: "released (reset)"
        }
    }
}
