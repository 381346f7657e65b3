import Dispatch
import Glibc
import StrapOS
import StrapIngest
import StrapModel
import StrapSimulator
import Synchronization

/// Drives the simulator in real time (or `speed` times faster) and feeds the pipeline exactly
/// as BlueZ links would: the same `SensorEvent`s, with real GATT bytes.
///
/// On a thread of its own that sleeps until the next simulated notification: a Dispatch timer
/// re-armed per event went through libdispatch's timer thread twice per notification, which
/// was a large part of an idle daemon's CPU. Four sensors at 1 Hz wake it four times a second.
public final class SimulatorSource: @unchecked Sendable {
    let pipeline: Pipeline
    let speed: Double
    let tick: DispatchTimeInterval
    /// Confined to the source's thread once started.
    private var simulation: Simulation
    private var origin: ReceiveTime?
    public let identities: [SimulatedIdentity]
    private let started = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// Signalled only by `stop`: the thread's sleep is a wait on it.
    private let stopSignal = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    /// Sensors disconnected by request (`devices.disconnect`), silent until `connect`. The
    /// lock is held across filtering and submitting, so no notification of a sensor can be
    /// submitted after the link-down that ended it.
    let heldDown = Mutex<Set<SensorAddress>>([])
    /// The simulated trainers' control state, which writes reach from the device service's
    /// queue (SimulatorSource+Trainer.swift); `origin` again, for the clock those writes read.
    let trainers: [SensorAddress: SimulatedTrainerControl]
    let clockOrigin = Mutex<ReceiveTime?>(nil)

    /// `tick` bounds how long the source sleeps between checks.
    public init(simulation: Simulation, pipeline: Pipeline, speed: Double = 1, tick: DispatchTimeInterval = .seconds(1)) {
        self.simulation = simulation
        self.pipeline = pipeline
        self.speed = speed
        self.tick = tick
        identities = simulation.devices.map(\.identity)
        trainers = simulation.trainers
    }

    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        origin = ReceiveTime.now()
        clockOrigin.withLock { $0 = origin }
        if !DetachedThread.spawn(name: "strapd-sim", { self.run() }) { exited.signal() }
    }

    /// Returns once the source has stopped submitting.
    public func stop() {
        guard started.load(ordering: .acquiring), !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopSignal.signal()
        exited.wait()
    }

    /// The protocol's `devices.disconnect` / `devices.connect` (and `forget`): a sensor taken
    /// down stays down, whatever its simulated link schedule says, until connected again.
    public func setConnected(_ address: SensorAddress, _ connected: Bool) {
        guard let identity = identities.first(where: { $0.address == address }) else { return }
        heldDown.withLock { down in
            let changed = connected ? down.remove(address) != nil : down.insert(address).inserted
            guard changed else { return }
            let now = ReceiveTime.now()
            pipeline.submit(contentsOf: [connected ? .linkUp(address, name: identity.name, now)
                                                   : .linkDown(address, reason: "disconnected by request", now)]
                                        + trainerLinkChanged(address, connected, at: now))
        }
    }

    private func run() {
        while !stopped.load(ordering: .acquiring) {
            let wait = step()
            _ = stopSignal.wait(timeout: .now() + wait)
        }
        exited.signal()
    }

    /// Submits what is due; returns how long to sleep until the next event (at most `tick`).
    private func step() -> DispatchTimeInterval {
        guard let origin else { return tick }
        let elapsed = (ReceiveTime.now().monotonic - origin.monotonic) * speed
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
        heldDown.withLock { down in
            if !down.isEmpty { batch.removeAll { down.contains($0.address) } }
            if !batch.isEmpty { pipeline.submitHere(contentsOf: batch) }
        }
        let wait = max(0, (simulation.nextEventTime - elapsed) / max(speed, 1e-9))
        return wait < tick.seconds ? .nanoseconds(Int(wait * 1e9) + 1) : tick
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
