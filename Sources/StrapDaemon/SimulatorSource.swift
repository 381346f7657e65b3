import Dispatch
import StrapIngest
import StrapModel
import StrapSimulator

/// Drives the simulator in real time (or `speed` times faster) and feeds the pipeline exactly
/// as BlueZ links would: the same `SensorEvent`s, with real GATT bytes.
public final class SimulatorSource: @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd.source.simulator")
    let pipeline: Pipeline
    let speed: Double
    let tick: DispatchTimeInterval
    /// Confined to `queue`.
    private var simulation: Simulation
    private var timer: DispatchSourceTimer?
    private var origin: ReceiveTime?
    private(set) var identities: [SimulatedIdentity]

    /// `tick` bounds how long the source sleeps: it wakes at each device's next notification
    /// (as a real link delivers them, four sensors at 1 Hz wake the daemon four times a
    /// second, not ten), but never later than `tick`.
    public init(simulation: Simulation, pipeline: Pipeline, speed: Double = 1, tick: DispatchTimeInterval = .seconds(1)) {
        self.simulation = simulation
        self.pipeline = pipeline
        self.speed = speed
        self.tick = tick
        identities = simulation.devices.map(\.identity)
    }

    public func start() {
        queue.sync {
            origin = Clock.now()
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now(), leeway: .milliseconds(2))
            t.setEventHandler { @Sendable [weak self] in self?.step() }
            t.resume()
            timer = t
        }
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    private func step() {
        guard let origin else { return }
        let elapsed = (Clock.monotonic() - origin.monotonic) * speed
        var batch: [SensorEvent] = []
        for (t, identity, event) in simulation.advance(to: elapsed) {
            let time = ReceiveTime(wall: origin.wall + Millis((t * 1000).rounded()), monotonic: origin.monotonic + t)
            let address = identity.address
            switch event {
            case let .notification(characteristic, value): batch.append(.notification(address, characteristic, value, time))
            case let .read(characteristic, value): batch.append(.read(address, characteristic, value, time))
            case .connected: batch.append(.linkUp(address, name: identity.name, time))
            case let .disconnected(reason): batch.append(.linkDown(address, reason: reason, time))
            }
        }
        if !batch.isEmpty { pipeline.submit(contentsOf: batch) }
        // One-shot, re-armed for the next event (a repeating poll woke the daemon for nothing).
        let wait = max(0, (simulation.nextEventTime - elapsed) / max(speed, 1e-9))
        let delay: DispatchTimeInterval = wait < tick.seconds ? .nanoseconds(Int(wait * 1e9) + 1) : tick
        timer?.schedule(deadline: .now() + delay, leeway: .milliseconds(2))
    }
}

extension DispatchTimeInterval {
    var seconds: Double {
        switch self {
        case let .seconds(s): Double(s)
        case let .milliseconds(ms): Double(ms) / 1e3
        case let .microseconds(us): Double(us) / 1e6
        case let .nanoseconds(ns): Double(ns) / 1e9
        case .never: .infinity
        @unknown default: 1
        }
    }
}
