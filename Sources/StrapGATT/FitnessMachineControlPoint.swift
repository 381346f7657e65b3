/// Set Indoor Bike Simulation Parameters (FTMS op code 0x11, status 0x12): six octets in the
/// wire's resolutions. `init(windSpeed:grade:rollingResistance:windResistance:)` converts from
/// SI and refuses values the fields cannot carry.
public struct IndoorBikeSimulationParameters: Equatable, Sendable {
    /// 1/1000 m/s, positive is a headwind.
    public var windSpeed: Int16
    /// 1/100 %.
    public var grade: Int16
    /// Coefficient of rolling resistance Crr, 1/10000.
    public var rollingResistance: UInt8
    /// Wind resistance coefficient Cw, 1/100 kg/m.
    public var windResistance: UInt8

    public init(windSpeed: Int16, grade: Int16, rollingResistance: UInt8, windResistance: UInt8) {
        self.windSpeed = windSpeed
        self.grade = grade
        self.rollingResistance = rollingResistance
        self.windResistance = windResistance
    }

    /// From m/s, percent, Crr and kg/m, rounded to the nearest wire step.
    public init(windSpeed metresPerSecond: Double, grade percent: Double, rollingResistance crr: Double,
                windResistance cw: Double) throws(ControlPointValueError) {
        windSpeed = try ControlPointValueError.quantize(metresPerSecond, "wind speed (m/s)", step: 0.001, as: Int16.self)
        grade = try ControlPointValueError.quantize(percent, "grade (%)", step: 0.01, as: Int16.self)
        rollingResistance = try ControlPointValueError.quantize(crr, "rolling resistance (Crr)", step: 0.0001, as: UInt8.self)
        windResistance = try ControlPointValueError.quantize(cw, "wind resistance (kg/m)", step: 0.01, as: UInt8.self)
    }

    init(octets b: [UInt8], at i: Int) {
        windSpeed = Int16(bitPattern: UInt16(b[i]) | UInt16(b[i + 1]) << 8)
        grade = Int16(bitPattern: UInt16(b[i + 2]) | UInt16(b[i + 3]) << 8)
        rollingResistance = b[i + 4]
        windResistance = b[i + 5]
    }

    func write(to w: inout ByteWriter) {
        w.s16(windSpeed)
        w.s16(grade)
        w.u8(rollingResistance)
        w.u8(windResistance)
    }
}

/// A control point value that cannot be sent: outside what the trainer says it supports, or
/// outside what the wire field can carry.
public enum ControlPointValueError: Error, Equatable, Sendable, CustomStringConvertible {
    case belowMinimum(field: StaticStringName, value: Double, minimum: Double)
    case aboveMaximum(field: StaticStringName, value: Double, maximum: Double)
    case notFinite(field: StaticStringName)

    public var description: String {
        switch self {
        case let .belowMinimum(field, value, minimum): "\(field) \(value) is below the supported minimum \(minimum)"
        case let .aboveMaximum(field, value, maximum): "\(field) \(value) is above the supported maximum \(maximum)"
        case let .notFinite(field): "\(field) is not a finite number"
        }
    }

    /// `value / step` rounded to the nearest integer of type `T`, or the error saying why not.
    static func quantize<T: FixedWidthInteger>(_ value: Double, _ field: StaticStringName, step: Double,
                                               as: T.Type) throws(ControlPointValueError) -> T {
        guard value.isFinite else { throw .notFinite(field: field) }
        let raw = (value / step).rounded()
        if raw < Double(T.min) { throw .belowMinimum(field: field, value: value, minimum: Double(T.min) * step) }
        if raw > Double(T.max) { throw .aboveMaximum(field: field, value: value, maximum: Double(T.max) * step) }
        return T(raw)
    }
}

/// Fitness Machine Control Point 0x2AD9 requests (write; the machine indicates a response).
public enum FitnessMachineControlPointRequest: Equatable, Sendable {
    case requestControl
    case reset
    /// 1/100 km/h.
    case setTargetSpeed(UInt16)
    /// 1/10 %.
    case setTargetInclination(Int16)
    /// 1/10, unitless: one octet, as FTMS v1.0 defines it.
    case setTargetResistanceLevel(UInt8)
    /// Watts (ERG).
    case setTargetPower(Int16)
    case setTargetHeartRate(UInt8)
    case startOrResume
    case stopOrPause(StopOrPause)
    case setIndoorBikeSimulationParameters(IndoorBikeSimulationParameters)
    /// 1/10 mm.
    case setWheelCircumference(UInt16)
    /// 1 start, 2 ignore.
    case spinDownControl(UInt8)
    /// 1/2 rpm.
    case setTargetedCadence(UInt16)

