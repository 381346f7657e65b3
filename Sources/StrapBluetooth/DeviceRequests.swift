import StrapBlueZ
import StrapDBus
import StrapIngest

/// Callers of `devices.connect` waiting for their sensor to stream, answered once it does,
/// when it is disconnected or forgotten meanwhile, or after the wait. Confined to the bus queue.
struct ConnectWaiters {
    typealias Completion = @Sendable (DeviceError?) -> Void
    private var waiting: [SensorAddress: [(id: Int, completion: Completion)]] = [:]
    private var nextID = 0

    /// Returns the waiter's id, for `expire`.
    mutating func add(_ address: SensorAddress, _ completion: @escaping Completion) -> Int {
        nextID += 1
        waiting[address, default: []].append((nextID, completion))
        return nextID
    }

    /// Removes every waiter of `address` and returns their completions, to be answered.
    mutating func take(_ address: SensorAddress) -> [Completion] {
        waiting.removeValue(forKey: address)?.map(\.completion) ?? []
    }

    mutating func takeAll() -> [Completion] {
        defer { waiting.removeAll() }
        return waiting.values.flatMap { $0.map(\.completion) }
    }

    /// Removes waiter `id` of `address` if it still waits, and returns its completion.
    mutating func expire(_ address: SensorAddress, id: Int) -> Completion? {
        guard let index = waiting[address]?.firstIndex(where: { $0.id == id }) else { return nil }
        let completion = waiting[address]!.remove(at: index).completion
        if waiting[address]?.isEmpty == true { waiting[address] = nil }
        return completion
    }
}

/// What a scan has reported, per address. Confined to the bus queue.
final class ScanReports: @unchecked Sendable {
    private var reported: [SensorAddress: (name: String?, services: [String])] = [:]

    func isNew(_ d: DiscoveredDevice) -> Bool {
        if let r = reported[d.address], r.name == d.name, r.services == d.services { return false }
        reported[d.address] = (d.name, d.services)
        return true
    }
}

extension DeviceError {
    /// BlueZ's error names → protocol errors; the name stays in the message.
    init(_ error: BusError, address: SensorAddress) {
        guard case .reply(let reply) = error else {
            self = .unavailable("D-Bus: \(error)")
            return
        }
        switch reply.name {
        case BlueZErrorName.doesNotExist.rawValue, FreedesktopErrorName.unknownObject.rawValue: self = .notFound(address)
        case BlueZErrorName.inProgress.rawValue: self = .busy("\(reply.name): \(reply.message)")
        case BlueZErrorName.notReady.rawValue, FreedesktopErrorName.serviceUnknown.rawValue, FreedesktopErrorName.nameHasNoOwner.rawValue:
            self = .unavailable("\(reply.name): \(reply.message)")
        default: self = .failed("\(reply.name): \(reply.message)")
        }
    }
}
