import StrapDBus

/// BlueZ method calls. All run on the bus queue and report on it; errors keep BlueZ's names.
extension BlueZClient {
    public typealias Completion = @Sendable (Result<Void, BusError>) -> Void

    private func bluez(_ path: ObjectPath, _ interface: String, _ member: String, _ args: [DBusValue] = [],
                       timeout: UInt64 = 0, _ reply: @escaping Bus.ReplyHandler) {
        guard let owner else { return queue.async { reply(.failure(.reply(DBusErrorReply(name: FreedesktopErrorName.serviceUnknown.rawValue, message: "org.bluez is not on the bus")))) } }
        bus.call(destination: owner, path: path, interface: interface, member: member, arguments: args,
                 timeoutMicroseconds: timeout, reply: reply)
    }

    private func void(_ done: @escaping Completion) -> Bus.ReplyHandler {
        { result in done(result.map { _ in () }) }
    }

    // MARK: Discovery

    /// Limits this client's discovery to LE advertisers of the HR, CSC and RSC services; send
    /// before `startDiscovery` (a `DiscoveryMachine` orders the two). Results arrive as mirror
    /// changes (`discoveredSensors`).
    public func setDiscoveryFilter(adapter: ObjectPath, uuids: [String] = SensorService.discoveryUUIDs, _ done: @escaping Completion) {
        // DuplicateData stays at BlueZ's default (true) so RSSI keeps updating while scanning.
        let filter = DBusValue.vardict([("UUIDs", .strings(uuids)), ("Transport", .string("le"))])
        bluez(adapter, BlueZInterface.adapter, "SetDiscoveryFilter", [filter], void(done))
    }

    public func startDiscovery(adapter: ObjectPath, _ done: @escaping Completion) {
        bluez(adapter, BlueZInterface.adapter, "StartDiscovery", [], void(done))
    }

    public func stopDiscovery(adapter: ObjectPath, _ done: @escaping Completion) {
        bluez(adapter, BlueZInterface.adapter, "StopDiscovery", [], void(done))
    }

    /// Sends a `DiscoveryMachine` command; `finished` gets the input its reply makes and the
    /// error, if any. InProgress from StartDiscovery is no error: this client's discovery runs.
    public func send(_ command: DiscoveryMachine.Command, adapter: ObjectPath, epoch: UInt64,
                     _ finished: @escaping @Sendable (DiscoveryMachine.Input, BusError?) -> Void) {
        switch command {
        case .setDiscoveryFilter:
            setDiscoveryFilter(adapter: adapter) { result in
                let error = Self.failure(result)
                finished(.filterFinished(ok: error == nil, epoch: epoch), error)
            }
        case .startDiscovery:
            startDiscovery(adapter: adapter) { result in
                let error = Self.failure(result).flatMap { $0.errorName == BlueZErrorName.inProgress.rawValue ? nil : $0 }
                finished(.startFinished(ok: error == nil, epoch: epoch), error)
            }
        case .stopDiscovery:
            stopDiscovery(adapter: adapter) { result in finished(.stopFinished(epoch: epoch), Self.failure(result)) }
        }
    }

    private static func failure(_ result: Result<Void, BusError>) -> BusError? {
        if case .failure(let e) = result { return e }
        return nil
    }

    /// Devices in the mirror that advertise (or have cached) one of the sensor services.
    public var discoveredSensors: [DiscoveredSensor] {
        mirror.devices.compactMap { d in
            let services = SensorService.advertised(in: d.uuids)
            guard let address = d.address, !services.isEmpty else { return nil }
            return DiscoveredSensor(address: address, name: d.alias ?? d.name, rssi: d.rssi, services: services, path: d.path)
        }
    }

    // MARK: Device management

    public func connect(device: ObjectPath, timeoutMicroseconds: UInt64 = 0, _ done: @escaping Completion) {
        bluez(device, BlueZInterface.device, "Connect", [], timeout: timeoutMicroseconds, void(done))
    }

    public func disconnect(device: ObjectPath, _ done: @escaping Completion) {
        bluez(device, BlueZInterface.device, "Disconnect", [], void(done))
    }

    /// `timeoutSeconds` is ours: BlueZ itself gives a pairing two minutes, and the kernel's
    /// may never end (see `SensorManager.cancelStalledPairing`).
    public func pair(device: ObjectPath, timeoutSeconds: Double, _ done: @escaping Completion) {
        bluez(device, BlueZInterface.device, "Pair", [], timeout: UInt64(timeoutSeconds * 1_000_000), void(done))
    }

