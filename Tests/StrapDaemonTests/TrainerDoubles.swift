import Foundation
import StrapGATT
import StrapIngest
import StrapModel
import Synchronization
@testable import StrapDaemon

/// A device service with one FTMS trainer behind it that answers the control point the way
/// trainers do (docs/trainer.md): control first, targets inside the Supported Power Range,
/// control and target lost with the link. Its indications go into the pipeline as a link's
/// would. Everything it was sent is in `requests`.
final class ScriptedTrainer: DeviceService, @unchecked Sendable {
    let address = "C0:FF:EE:00:00:01"
    struct State {
        var requests: [FitnessMachineControlPointRequest] = []
        var controlled = false
        var target: Int16?
        var connected = false
        /// Writes go unanswered (a trainer that stopped listening).
        var silent = false
    }
    let state = Mutex(State())
    weak var pipeline: Pipeline?
    static let feature: [UInt8] = [0x02, 0x40, 0x00, 0x00, 0x0C, 0x20, 0x00, 0x00]   // power measurement; resistance + power targets, simulation
    static let powerRange: [UInt8] = [0x00, 0x00, 0xD0, 0x07, 0x01, 0x00]            // 0…2000 W, step 1

    var requests: [FitnessMachineControlPointRequest] { state.withLock { $0.requests } }
    var target: Int16? { state.withLock { $0.target } }

    /// The link comes up: the Feature and range are read, then notifications flow.
    func connect() {
        state.withLock { $0.connected = true; $0.controlled = false; $0.target = nil }
        let t = ReceiveTime.now()
        pipeline?.submit(contentsOf: [.read(address, .fitnessMachineFeature, Self.feature, t),
                                      .read(address, .supportedPowerRange, Self.powerRange, t),
                                      .linkUp(address, name: "Trainer", t)])
    }

    func drop() {
        state.withLock { $0.connected = false; $0.controlled = false; $0.target = nil }
        pipeline?.submit(contentsOf: [.linkDown(address, reason: "test drop", ReceiveTime.now())])
    }

    func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8],
               completion: @escaping @Sendable (DeviceError?) -> Void) {
        guard address == self.address, characteristic == .fitnessMachineControlPoint else { return completion(.notFound(address)) }
        guard let request = try? FitnessMachineControlPointRequest.decode(value) else { return completion(.failed("bad request")) }
        let answer: UInt8? = state.withLock { s -> UInt8? in
            guard s.connected else { return nil }
            s.requests.append(request)
            if s.silent { return 0xFF }
            switch request {
            case .requestControl: s.controlled = true; return 0x01
            case .reset: s.controlled = false; s.target = nil; return 0x01
            case .setTargetPower(let w):
                guard s.controlled else { return 0x05 }
                guard (0...2000).contains(w) else { return 0x03 }
                s.target = w
                return 0x01
            default: return s.controlled ? 0x01 : 0x05
            }
        }
        guard let answer else { return completion(.unavailable("\(address) is not connected")) }
        completion(nil)
        guard answer != 0xFF else { return }
        pipeline?.submit(contentsOf: [.notification(address, .fitnessMachineControlPoint, [0x80, request.opCode, answer], ReceiveTime.now())])
    }

    func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
              finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle {
        finished(nil)
        return ScanHandle {}
    }
    func pair(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { completion(nil) }
    func connect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { completion(nil) }
    func disconnect(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { completion(nil) }
    func forget(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { completion(nil) }
    func resetEnergy(_ address: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { completion(nil) }
    func snapshot() -> [DeviceInfo] {
        var info = DeviceInfo(address: address, name: "Trainer")
        info.known = true
        info.connected = state.withLock { $0.connected }
        return [info]
    }
}

/// Waits for `condition`, checking every 10 ms, up to `limit` seconds (a bound on a hang, not
/// a timing assertion); returns whether it came true.
func eventually(_ limit: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(limit)
    while Date() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
