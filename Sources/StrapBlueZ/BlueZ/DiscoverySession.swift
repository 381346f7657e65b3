import Dispatch
import StrapDBus

/// LE discovery on every powered adapter, filtered on the sensor services, reporting each
/// sensor as it appears and again whenever its name, RSSI or services change.
///
/// `stop` may come at any time, also before BlueZ has answered a single call: one
/// `DiscoveryMachine` per adapter makes sure discovery this session started ends stopped.
public final class DiscoverySession: @unchecked Sendable {
    private let client: BlueZClient
    private let report: @Sendable (DiscoveredSensor) -> Void
    private var observer: Int?
    private var adapters: [ObjectPath: DiscoveryMachine] = [:]
    private var stopped = false
    private var whenSettled: [@Sendable () -> Void] = []

    public init(client: BlueZClient, report: @escaping @Sendable (DiscoveredSensor) -> Void) {
        self.client = client
        self.report = report
    }

    deinit {
        // Dropped with calls in flight (their bus closed): nothing of ours runs any more.
        let handlers = whenSettled
        if !handlers.isEmpty { client.queue.async { handlers.forEach { $0() } } }
    }

    public func start() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard !stopped, observer == nil else { return }
        observer = client.observe { [weak self] event in self?.handle(event) }
        // Sensors BlueZ already knows (cached or still advertising) count as found.
        client.discoveredSensors.forEach(report)
        startOnPoweredAdapters()
    }

    /// Stops reporting and ends the discovery this session started. `settled` runs on the
    /// bus queue once no call of the session is in flight (at once if none is): only then is
    /// its StopDiscovery through, so only then may another user start discovery again.
    public func stop(settled: @escaping @Sendable () -> Void = {}) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        stopped = true
        whenSettled.append(settled)
        for path in Array(adapters.keys) { drive(path, .want(false)) }
        settleIfDone()
    }

    private func startOnPoweredAdapters() {
        guard !stopped else { return }
        for adapter in client.mirror.adapters where adapter.powered { drive(adapter.path, .want(true)) }
    }

    private func drive(_ path: ObjectPath, _ input: DiscoveryMachine.Input) {
        var machine = adapters[path] ?? DiscoveryMachine()
        let command = machine.handle(input)
        adapters[path] = machine
        guard let command else { return }
        // Strong self: a stopped session lives until its last reply, so a StopDiscovery
        // still owed after a StartDiscovery reply goes out.
        client.send(command, adapter: path, epoch: machine.epoch) { input, error in
            if let error { BusLog.warning("discovery on \(path): \(command) failed: \(error)") }
            self.drive(path, input)
            self.settleIfDone()
        }
    }

    private func settleIfDone() {
        guard stopped, !whenSettled.isEmpty, adapters.values.allSatisfy({ $0.phase == .idle }) else { return }
        if let observer { client.removeObserver(observer) }
        observer = nil
        let handlers = whenSettled
        whenSettled = []
        handlers.forEach { $0() }
    }

    private func handle(_ event: BlueZEvent) {
        switch event {
        case .availability(let up):
            for path in Array(adapters.keys) { drive(path, .lost) }
            if up {
                startOnPoweredAdapters()
                if !stopped { client.discoveredSensors.forEach(report) }
            }
        case .interfacesAdded(let path, let names):
            if names.contains(BlueZInterface.adapter) { startOnPoweredAdapters() }
            if names.contains(BlueZInterface.device) { reportDevice(path) }
        case .interfacesRemoved(let path, let names) where names.contains(BlueZInterface.adapter):
            drive(path, .lost)
        case .propertiesChanged(let path, BlueZInterface.device, let changed):
            if changed.keys.contains(where: { ["RSSI", "Name", "Alias", "UUIDs"].contains($0) }) { reportDevice(path) }
        case .propertiesChanged(let path, BlueZInterface.adapter, let changed):
            if changed["Powered"]?.bool == true { startOnPoweredAdapters() }
            if changed["Powered"]?.bool == false { drive(path, .lost) }
        default:
            break
        }
        settleIfDone()
    }

    private func reportDevice(_ path: ObjectPath) {
        guard !stopped else { return }
        if let sensor = client.discoveredSensors.first(where: { $0.path == path }) { report(sensor) }
    }
}
