/// Heart Rate Control Point 0x2A39 (HRS §3.3): op code 0x01 resets Energy Expended; every
/// other value is reserved and a sensor answers ATT error 0x80 (Control Point Not Supported).
public struct HeartRateControlPoint: Equatable, Sendable {
    public var opCode: UInt8

    public init(opCode: UInt8) { self.opCode = opCode }

    public static let resetEnergyExpended = HeartRateControlPoint(opCode: 0x01)
    /// The ATT error a sensor returns for a reserved op code.
    public static let attErrorNotSupported: UInt8 = 0x80

    public var operation: String { opCode == 0x01 ? "resetEnergyExpended" : "reserved" }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> HeartRateControlPoint {
        guard bytes.count == 1 else { throw .wrongLength(.heartRateControlPoint, expected: 1, got: bytes.count) }
        return HeartRateControlPoint(opCode: bytes[0])
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> HeartRateControlPoint {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { [opCode] }
}

/// SC Control Point 0x2A55 requests (write), shared by CSCS and RSCS.
public enum SCControlPointRequest: Equatable, Sendable {
    case setCumulativeValue(UInt32)
    case startSensorCalibration
    case updateSensorLocation(SensorLocation)
    case requestSupportedSensorLocations

    public var opCode: UInt8 {
        switch self {
        case .setCumulativeValue: 1
        case .startSensorCalibration: 2
        case .updateSensorLocation: 3
        case .requestSupportedSensorLocations: 4
        }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 5)
        w.u8(opCode)
        switch self {
        case let .setCumulativeValue(value): w.u32(value)
        case let .updateSensorLocation(location): w.u8(location.code)
        case .startSensorCalibration, .requestSupportedSensorLocations: break
        }
        return w.bytes
    }
}

/// SC Control Point indication: 0x10, the request op code, a response value, and for a
/// successful "request supported sensor locations" the list of location codes.
public struct SCControlPointResponse: Equatable, Sendable {
    public enum Result: UInt8, Sendable {
        case success = 1
        case opCodeNotSupported = 2
        case invalidParameter = 3
        case operationFailed = 4
    }

    public var requestOpCode: UInt8
    /// nil for a reserved response value (kept as `rawResult`).
    public var result: Result?
    public var rawResult: UInt8
    public var supportedLocations: [SensorLocation]

    public init(requestOpCode: UInt8, rawResult: UInt8, supportedLocations: [SensorLocation] = []) {
        self.requestOpCode = requestOpCode
        self.rawResult = rawResult
        result = Result(rawValue: rawResult)
        self.supportedLocations = supportedLocations
    }

    public static let responseOpCode: UInt8 = 0x10

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> SCControlPointResponse {
        guard bytes.count >= 1 else { throw .truncated(.scControlPoint, field: "op code", needed: 1, got: 0) }
        guard bytes[0] == responseOpCode else { throw .notAResponse(.scControlPoint, opCode: bytes[0]) }
        guard bytes.count >= 3 else {
            throw .truncated(.scControlPoint, field: "request op code and response value", needed: 3, got: bytes.count)
        }
        var locations: [SensorLocation] = []
        if bytes[1] == 4 && bytes[2] == Result.success.rawValue {
            for i in 3..<bytes.count { locations.append(SensorLocation(code: bytes[i])) }
        }
        return SCControlPointResponse(requestOpCode: bytes[1], rawResult: bytes[2], supportedLocations: locations)
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> SCControlPointResponse {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] {
        [Self.responseOpCode, requestOpCode, rawResult] + supportedLocations.map(\.code)
    }
}
