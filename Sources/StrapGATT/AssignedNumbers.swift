/// The 16-bit Bluetooth SIG assigned numbers strapd understands
/// (docs/decoding.md#characteristics-at-a-glance).
public enum GATTService: UInt16, Sendable, CaseIterable {
    case heartRate = 0x180D
    case cyclingSpeedAndCadence = 0x1816
    case runningSpeedAndCadence = 0x1814
    case battery = 0x180F
    case deviceInformation = 0x180A
    case cyclingPower = 0x1818
    case fitnessMachine = 0x1826

    /// The 128-bit form BlueZ uses on D-Bus, e.g. `0000180d-0000-1000-8000-00805f9b34fb`.
    public var uuidString: String { bluetoothBaseUUID(rawValue) }
}

public enum GATTCharacteristic: UInt16, Sendable, CaseIterable {
    case heartRateMeasurement = 0x2A37
    case bodySensorLocation = 0x2A38
    case heartRateControlPoint = 0x2A39
    case batteryLevel = 0x2A19
    case cscMeasurement = 0x2A5B
    case cscFeature = 0x2A5C
    case sensorLocation = 0x2A5D
    case scControlPoint = 0x2A55
    case rscMeasurement = 0x2A53
    case rscFeature = 0x2A54
    case manufacturerName = 0x2A29
    case modelNumber = 0x2A24
    case serialNumber = 0x2A25
    case firmwareRevision = 0x2A26
    case hardwareRevision = 0x2A27
    case softwareRevision = 0x2A28
    case cyclingPowerMeasurement = 0x2A63
    case cyclingPowerFeature = 0x2A65
    case cyclingPowerControlPoint = 0x2A66
    case fitnessMachineFeature = 0x2ACC
    case indoorBikeData = 0x2AD2
    case trainingStatus = 0x2AD3
    case supportedResistanceLevelRange = 0x2AD6
    case supportedPowerRange = 0x2AD8
    case fitnessMachineControlPoint = 0x2AD9
    case fitnessMachineStatus = 0x2ADA

    public var uuidString: String { bluetoothBaseUUID(rawValue) }

    /// The kebab-case name `strapctl decode` accepts (docs/product.md §3.2).
    public var name: String {
        switch self {
        case .heartRateMeasurement: "heart-rate-measurement"
        case .bodySensorLocation: "body-sensor-location"
        case .heartRateControlPoint: "heart-rate-control-point"
        case .batteryLevel: "battery-level"
        case .cscMeasurement: "csc-measurement"
        case .cscFeature: "csc-feature"
        case .sensorLocation: "sensor-location"
        case .scControlPoint: "sc-control-point"
        case .rscMeasurement: "rsc-measurement"
        case .rscFeature: "rsc-feature"
        case .manufacturerName: "manufacturer-name"
        case .modelNumber: "model-number"
        case .serialNumber: "serial-number"
        case .firmwareRevision: "firmware-revision"
        case .hardwareRevision: "hardware-revision"
        case .softwareRevision: "software-revision"
        case .cyclingPowerMeasurement: "cycling-power-measurement"
        case .cyclingPowerFeature: "cycling-power-feature"
        case .cyclingPowerControlPoint: "cycling-power-control-point"
        case .fitnessMachineFeature: "fitness-machine-feature"
        case .indoorBikeData: "indoor-bike-data"
        case .trainingStatus: "training-status"
        case .supportedResistanceLevelRange: "supported-resistance-level-range"
        case .supportedPowerRange: "supported-power-range"
        case .fitnessMachineControlPoint: "fitness-machine-control-point"
        case .fitnessMachineStatus: "fitness-machine-status"
        }
    }

    /// Parses `2a37`, `0x2A37`, a full 128-bit SIG-base UUID, or a kebab-case name.
    public init?(parsing text: String) {
        let lower = text.lowercased()
        if let match = GATTCharacteristic.allCases.first(where: { $0.name == lower }) {
            self = match
            return
        }
        var hex = Substring(lower)
        if hex.hasPrefix("0x") { hex = hex.dropFirst(2) }
        if hex.count == 36, hex.hasPrefix("0000"), hex.hasSuffix("-0000-1000-8000-00805f9b34fb") {
            hex = hex.dropFirst(4).prefix(4)
        }
        guard hex.count == 4, let value = UInt16(hex, radix: 16),
              let match = GATTCharacteristic(rawValue: value) else { return nil }
        self = match
    }
}

@inline(__always)
func bluetoothBaseUUID(_ short: UInt16) -> String {
    let digits = String(short, radix: 16)
    return "0000" + String(repeating: "0", count: 4 - digits.count) + digits + "-0000-1000-8000-00805f9b34fb"
}
