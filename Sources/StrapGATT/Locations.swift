/// Body Sensor Location 0x2A38 (HRS §3.2): one octet, 7–255 reserved.
public struct BodySensorLocation: Equatable, Sendable {
    public var code: UInt8

    public init(code: UInt8) { self.code = code }

    static let names = ["other", "chest", "wrist", "finger", "hand", "earLobe", "foot"]

    /// lowerCamelCase name from the spec table, `"reserved"` for RFU codes.
    public var name: String { Int(code) < Self.names.count ? Self.names[Int(code)] : "reserved" }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> BodySensorLocation {
        guard bytes.count == 1 else { throw .wrongLength(.bodySensorLocation, expected: 1, got: bytes.count) }
        return BodySensorLocation(code: bytes[0])
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> BodySensorLocation {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { [code] }
}

/// Sensor Location 0x2A5D (CSCS/RSCS): one octet, 17–255 reserved.
public struct SensorLocation: Equatable, Sendable {
    public var code: UInt8

    public init(code: UInt8) { self.code = code }

    static let names = ["other", "topOfShoe", "inShoe", "hip", "frontWheel", "leftCrank", "rightCrank",
                        "leftPedal", "rightPedal", "frontHub", "rearDropout", "chainstay", "rearWheel",
                        "rearHub", "chest", "spider", "chainRing"]

    public var name: String { Int(code) < Self.names.count ? Self.names[Int(code)] : "reserved" }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> SensorLocation {
        guard bytes.count == 1 else { throw .wrongLength(.sensorLocation, expected: 1, got: bytes.count) }
        return SensorLocation(code: bytes[0])
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> SensorLocation {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { [code] }
}

/// Battery Level 0x2A19: uint8 percent; above 100 or a length other than 1 is invalid
/// (docs/decoding.md#battery-level-0x2a19; the Kotlin nRF Toolbox accepting 255 is the bug we
/// test against).
public struct BatteryLevel: Equatable, Sendable {
    public var percent: UInt8

    public init(percent: UInt8) { self.percent = percent }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> BatteryLevel {
        guard bytes.count == 1 else { throw .wrongLength(.batteryLevel, expected: 1, got: bytes.count) }
        guard bytes[0] <= 100 else { throw .outOfRange(.batteryLevel, field: "battery level", value: Int(bytes[0])) }
        return BatteryLevel(percent: bytes[0])
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> BatteryLevel {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { [percent] }
}