    public enum StopOrPause: UInt8, Sendable {
        case stop = 1
        case pause = 2
    }

    public var opCode: UInt8 {
        switch self {
        case .requestControl: 0x00
        case .reset: 0x01
        case .setTargetSpeed: 0x02
        case .setTargetInclination: 0x03
        case .setTargetResistanceLevel: 0x04
        case .setTargetPower: 0x05
        case .setTargetHeartRate: 0x06
        case .startOrResume: 0x07
        case .stopOrPause: 0x08
        case .setIndoorBikeSimulationParameters: 0x11
        case .setWheelCircumference: 0x12
        case .spinDownControl: 0x13
        case .setTargetedCadence: 0x14
        }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 7)
        w.u8(opCode)
        switch self {
        case .requestControl, .reset, .startOrResume: break
        case let .setTargetSpeed(v), let .setWheelCircumference(v), let .setTargetedCadence(v): w.u16(v)
        case let .setTargetInclination(v), let .setTargetPower(v): w.s16(v)
        case let .setTargetResistanceLevel(v), let .setTargetHeartRate(v), let .spinDownControl(v): w.u8(v)
        case let .stopOrPause(v): w.u8(v.rawValue)
        case let .setIndoorBikeSimulationParameters(p): p.write(to: &w)
        }
        return w.bytes
    }

    /// Parses a written request (what a simulated trainer receives). Exact lengths; a stop or
    /// pause parameter other than 1 or 2 is out of range.
    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> FitnessMachineControlPointRequest {
        let c = GATTCharacteristic.fitnessMachineControlPoint
        guard let op = bytes.first else { throw .truncated(c, field: "op code", needed: 1, got: 0) }
        let parameterLength: Int = switch op {
        case 0x00, 0x01, 0x07: 0
        case 0x04, 0x06, 0x08, 0x13: 1
        case 0x02, 0x03, 0x05, 0x12, 0x14: 2
        case 0x11: 6
        default: throw .unknownOpCode(c, opCode: op)
        }
        guard bytes.count == 1 + parameterLength else { throw .wrongLength(c, expected: 1 + parameterLength, got: bytes.count) }
        let u16 = parameterLength == 2 ? UInt16(bytes[1]) | UInt16(bytes[2]) << 8 : 0
        switch op {
        case 0x00: return .requestControl
        case 0x01: return .reset
        case 0x02: return .setTargetSpeed(u16)
        case 0x03: return .setTargetInclination(Int16(bitPattern: u16))
        case 0x04: return .setTargetResistanceLevel(bytes[1])
        case 0x05: return .setTargetPower(Int16(bitPattern: u16))
        case 0x06: return .setTargetHeartRate(bytes[1])
        case 0x07: return .startOrResume
        case 0x08:
            guard let p = StopOrPause(rawValue: bytes[1]) else { throw .outOfRange(c, field: "stop or pause", value: Int(bytes[1])) }
            return .stopOrPause(p)
        case 0x11: return .setIndoorBikeSimulationParameters(IndoorBikeSimulationParameters(octets: bytes, at: 1))
        case 0x12: return .setWheelCircumference(u16)
        case 0x13: return .spinDownControl(bytes[1])
        default: return .setTargetedCadence(u16)
        }
    }
}

/// Fitness Machine Control Point indication: 0x80, the request op code, a result code, and for
/// a successful spin down the two target speeds.
public struct FitnessMachineControlPointResponse: Equatable, Sendable {
    public enum Result: UInt8, Sendable {
        case success = 1
        case opCodeNotSupported = 2
        case invalidParameter = 3
        case operationFailed = 4
        /// Another client holds control, or Request Control was not written first.
        case controlNotPermitted = 5
    }

