import StrapGATT
import StrapModel
import Testing
@testable import StrapTrainer

/// A scripted exchange with a trainer, in the manner of BlueZ's unit/test-gatt.c: events go in
/// one by one, and every control point write the controller asks for is recorded in order, so a
/// test states the whole conversation (docs/trainer.md).
struct Script {
    var control: TrainerControl
    var now: Millis = 0
    var writes: [FitnessMachineControlPointRequest] = []
    var alerts: [TrainerAlert] = []

    init(_ control: TrainerControl = TrainerControl()) { self.control = control }

    mutating func record(_ step: TrainerStep) {
        if let w = step.write { writes.append(w) }
        alerts += step.alerts
    }

    mutating func on(_ event: TrainerEvent) { record(control.handle(event, now: now)) }
    mutating func connect(_ caps: TrainerCapabilities = Script.caps) { on(.connected(caps)) }
    mutating func target(_ t: TrainerTarget) throws(TrainerError) { record(try control.setTarget(t, now: now)) }
    mutating func release() { record(control.release(now: now)) }
    /// The trainer's indication for the last write, with `result`.
    mutating func answer(_ result: FitnessMachineControlPointResponse.Result = .success) {
        on(.writeCompleted)
        on(.indication(FitnessMachineControlPointResponse(requestOpCode: writes.last!.opCode, result: result)))
    }
    mutating func advance(to t: Millis) { now = t; on(.tick) }

    /// A trainer offering power (0…2000 W, 1 W steps), resistance (0…100.0 in tenths) and
    /// simulation.
    static let caps = TrainerCapabilities(
        feature: FitnessMachineFeature(machineFeatures: 1 << 14 | 1 << 7, targetSettingFeatures: 1 << 2 | 1 << 3 | 1 << 13),
        powerRange: SupportedRange(minimum: 0, maximum: 2000, increment: 1),
        resistanceRange: SupportedRange(minimum: 0, maximum: 1000, increment: 1))
}