    public func cancelPairing(device: ObjectPath, _ done: @escaping Completion) {
        bluez(device, BlueZInterface.device, "CancelPairing", [], timeout: 5_000_000, void(done))
    }

    public func setTrusted(device: ObjectPath, _ trusted: Bool, _ done: @escaping Completion) {
        bluez(device, BlueZInterface.properties, "Set",
              [.string(BlueZInterface.device), .string("Trusted"), .variant(.boolean(trusted))], void(done))
    }

    /// Forgets a device (and its GATT cache and bond) on its adapter.
    public func remove(device: ObjectPath, _ done: @escaping Completion) {
        guard let adapter = mirror.device(device)?.adapter else {
            return queue.async { done(.failure(.reply(DBusErrorReply(name: BlueZErrorName.doesNotExist.rawValue, message: "unknown device \(device)")))) }
        }
        bluez(adapter, BlueZInterface.adapter, "RemoveDevice", [.objectPath(device)], void(done))
    }

    // MARK: GATT

    public func readValue(characteristic: ObjectPath, _ done: @escaping @Sendable (Result<[UInt8], BusError>) -> Void) {
        bluez(characteristic, BlueZInterface.gattCharacteristic, "ReadValue", [.vardict([])]) { result in
            done(result.flatMap { body in
                guard let bytes = body.first?.bytes else { return .failure(.decoding("ReadValue reply \(body)")) }
                return .success(bytes)
            })
        }
    }

    /// `withResponse` selects a Write Request (control points need one) over a Write Command.
    public func writeValue(characteristic: ObjectPath, _ value: [UInt8], withResponse: Bool = true, _ done: @escaping Completion) {
        bluez(characteristic, BlueZInterface.gattCharacteristic, "WriteValue",
              [.bytes(value), .vardict([("type", .string(withResponse ? "request" : "command"))])], void(done))
    }

    public func startNotify(characteristic: ObjectPath, _ done: @escaping Completion) {
        bluez(characteristic, BlueZInterface.gattCharacteristic, "StartNotify", [], void(done))
    }

    public func stopNotify(characteristic: ObjectPath, _ done: @escaping Completion) {
        bluez(characteristic, BlueZInterface.gattCharacteristic, "StopNotify", [], void(done))
    }

    /// AcquireNotify: a SOCK_SEQPACKET fd that carries one notification per datagram, and the MTU.
    public func acquireNotify(characteristic: ObjectPath, _ done: @escaping @Sendable (Result<(fd: Int32, mtu: UInt16), BusError>) -> Void) {
        bluez(characteristic, BlueZInterface.gattCharacteristic, "AcquireNotify", [.vardict([])]) { result in
            done(result.flatMap { body in
                guard body.count == 2, case .unixFD(let fd) = body[0], let mtu = body[1].integer.flatMap({ UInt16(exactly: $0) }) else {
                    for case .unixFD(let fd) in body { _ = closeFD(fd) }
                    return .failure(.decoding("AcquireNotify reply \(body)"))
                }
                return .success((fd, mtu))
            })
        }
    }

    // MARK: Registration

    public func registerAgent(path: ObjectPath, capability: String, _ done: @escaping Completion) {
        bluez(BlueZInterface.managerPath, BlueZInterface.agentManager, "RegisterAgent", [.objectPath(path), .string(capability)]) { [weak self] result in
            if case .failure(let e) = result { return done(.failure(e)) }
            guard let self else { return done(.failure(.closed)) }
            self.bluez(BlueZInterface.managerPath, BlueZInterface.agentManager, "RequestDefaultAgent", [.objectPath(path)], self.void(done))
        }
    }

    public func registerApplication(adapter: ObjectPath, root: ObjectPath, _ done: @escaping Completion) {
        bluez(adapter, BlueZInterface.gattManager, "RegisterApplication", [.objectPath(root), .vardict([])], void(done))
    }
}

/// A sensor seen by discovery (or already known to BlueZ).
public struct DiscoveredSensor: Sendable, Equatable {
    public let address: String
    public let name: String?
    public let rssi: Int16?
    public let services: [SensorService]
    public let path: ObjectPath
}

import Glibc
@inline(__always) func closeFD(_ fd: Int32) -> Int32 { Glibc.close(fd) }