    /// Spin down (op code 0x13, success): the speed window to coast down through, 1/100 km/h.
    public struct SpinDownSpeeds: Equatable, Sendable {
        public var low: UInt16
        public var high: UInt16
        public init(low: UInt16, high: UInt16) { (self.low, self.high) = (low, high) }
    }

    public var requestOpCode: UInt8
    public var rawResult: UInt8
    /// nil for a reserved result code (kept as `rawResult`).
    public var result: Result?
    public var spinDownSpeeds: SpinDownSpeeds?

    public init(requestOpCode: UInt8, rawResult: UInt8, spinDownSpeeds: SpinDownSpeeds? = nil) {
        self.requestOpCode = requestOpCode
        self.rawResult = rawResult
        result = Result(rawValue: rawResult)
        self.spinDownSpeeds = spinDownSpeeds
    }

    public init(requestOpCode: UInt8, result: Result) { self.init(requestOpCode: requestOpCode, rawResult: result.rawValue) }

    public static let responseOpCode: UInt8 = 0x80

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> FitnessMachineControlPointResponse {
        let c = GATTCharacteristic.fitnessMachineControlPoint
        guard bytes.count >= 1 else { throw .truncated(c, field: "op code", needed: 1, got: 0) }
        guard bytes[0] == responseOpCode else { throw .notAResponse(c, opCode: bytes[0]) }
        guard bytes.count >= 3 else { throw .truncated(c, field: "request op code and result code", needed: 3, got: bytes.count) }
        var response = FitnessMachineControlPointResponse(requestOpCode: bytes[1], rawResult: bytes[2])
        if bytes[1] == 0x13 && bytes[2] == Result.success.rawValue {
            guard bytes.count >= 7 else { throw .truncated(c, field: "spin down target speeds", needed: 7, got: bytes.count) }
            response.spinDownSpeeds = SpinDownSpeeds(low: UInt16(bytes[3]) | UInt16(bytes[4]) << 8,
                                                     high: UInt16(bytes[5]) | UInt16(bytes[6]) << 8)
        }
        return response
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> FitnessMachineControlPointResponse {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 7)
        w.u8(Self.responseOpCode)
        w.u8(requestOpCode)
        w.u8(rawResult)
        if let s = spinDownSpeeds { w.u16(s.low); w.u16(s.high) }
        return w.bytes
    }
}

extension SupportedRange {
    /// The value to send for a target, in the range's unit (W for power, 1/10 for resistance):
    /// refused if outside [minimum, maximum]; otherwise snapped to the nearest step of
    /// `increment` from the minimum (never past the maximum). Pure; `field` names the errors.
    public func validate(_ target: Double, field: StaticStringName) throws(ControlPointValueError) -> Int16 {
        guard target.isFinite else { throw .notFinite(field: field) }
        if target < Double(minimum) { throw .belowMinimum(field: field, value: target, minimum: Double(minimum)) }
        if target > Double(maximum) { throw .aboveMaximum(field: field, value: target, maximum: Double(maximum)) }
        guard increment > 1 else { return Int16(target.rounded()) }
        let step = Double(increment)
        var snapped = Double(minimum) + ((target - Double(minimum)) / step).rounded() * step
        if snapped > Double(maximum) { snapped -= step }
        return Int16(max(Double(minimum), snapped))
    }

    /// Set Target Power for `watts`, checked against this Supported Power Range.
    public func targetPower(_ watts: Double) throws(ControlPointValueError) -> FitnessMachineControlPointRequest {
        .setTargetPower(try validate(watts, field: "target power (W)"))
    }

    /// Set Target Resistance Level for `level` (unitless, e.g. 12.5), checked against this
    /// Supported Resistance Level Range (whose fields are in 1/10) and the one-octet field.
    public func targetResistanceLevel(_ level: Double) throws(ControlPointValueError) -> FitnessMachineControlPointRequest {
        let tenths = try validate(level * 10, field: "target resistance level (1/10)")
        if tenths < 0 { throw .belowMinimum(field: "target resistance level (1/10)", value: level * 10, minimum: 0) }
        if tenths > 255 { throw .aboveMaximum(field: "target resistance level (1/10)", value: level * 10, maximum: 255) }
        return .setTargetResistanceLevel(UInt8(tenths))
    }
}
