import StrapDBus
import StrapGATT

/// Interface and bus names from BlueZ's D-Bus API (doc/org.bluez.*.rst, doc/gatt-api.txt).
public enum BlueZInterface {
    public static let busName = "org.bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = gattCharacteristicLiteral.description
    /// The same name for C comparisons without a copy (`CharacteristicValueSignal`).
    static let gattCharacteristicLiteral: StaticString = "org.bluez.GattCharacteristic1"
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
    /// Power meters (Cycling Power 0x1818) and indoor-bike trainers (Fitness Machine 0x1826).
    case cyclingPower, fitnessMachine

    public var service: GATTService {
        switch self {
        case .heartRate: .heartRate
        case .cyclingSpeedAndCadence: .cyclingSpeedAndCadence
        case .runningSpeedAndCadence: .runningSpeedAndCadence
        case .cyclingPower: .cyclingPower
        case .fitnessMachine: .fitnessMachine
        }
    }

    public var measurement: GATTCharacteristic {
        switch self {
        case .heartRate: .heartRateMeasurement
        case .cyclingSpeedAndCadence: .cscMeasurement
        case .runningSpeedAndCadence: .rscMeasurement
        case .cyclingPower: .cyclingPowerMeasurement
        case .fitnessMachine: .indoorBikeData
        }
    }

    public static let discoveryUUIDs = allCases.map(\.service.uuidString)

    /// The services a device advertises or has cached, from `Device1.UUIDs`.
    public static func advertised(in uuids: [String]) -> [SensorService] {
        let lower = Set(uuids.map { $0.lowercased() })
        return allCases.filter { lower.contains($0.service.uuidString) }
    }

    /// The services whose measurement a link subscribes to. A trainer with Fitness Machine and
    /// Cycling Power beside it (for apps that read only CPS) streams Indoor Bike Data alone:
    /// the same power twice from one device would double its samples, and FTMS is the
    /// trainer's own service, with its speed, distance and, later, its control point.
    public static func streamed(_ services: [SensorService]) -> [SensorService] {
        services.contains(.fitnessMachine) ? services.filter { $0 != .cyclingPower } : services
    }
}
