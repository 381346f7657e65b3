import Dispatch
import Foundation
import StrapBlueZ
import StrapDBus
import MockBlueZSupport

/// Collects what the links deliver, from the bus queue.
final class RecordingSink: SensorSink, @unchecked Sendable {
    private let lock = NSLock()
    private var _notifications: [RawNotification] = []
    private var _reads: [String: [UInt8]] = [:]
    private var _battery: [String: UInt8] = [:]
    private var _phases: [String: [LinkPhase]] = [:]
    /// Notifications and phase changes in the order they came: "notification" or the phase.
    private var _order: [String: [String]] = [:]

    func received(_ notification: RawNotification) {
        lock.withLock {
            _notifications.append(notification)
            _order[notification.device, default: []].append("notification")
        }
    }
    func read(device: String, characteristic: String, value: [UInt8]) { lock.withLock { _reads[device + "/" + characteristic] = value } }
    func battery(device: String, percentage: UInt8) { lock.withLock { _battery[device] = percentage } }
    func linkChanged(device: String, phase: LinkPhase) {
        lock.withLock {
            _phases[device, default: []].append(phase)
            _order[device, default: []].append(phase.description)
        }
    }

    var notifications: [RawNotification] { lock.withLock { _notifications } }
    var reads: [String: [UInt8]] { lock.withLock { _reads } }
    var battery: [String: UInt8] { lock.withLock { _battery } }
    func phases(_ device: String) -> [LinkPhase] { lock.withLock { _phases[device] ?? [] } }
    func order(_ device: String) -> [String] { lock.withLock { _order[device] ?? [] } }

    func sequence(_ device: String) -> [UInt32] {
        notifications.filter { $0.device == device }.compactMap(Self.sequenceNumber)
    }

    func count(_ device: String) -> Int { notifications.filter { $0.device == device }.count }

    /// The mock's counter, at a fixed offset per measurement type (see mockbluez.py).
    static func sequenceNumber(_ n: RawNotification) -> UInt32? {
        let v = n.value
        func u32(_ at: Int) -> UInt32? {
            guard v.count >= at + 4 else { return nil }
            return UInt32(v[at]) | UInt32(v[at + 1]) << 8 | UInt32(v[at + 2]) << 16 | UInt32(v[at + 3]) << 24
        }
        switch n.characteristic {
        case "00002a37-0000-1000-8000-00805f9b34fb": return u32(2)
        case "00002a5b-0000-1000-8000-00805f9b34fb": return u32(1)
        case "00002a53-0000-1000-8000-00805f9b34fb": return u32(4)
        case "00002a63-0000-1000-8000-00805f9b34fb": return u32(5)
        case "00002ad2-0000-1000-8000-00805f9b34fb":
            guard v.count >= 9 else { return nil }
            return UInt32(v[6]) | UInt32(v[7]) << 8 | UInt32(v[8]) << 16
        default: return nil
        }
    }
}

/// Lost and duplicated notifications against what the mock says it sent.
struct DeliveryCheck: CustomStringConvertible {
    let received: Int
    let sent: Int
    let duplicated: Int
    let lost: Int
    let outOfOrder: Int

    init(sequence: [UInt32], sent: Int) {
        received = sequence.count
        self.sent = sent
        duplicated = sequence.count - Set(sequence).count
        lost = sent - Set(sequence).filter { Int($0) < sent }.count
        outOfOrder = zip(sequence, sequence.dropFirst()).filter { $0.0 >= $0.1 }.count
    }

    var description: String { "received \(received) of \(sent) sent: lost \(lost), duplicated \(duplicated), out of order \(outOfOrder)" }
}

/// The daemon side: a Bus to the private bus, a BlueZClient and a SensorManager.
final class Daemon: @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd-bluez-test")
    let sink = RecordingSink()
    let bus: Bus
    let client: BlueZClient
    let manager: SensorManager

    init(address: String) throws {
        let q = queue
        let sink = self.sink
        (bus, client, manager) = try q.sync {
            let bus = try Bus.connect(address: address, queue: q)
            let client = BlueZClient(bus: bus)
            let manager = SensorManager(client: client, sink: sink)
            try client.start()
            try manager.start()
            return (bus, client, manager)
        }
    }

    static let fast = SensorLinkOptions(
        policy: BackoffPolicy(base: 0.1, cap: 1, jitter: 0.2, transient: 0.05, outOfSlots: 0.5),
        timeouts: LinkTimeouts(connect: 5_000_000_000, resolve: 1_500_000_000, subscribe: 5_000_000_000, disconnect: 2_000_000_000))

    func add(_ address: String, _ options: SensorLinkOptions = Daemon.fast) {
        queue.sync { _ = manager.add(address: address, options: options) }
    }

    func phase(_ address: String) -> LinkPhase? {
        queue.sync { manager.links[address]?.phase }
    }

    deinit {
        let (manager, client, bus) = (self.manager, self.client, self.bus)
        queue.sync {
            manager.stop()
            client.stop()
            bus.close()
        }
    }
}
