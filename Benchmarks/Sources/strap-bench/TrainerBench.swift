import Foundation
import StrapDaemon
import StrapGATT
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapSystem
import StrapWire
import Synchronization

/// `strap-bench trainer` (issue 35): how long after a step boundary of a plan the trainer
/// hears the next step's power. strapd's real front end and workout service in this process,
/// the simulator's FTMS trainer behind the simulated device service (its control point
/// answers as a trainer does), a plan of alternating 150 W / 250 W steps of 2 s each ridden
/// in real time. Each Set Target Power write is stamped as it leaves for the device service;
/// the boundary is the session's start plus the steps' time goals (no pause). The figure is
/// the p99 (and the median and maximum) of write − boundary over the steps. No peer runs
/// trainers on Linux to compare with; the bound is 50 ms.
enum TrainerBench: BenchSection {
    static let name = "trainer"
    static let summary = "ERG: a plan step's power reaches the (simulated) trainer after the step boundary"
    static let stepSeconds = 2.0

    static func run(quick: Bool) throws -> [BenchFigure] {
        let steps = quick ? 10 : 60
        let delays = try ride(steps: steps)
        guard delays.count >= steps - 1 else {
            throw BenchFailure("trainer: \(delays.count) step changes reached the trainer, \(steps - 1) expected")
        }
        let sorted = delays.sorted()
        func quantile(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)] }
        print("trainer: \(sorted.count) step changes; delay after the boundary ms: median \(fmt(quantile(0.5))), p99 \(fmt(quantile(0.99))), max \(fmt(sorted.last!))")
        return [
            BenchFigure(section: name, name: "ERG step change after the boundary p99", unit: "ms", ours: quantile(0.99), higherIsBetter: false),
            BenchFigure(section: name, name: "ERG step change after the boundary median", unit: "ms", ours: quantile(0.5), higherIsBetter: false),
            BenchFigure(section: name, name: "ERG step change after the boundary max", unit: "ms", ours: sorted.last!, higherIsBetter: false),
        ]
    }

    static func fmt(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Rides `steps` steps; returns each step change's delay after its boundary, ms.
    static func ride(steps: Int) throws -> [Double] {
        let directory = "/tmp/strap-bench-trainer-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(StoreConfig(directory: directory + "/store", sync: .interval(0.1)))
        let workouts = try WorkoutService(store: store, profiles: ProfileBook())
        let writes = WriteStamps()
        var source: SimulatorSource?
        let frontEnd = DaemonFrontEnd(
            store: store, listener: try UnixListener.bind(path: directory + "/s.sock", mode: 0o600),
            access: AccessPolicy(daemonUID: getuid()),
            identity: { address, name in (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings()) },
            workouts: workouts, status: { _ in DaemonStatus.empty }
        ) { pipeline in
            let s = SimulatorSource(simulation: Simulation(kinds: [.trainer], seed: 1, dropouts: .none), pipeline: pipeline)
            source = s
            let simulated = SimulatedDeviceService(identities: s.identities, writes: { [weak s] a, c, v in
                s?.write(a, c, v) ?? (.unavailable("the simulator stopped"), nil)
            })
            return StampingDeviceService(simulated, stamps: writes)
        }
        frontEnd.start()
        source?.start()
        defer {
            source?.stop()
            frontEnd.stopAndWait()
            store.close()
        }
        guard let trainer = source?.identities.first?.address else { throw BenchFailure("trainer: no simulated trainer") }
        // The trainer's link and its ranges, before the ride begins.
        let ready = Date().addingTimeInterval(10)
        while frontEnd.context.trainers.status().first?.capabilities?.powerRange == nil {
            guard Date() < ready else { throw BenchFailure("trainer: the simulated trainer never reported its power range") }
            usleep(10_000)
        }
        let step = { (watts: Double) in
            IntervalStep(.work, PlanStep(goal: .time(stepSeconds), target: .power(watts: watts...watts)))
        }
        let plan = WorkoutPlan(name: "ERG ladder", activity: .cycling,
                               blocks: [PlanBlock(iterations: steps / 2, steps: [step(150), step(250)])])
        var configuration = WorkoutConfiguration(activityType: .cycling, deviceIDs: [trainer])
        configuration.plan = plan
        let started = try workouts.start(configuration, connected: [trainer])
        guard let start = started.session.startDate else { throw BenchFailure("trainer: the session has no start") }
        let end = Date().addingTimeInterval(Double(steps) * stepSeconds + 1.5)
        while Date() < end { usleep(50_000) }
        _ = try? workouts.end(started.session.id)
        // Write k (k ≥ 1) sets step k+1's power: it follows the boundary at k × the step.
        let stamps = writes.powerWrites
        return stamps.dropFirst().enumerated().compactMap { k, stamp in
            let boundary = Double(start) + Double(k + 1) * stepSeconds * 1000
            return k + 1 < steps ? stamp - boundary : nil
        }
    }
}

/// The wall-clock milliseconds (fractional) at which each Set Target Power write left.
final class WriteStamps: Sendable {
    private let stamps = Mutex<[Double]>([])
    var powerWrites: [Double] { stamps.withLock { $0 } }
    func add(_ ms: Double) { stamps.withLock { $0.append(ms) } }
}

/// The simulated device service, with each control point power target stamped on its way.
final class StampingDeviceService: DeviceService, @unchecked Sendable {
    let inner: SimulatedDeviceService
    let stamps: WriteStamps
    init(_ inner: SimulatedDeviceService, stamps: WriteStamps) { self.inner = inner; self.stamps = stamps }

    func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8],
               completion: @escaping @Sendable (DeviceError?) -> Void) {
        if characteristic == .fitnessMachineControlPoint, value.first == 0x05 {
            var t = timespec()
            clock_gettime(CLOCK_REALTIME, &t)
            stamps.add(Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1e6)
        }
        inner.write(address, characteristic, value, completion: completion)
    }
    func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
              finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle { inner.scan(timeout: timeout, found: found, finished: finished) }
    func pair(_ a: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.pair(a, completion: completion) }
    func connect(_ a: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.connect(a, completion: completion) }
    func disconnect(_ a: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.disconnect(a, completion: completion) }
    func forget(_ a: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.forget(a, completion: completion) }
    func resetEnergy(_ a: SensorAddress, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.resetEnergy(a, completion: completion) }
    func snapshot() -> [DeviceInfo] { inner.snapshot() }
}
