import StrapGATT
import Synchronization

/// A smart trainer (Fitness Machine 0x1826, indoor bike) that can be controlled: Indoor Bike
/// Data (power, cadence, speed) at 1 Hz, and a control point answered as a real trainer answers
/// it (`SimulatedTrainerModel`). Its state lives in `control`, which the device service's
/// writes reach from another queue while the simulation advances on its own thread.
public struct SimulatedTrainer: LinkDrivenDevice {
    public let identity: SimulatedIdentity
    /// Shared by every copy of this device: copying a `Simulation` does not fork the trainer.
    public let control: SimulatedTrainerControl
    var rng: SimulationRandom
    var link: LinkSchedule
    var announced = false

    public init(index: Int, seed: UInt64, dropouts: DropoutSchedule = DropoutSchedule(), scenario: Simulation.Scenario = .random) {
        var rng = SimulationRandom(seed: seed)
        identity = SimulatedIdentity(address: simulatedAddress(kind: 0x54, index: index), name: "Sim Trainer \(index)",
                                     manufacturer: "strapd simulator", model: "SIM-FTMS", serial: "FTMS\(seed % 100_000)",
                                     firmware: "1.0", services: [.fitnessMachine, .deviceInformation])
        link = LinkSchedule(period: 1, phase: rng.uniform(0, 1), dropouts: dropouts, rng: &rng)
        if scenario == .demo { link.postponeDropouts(until: 120) }
        control = SimulatedTrainerControl(SimulatedTrainerModel(seed: rng.next()))
        self.rng = rng
    }

    mutating func progress(to t: Double) { control.withModel { $0.advance(to: t) } }

    mutating func notifications(at t: Double) -> [(Double, SimulatedEvent)] {
        let data = control.withModel { $0.measurement(at: t) }
        return [(t, .notification(characteristic: .indoorBikeData, value: data.encoded()))]
    }

    func connectReads() -> [SimulatedEvent] { SimulatedTrainerControl.connectReads }

    mutating func linkDropped(at t: Double) { control.withModel { $0.linkDropped(at: t) } }

    mutating func linkRestored(at t: Double) { control.withModel { $0.linkRestored(at: t) } }
}

/// The trainer's state, shared between the simulation's thread (which advances its brake and
/// takes its link down and up) and whoever writes its control point. Every access holds the lock.
public final class SimulatedTrainerControl: Sendable {
    private let model: Mutex<SimulatedTrainerModel>

    init(_ model: SimulatedTrainerModel) { self.model = Mutex(model) }

    public func withModel<R: Sendable>(_ body: (inout SimulatedTrainerModel) -> R) -> R { model.withLock { body(&$0) } }

    /// The Feature and the two Supported ranges, read on every (re)connect.
    public static let connectReads: [SimulatedEvent] = [
        .read(characteristic: .fitnessMachineFeature, value: SimulatedTrainerModel.feature.encoded()),
        .read(characteristic: .supportedPowerRange, value: SimulatedTrainerModel.powerRange.encoded()),
        .read(characteristic: .supportedResistanceLevelRange, value: SimulatedTrainerModel.resistanceRange.encoded()),
    ]

    /// The outcome of a write of `value` to `characteristic` at simulation time `t`.
    public enum WriteOutcome: Sendable, Equatable {
        /// Acknowledged; the answer is indicated (and notified) on the link `connection`.
        case answered(SimulatedTrainerModel.Answer, connection: Int)
        /// The link is down: nothing reaches the trainer.
        case linkDown
        /// The ATT write itself is refused (not the control point, or no op code).
        case refused(String)
    }

    public func write(_ characteristic: GATTCharacteristic, _ value: [UInt8], at t: Double) -> WriteOutcome {
        guard characteristic == .fitnessMachineControlPoint else { return .refused("\(characteristic.name) is not writable") }
        return model.withLock { m in
            guard m.connected else { return .linkDown }
            guard let answer = m.write(value, at: t) else { return .refused("an empty control point write (no op code)") }
            return .answered(answer, connection: m.connection)
        }
    }

    /// Whether an answer computed on link `connection` may still be sent: not after a drop.
    public func isCurrent(connection: Int) -> Bool { model.withLock { $0.connected && $0.connection == connection } }
}
