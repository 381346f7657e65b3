import Dispatch
import Foundation
import StrapBlueZ
import StrapDBus

/// One private bus with the mock bluetoothd on it, driven over its control interface.
public final class MockBlueZ: @unchecked Sendable {
    public struct SensorSpec {
        public var address: String
        public var kind: String
        public var hz: Int = 4
        /// Whether Battery Level (0x2A19) has the notify flag; read-only otherwise.
        public var batteryNotify = true
        /// The adapters with a device object for it at start; nil: every adapter (none with
        /// `known: false`). Elsewhere only discovery on that adapter creates one.
        public var knownOn: [String]?
        /// Kinds `ftms`/`trainer`: a controllable trainer (Fitness Machine Control Point and
        /// Status, Supported Power and Resistance Level Range).
        public var controlPoint = false
        public init(address: String, kind: String, hz: Int = 4, batteryNotify: Bool = true, knownOn: [String]? = nil,
                    controlPoint: Bool = false) {
            self.address = address
            self.kind = kind
            self.hz = hz
            self.batteryNotify = batteryNotify
            self.knownOn = knownOn
            self.controlPoint = controlPoint
        }
    }

    public let bus: PrivateBus
    public let sensors: [SensorSpec]
    private let config: URL
    private let state: URL
    public private(set) var process: Child?
    private let queue = DispatchQueue(label: "mock-control")
    private var control: Bus?

    /// `known: false`: BlueZ has no device object until a discovery finds the sensor.
    /// `adapters`: their names (`hci0`, `hci1`: a built-in one and a dongle).
    public init(sensors: [SensorSpec], adapters: [String] = ["hci0"], streaming: Bool = true, known: Bool = true, start: Bool = true) throws {
        bus = try PrivateBus()
        self.sensors = sensors
        config = bus.directory.appendingPathComponent("mock.json")
        state = bus.directory.appendingPathComponent("mock-state.json")
        let json: [String: Any] = ["streaming": streaming, "known": known, "adapters": adapters, "sensors": sensors.map {
            var spec: [String: Any] = ["address": $0.address, "kind": $0.kind, "hz": $0.hz, "battery_notify": $0.batteryNotify,
                                       "control_point": $0.controlPoint]
            if let knownOn = $0.knownOn { spec["known_on"] = knownOn }
            return spec
        }]
        try JSONSerialization.data(withJSONObject: json).write(to: config)
        let address = bus.address
        control = try queue.sync { [queue] in try Bus.connect(address: address, queue: queue) }
        if start { try launch() }
    }

    public func launch() throws {
        let child = try bus.python("mockbluez.py", ["--config", config.path, "--state", state.path])
        _ = try child.waitForLine { $0 == "ready" }
        process = child
    }

    /// bluetoothd dies (sequence numbers saved), then a new one takes org.bluez.
    public func restart(downtime: TimeInterval = 0.5) throws {
        _ = try call("Shutdown")
        process?.waitForExit()
        Thread.sleep(forTimeInterval: downtime)
        try launch()
    }

    @discardableResult
    public func call(_ member: String, _ args: [DBusValue] = []) throws -> [DBusValue] {
        let control = self.control!
        let result: Result<[DBusValue], BusError> = try onQueue(queue) { done in
            control.call(destination: "org.bluez", path: ObjectPath(unchecked: "/strapmock"), interface: "org.strapd.MockBlueZ",
                         member: member, arguments: args) { done($0) }
        }
        return try result.get()
    }

    public func stats() throws -> [String: Any] {
        guard let text = try call("Stats").first?.string,
              let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    public func sent(_ address: String) throws -> Int { ((try stats()["sent"] as? [String: Any])?[address] as? Int) ?? -1 }
    public func startNotifyCalls(_ address: String) throws -> Int { ((try stats()["start_notify"] as? [String: Any])?[address] as? Int) ?? 0 }
    public func acquireCalls(_ address: String) throws -> Int { ((try stats()["acquire_notify"] as? [String: Any])?[address] as? Int) ?? 0 }
    public func batteryStartNotifyCalls(_ address: String) throws -> Int {
        ((try stats()["battery_start_notify"] as? [String: Any])?[address] as? Int) ?? 0
    }
    /// StartNotify calls per Fitness Machine control characteristic ("2ad9", "2ada").
    public func controlStartNotifyCalls(_ address: String) throws -> [String: Int] {
        ((try stats()["control_start_notify"] as? [String: Any])?[address] as? [String: Int]) ?? [:]
    }
    /// The values written to a characteristic ("2ad9"), in order.
    public func writes(_ address: String, _ uuid: String) throws -> [[UInt8]] {
        try events().filter { ($0.first as? String) == "WriteValue" && ($0[1] as? String) == address && ($0[2] as? String) == uuid }
            .compactMap { ($0[3] as? [Int])?.map { UInt8($0) } }
    }
    public func events() throws -> [[Any]] { (try stats()["events"] as? [[Any]]) ?? [] }
    /// The adapter the sensor is connected through, nil when it is not connected.
    public func link(_ address: String) throws -> String? { (try stats()["link"] as? [String: Any])?[address] as? String }
    /// The adapters that have a device object for the sensor.
    public func deviceAdapters(_ address: String) throws -> [String] {
        ((try stats()["devices"] as? [String: Any])?[address] as? [String]) ?? []
    }
    /// The adapters `Connect` was called through for the sensor, in order.
    public func connectAdapters(_ address: String) throws -> [String] {
        try events().filter { ($0.first as? String) == "Connect" && ($0[1] as? String) == address }.compactMap { $0[2] as? String }
    }

    /// A dongle pulled mid-stream: the adapter's objects vanish, no `Connected=false` first.
    public func unplugAdapter(_ name: String) throws { try call("UnplugAdapter", [.string(name)]) }
    /// A dongle pulled as real bluetoothd reports it: links down, powered off, then its objects go.
    public func pullAdapter(_ name: String) throws { try call("PullAdapter", [.string(name)]) }
    /// The adapter is back, without device objects until discovery on it finds them.
    public func plugAdapter(_ name: String) throws { try call("PlugAdapter", [.string(name)]) }

    public func setFault(_ address: String, _ fault: String, _ count: Int32 = 1) throws {
        try call("SetFault", [.string(address), .string(fault), .int32(count)])
    }

    /// The sensor's battery level changes: notified where subscribed, Battery1 left as it was.
    public func setBattery(_ address: String, _ level: UInt8) throws {
        try call("SetBattery", [.string(address), .byte(level)])
    }

    deinit {
        if let control { queue.sync { control.close() } }
        process?.kill(SIGKILL)
        process?.waitForExit()
    }
}
