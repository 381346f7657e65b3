import StrapDBus
import StrapGATT

/// Interface and bus names from BlueZ's D-Bus API (doc/org.bluez.*.rst, doc/gatt-api.txt).
public enum BlueZInterface {
    public static let busName = "org.bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    public static let battery = "org.bluez.Battery1"
    public static let agentManager = "org.bluez.AgentManager1"
    public static let agent = "org.bluez.Agent1"
    public static let gattManager = "org.bluez.GattManager1"
    public static let gattProfile = "org.bluez.GattProfile1"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let dbus = "org.freedesktop.DBus"

    public static let managerPath = ObjectPath(unchecked: "/org/bluez")
}

/// The sensor services strapd pairs with, and the characteristic each one streams.
public enum SensorService: String, Sendable, CaseIterable {
    case heartRate, cyclingSpeedAndCadence, runningSpeedAndCadence

    public var service: GATTService {
        switch self {
        case .heartRate: .heartRate
        case .cyclingSpeedAndCadence: .cyclingSpeedAndCadence
        case .runningSpeedAndCadence: .runningSpeedAndCadence
        }
    }

    public var measurement: GATTCharacteristic {
        switch self {
        case .heartRate: .heartRateMeasurement
        case .cyclingSpeedAndCadence: .cscMeasurement
        case .runningSpeedAndCadence: .rscMeasurement
        }
    }

    public static let discoveryUUIDs = allCases.map(\.service.uuidString)

    /// The services a device advertises or has cached, from `Device1.UUIDs`.
    public static func advertised(in uuids: [String]) -> [SensorService] {
        let lower = Set(uuids.map { $0.lowercased() })
        return allCases.filter { lower.contains($0.service.uuidString) }
    }
}
