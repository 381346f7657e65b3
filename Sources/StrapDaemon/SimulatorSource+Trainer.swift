import StrapGATT
import StrapIngest
import StrapSimulator

/// The write side of the simulated trainers (docs/operations.md#a-simulated-trainer): control
/// point writes arrive from `SimulatedDeviceService`'s queue while the simulation runs on the
/// source's thread; both reach the trainer through its `SimulatedTrainerControl`'s lock.
extension SimulatorSource {
    /// What a write did: refused with an error, or acknowledged with the trainer's answer to
    /// submit once the simulated ATT round trip is over.
    public typealias WriteResult = (error: DeviceError?, answer: (@Sendable () -> Void)?)

    /// Writes `value` to `characteristic` of the simulated device at `address`, now.
    public func write(_ address: SensorAddress, _ characteristic: GATTCharacteristic, _ value: [UInt8]) -> WriteResult {
        guard let identity = identities.first(where: { $0.address == address }) else { return (.notFound(address), nil) }
        guard let control = trainers[address] else {
            return (.failed("\(address) is a simulated \(identity.model), not a trainer: it has no writable \(characteristic.name)"), nil)
        }
        if heldDown.withLock({ $0.contains(address) }) { return (.unavailable("\(address) is disconnected"), nil) }
        guard let t = simulatedTime(at: ReceiveTime.now()) else { return (.unavailable("the simulator has not started"), nil) }
        switch control.write(characteristic, value, at: t) {
        case .linkDown:
            return (.unavailable("\(address): the link is down (simulated dropout)"), nil)
        case let .refused(reason):
            return (.failed("\(address): \(reason)"), nil)
        case let .answered(answer, connection):
            return (nil, { [self] in self.submit(answer, of: address, control: control, connection: connection) })
        }
    }

    /// Simulated seconds at `now`, the clock the simulation's events are timed on.
    func simulatedTime(at now: ReceiveTime) -> Double? {
        clockOrigin.withLock { origin in origin.map { max(0, (now.monotonic - $0.monotonic) * speed) } }
    }

    /// The indication, then the Machine Status notifications, as the pipeline's events. Under
    /// the held-down lock, like every submission of the source: nothing of a link that went
    /// down (by request or by a simulated dropout) since the write is sent after its link-down.
    private func submit(_ answer: SimulatedTrainerModel.Answer, of address: SensorAddress, control: SimulatedTrainerControl,
                        connection: Int) {
        heldDown.withLock { down in
            guard !down.contains(address), control.isCurrent(connection: connection) else { return }
            let now = ReceiveTime.now()
            pipeline.submit(contentsOf: [.notification(address, .fitnessMachineControlPoint, answer.indication, now)]
                + answer.statuses.map { .notification(address, .fitnessMachineStatus, $0, now) })
        }
    }

    /// `devices.disconnect` / `connect` of a trainer: its control (and target) go with the
    /// link, and a connection reads the Feature and ranges again, as every simulated
    /// reconnect does. Called with the held-down lock held; the events follow the link's.
    func trainerLinkChanged(_ address: SensorAddress, _ connected: Bool, at now: ReceiveTime) -> [SensorEvent] {
        guard let control = trainers[address] else { return [] }
        let t = simulatedTime(at: now) ?? 0
        control.withModel { connected ? $0.linkRestored(at: t) : $0.linkDropped(at: t) }
        guard connected else { return [] }
        return SimulatedTrainerControl.connectReads.compactMap { event -> SensorEvent? in
            guard case let .read(characteristic, value) = event else { return nil }
            return .read(address, characteristic, value, now)
        }
    }
}
