/// Cycling Power Feature 0x2A65: a uint32 bit field (docs/decoding.md#cycling-power-feature-0x2a65).
public struct CyclingPowerFeature: Equatable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Bit 16: what the extreme magnitudes and offset compensation measure.
    public enum MeasurementContext: Sendable { case forceBased, torqueBased }
    /// Bits 20–21.
    public enum DistributedSystemSupport: UInt8, Sendable {
        case unspecified = 0, notForDistributedSystem = 1, forDistributedSystem = 2, reserved = 3
    }

    func bit(_ n: UInt32) -> Bool { rawValue & (1 << n) != 0 }

    public var pedalPowerBalanceSupported: Bool { bit(0) }
    public var accumulatedTorqueSupported: Bool { bit(1) }
    public var wheelRevolutionDataSupported: Bool { bit(2) }
    public var crankRevolutionDataSupported: Bool { bit(3) }
    public var extremeMagnitudesSupported: Bool { bit(4) }
    public var extremeAnglesSupported: Bool { bit(5) }
    public var deadSpotAnglesSupported: Bool { bit(6) }
    public var accumulatedEnergySupported: Bool { bit(7) }
    public var offsetCompensationIndicatorSupported: Bool { bit(8) }
    public var offsetCompensationSupported: Bool { bit(9) }
    public var measurementContentMaskingSupported: Bool { bit(10) }
    public var multipleSensorLocationsSupported: Bool { bit(11) }
    public var crankLengthAdjustmentSupported: Bool { bit(12) }
    public var chainLengthAdjustmentSupported: Bool { bit(13) }
    public var chainWeightAdjustmentSupported: Bool { bit(14) }
    public var spanLengthAdjustmentSupported: Bool { bit(15) }
    public var measurementContext: MeasurementContext { bit(16) ? .torqueBased : .forceBased }
    public var instantaneousMeasurementDirectionSupported: Bool { bit(17) }
    public var factoryCalibrationDateSupported: Bool { bit(18) }
    public var enhancedOffsetCompensationSupported: Bool { bit(19) }
    public var distributedSystemSupport: DistributedSystemSupport {
        DistributedSystemSupport(rawValue: UInt8((rawValue >> 20) & 0b11)) ?? .reserved
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> CyclingPowerFeature {
        guard bytes.count >= 4 else {
            throw .truncated(.cyclingPowerFeature, field: "feature bits", needed: 4, got: bytes.count)
        }
        var r = PrecheckedByteReader(bytes)
        return CyclingPowerFeature(rawValue: r.u32())
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> CyclingPowerFeature {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { var w = ByteWriter(capacity: 4); w.u32(rawValue); return w.bytes }
}

/// Cycling Power Control Point 0x2A66 requests (write; the sensor indicates a response).
public enum CyclingPowerControlPointRequest: Equatable, Sendable {
    case setCumulativeValue(UInt32)
    case updateSensorLocation(SensorLocation)
    case requestSupportedSensorLocations
    /// In 1/2 mm (172.5 mm is 345).
    case setCrankLength(UInt16)
    case requestCrankLength
    /// In mm.
    case setChainLength(UInt16)
    case requestChainLength
    /// In g.
    case setChainWeight(UInt16)
    case requestChainWeight
    /// In mm.
    case setSpanLength(UInt16)
    case requestSpanLength
    case startOffsetCompensation
    /// Bits set here switch the matching measurement fields *off* (CPS §3.4.2.13).
    case maskMeasurementContent(UInt16)
    case requestSamplingRate
    case requestFactoryCalibrationDate
    case startEnhancedOffsetCompensation

    public var opCode: UInt8 {
        switch self {
        case .setCumulativeValue: 1
        case .updateSensorLocation: 2
        case .requestSupportedSensorLocations: 3
        case .setCrankLength: 4
        case .requestCrankLength: 5
        case .setChainLength: 6
        case .requestChainLength: 7
        case .setChainWeight: 8
        case .requestChainWeight: 9
        case .setSpanLength: 10
        case .requestSpanLength: 11
        case .startOffsetCompensation: 12
        case .maskMeasurementContent: 13
        case .requestSamplingRate: 14
        case .requestFactoryCalibrationDate: 15
        case .startEnhancedOffsetCompensation: 16
        }
    }

    /// Set Crank Length from millimetres, rounded to the wire's 1/2 mm; a length the field
    /// cannot carry (negative, not finite, above 32 767.5 mm) is refused.
    public static func setCrankLength(millimetres: Double) throws(ControlPointValueError) -> CyclingPowerControlPointRequest {
        .setCrankLength(try ControlPointValueError.quantize(millimetres, "crank length (mm)", step: 0.5, as: UInt16.self))
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 5)
        w.u8(opCode)
        switch self {
        case let .setCumulativeValue(v): w.u32(v)
        case let .updateSensorLocation(location): w.u8(location.code)
        case let .setCrankLength(v), let .setChainLength(v), let .setChainWeight(v), let .setSpanLength(v),
             let .maskMeasurementContent(v):
            w.u16(v)
        case .requestSupportedSensorLocations, .requestCrankLength, .requestChainLength, .requestChainWeight,
             .requestSpanLength, .startOffsetCompensation, .requestSamplingRate, .requestFactoryCalibrationDate,
             .startEnhancedOffsetCompensation:
            break
        }
        return w.bytes
    }

    /// Parses a written request (what a simulated power meter receives). Exact lengths.
    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> CyclingPowerControlPointRequest {
        let c = GATTCharacteristic.cyclingPowerControlPoint
        guard let op = bytes.first else { throw .truncated(c, field: "op code", needed: 1, got: 0) }
        let parameterLength: Int = switch op {
        case 1: 4
        case 2: 1
        case 4, 6, 8, 10, 13: 2
        case 3, 5, 7, 9, 11, 12, 14, 15, 16: 0
        default: throw .unknownOpCode(c, opCode: op)
        }
        guard bytes.count == 1 + parameterLength else { throw .wrongLength(c, expected: 1 + parameterLength, got: bytes.count) }
        let u16 = parameterLength == 2 ? UInt16(bytes[1]) | UInt16(bytes[2]) << 8 : 0
        return switch op {
        case 1: .setCumulativeValue(UInt32(bytes[1]) | UInt32(bytes[2]) << 8 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 24)
        case 2: .updateSensorLocation(SensorLocation(code: bytes[1]))
        case 3: .requestSupportedSensorLocations
        case 4: .setCrankLength(u16)
        case 5: .requestCrankLength
        case 6: .setChainLength(u16)
        case 7: .requestChainLength
        case 8: .setChainWeight(u16)
        case 9: .requestChainWeight
        case 10: .setSpanLength(u16)
        case 11: .requestSpanLength
        case 12: .startOffsetCompensation
        case 13: .maskMeasurementContent(u16)
        case 14: .requestSamplingRate
        case 15: .requestFactoryCalibrationDate
        default: .startEnhancedOffsetCompensation
        }
    }
}

/// Cycling Power Control Point indication: 0x20, the request op code, a result, and the
/// parameter that result carries (docs/decoding.md#cycling-power-control-point-0x2a66).
public struct CyclingPowerControlPointResponse: Equatable, Sendable {
    public enum Result: UInt8, Sendable {
        case success = 1
        case opCodeNotSupported = 2
        case invalidParameter = 3
        case operationFailed = 4
    }

    /// Date Time (0x2A08 layout): year 0 and month/day 0 mean "not known".
    public struct DateTime: Equatable, Sendable {
        public var year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8
        public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
            (self.year, self.month, self.day, self.hours, self.minutes, self.seconds) = (year, month, day, hours, minutes, seconds)
        }
    }

    public enum Parameter: Equatable, Sendable {
        case none
        case supportedLocations([SensorLocation])
        /// 1/2 mm.
        case crankLength(UInt16)
        /// mm.
        case chainLength(UInt16)
        /// g.
        case chainWeight(UInt16)
        /// mm.
        case spanLength(UInt16)
        /// Start (enhanced) offset compensation: raw force in N or torque in 1/32 N·m, as the
        /// feature's measurement context says.
        case offset(Int16)
        /// Hz.
        case samplingRate(UInt8)
        case factoryCalibrationDate(DateTime)
        /// Enhanced offset compensation failed: 1 incorrect calibration position,
        /// 0xFF manufacturer-specific (its octets are not kept).
        case offsetCompensationError(UInt8)
    }

    public var requestOpCode: UInt8
    public var rawResult: UInt8
    /// nil for a reserved result value (kept as `rawResult`).
    public var result: Result?
    public var parameter: Parameter

    public init(requestOpCode: UInt8, rawResult: UInt8, parameter: Parameter = .none) {
        self.requestOpCode = requestOpCode
        self.rawResult = rawResult
        result = Result(rawValue: rawResult)
        self.parameter = parameter
    }

    public static let responseOpCode: UInt8 = 0x20

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> CyclingPowerControlPointResponse {
        let c = GATTCharacteristic.cyclingPowerControlPoint
        guard let first = bytes.first else { throw .truncated(c, field: "op code", needed: 1, got: 0) }
        guard first == responseOpCode else { throw .notAResponse(c, opCode: first) }
        guard bytes.count >= 3 else { throw .truncated(c, field: "request op code and result", needed: 3, got: bytes.count) }
        let request = bytes[1], raw = bytes[2]
        func need(_ n: Int, _ field: StaticStringName) throws(GATTDecodingError) {
            if bytes.count < 3 + n { throw .truncated(c, field: field, needed: 3 + n, got: bytes.count) }
        }
        let u16 = { UInt16(bytes[3]) | UInt16(bytes[4]) << 8 }
        var parameter = Parameter.none
        if raw == Result.success.rawValue {
            switch request {
            case 3: parameter = .supportedLocations(bytes[3...].map { SensorLocation(code: $0) })
            case 5: try need(2, "crank length"); parameter = .crankLength(u16())
            case 7: try need(2, "chain length"); parameter = .chainLength(u16())
            case 9: try need(2, "chain weight"); parameter = .chainWeight(u16())
            case 11: try need(2, "span length"); parameter = .spanLength(u16())
            case 12, 16: try need(2, "offset"); parameter = .offset(Int16(bitPattern: u16()))
            case 14: try need(1, "sampling rate"); parameter = .samplingRate(bytes[3])
            case 15:
                try need(7, "factory calibration date")
                parameter = .factoryCalibrationDate(DateTime(year: u16(), month: bytes[5], day: bytes[6],
                                                             hours: bytes[7], minutes: bytes[8], seconds: bytes[9]))
            default: break
            }
        } else if raw == Result.operationFailed.rawValue && request == 16 && bytes.count >= 4 {
            parameter = .offsetCompensationError(bytes[3])
        }
        return CyclingPowerControlPointResponse(requestOpCode: request, rawResult: raw, parameter: parameter)
    }

    /// Encodes as a sensor would indicate it (simulator, tests).
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 10)
        w.u8(Self.responseOpCode)
        w.u8(requestOpCode)
        w.u8(rawResult)
        switch parameter {
        case .none: break
        case let .supportedLocations(list): for l in list { w.u8(l.code) }
        case let .crankLength(v), let .chainLength(v), let .chainWeight(v), let .spanLength(v): w.u16(v)
        case let .offset(v): w.s16(v)
        case let .samplingRate(v), let .offsetCompensationError(v): w.u8(v)
        case let .factoryCalibrationDate(d):
            w.u16(d.year); w.u8(d.month); w.u8(d.day); w.u8(d.hours); w.u8(d.minutes); w.u8(d.seconds)
        }
        return w.bytes
    }
}
