import Dispatch
import StrapDBus

/// LE discovery on every powered adapter, filtered on the sensor services, reporting each
/// sensor as it appears and again whenever its name, RSSI or services change.
public final class DiscoverySession: @unchecked Sendable {
    private let client: BlueZClient
    private let report: @Sendable (DiscoveredSensor) -> Void
    private var observer: Int?
    private var adapters: Set<ObjectPath> = []

    public init(client: BlueZClient, report: @escaping @Sendable (DiscoveredSensor) -> Void) {
        self.client = client
        self.report = report
    }

    public func start() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        observer = client.observe { [weak self] event in self?.handle(event) }
        // Sensors BlueZ already knows (cached or still advertising) count as found.
        client.discoveredSensors.forEach(report)
        startOnPoweredAdapters()
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        if let observer { client.removeObserver(observer) }
        observer = nil
        for path in adapters { client.stopDiscovery(adapter: path) { _ in } }
        adapters = []
    }

    private func startOnPoweredAdapters() {
        for adapter in client.mirror.adapters where adapter.powered && !adapters.contains(adapter.path) {
            adapters.insert(adapter.path)
            client.startDiscovery(adapter: adapter.path) { [weak self] result in
                if case .failure(let e) = result {
                    BusLog.warning("discovery on \(adapter.path) failed: \(e)")
                    self?.adapters.remove(adapter.path)
                }
            }
        }
    }

    private func handle(_ event: BlueZEvent) {
        switch event {
        case .availability(true):
            adapters = []
            startOnPoweredAdapters()
            client.discoveredSensors.forEach(report)
        case .interfacesAdded(let path, let names):
            if names.contains(BlueZInterface.adapter) { startOnPoweredAdapters() }
            if names.contains(BlueZInterface.device) { reportDevice(path) }
        case .interfacesRemoved(let path, let names) where names.contains(BlueZInterface.adapter):
            adapters.remove(path)
        case .propertiesChanged(let path, BlueZInterface.device, let changed):
            if changed.keys.contains(where: { ["RSSI", "Name", "Alias", "UUIDs"].contains($0) }) { reportDevice(path) }
        case .propertiesChanged(_, BlueZInterface.adapter, let changed) where changed["Powered"]?.bool == true:
            startOnPoweredAdapters()
        default:
            break
        }
    }

    private func reportDevice(_ path: ObjectPath) {
        if let sensor = client.discoveredSensors.first(where: { $0.path == path }) { report(sensor) }
    }
}
