/// Fitness Machine Feature 0x2ACC: two uint32 bit fields, what the machine reports and which
/// targets it accepts (docs/decoding.md#fitness-machine-feature-0x2acc).
public struct FitnessMachineFeature: Equatable, Sendable {
    public var machineFeatures: UInt32
    public var targetSettingFeatures: UInt32

    public init(machineFeatures: UInt32, targetSettingFeatures: UInt32) {
        self.machineFeatures = machineFeatures
        self.targetSettingFeatures = targetSettingFeatures
    }

    public var averageSpeedSupported: Bool { machineFeatures & (1 << 0) != 0 }
    public var cadenceSupported: Bool { machineFeatures & (1 << 1) != 0 }
    public var totalDistanceSupported: Bool { machineFeatures & (1 << 2) != 0 }
    public var resistanceLevelSupported: Bool { machineFeatures & (1 << 7) != 0 }
    public var expendedEnergySupported: Bool { machineFeatures & (1 << 9) != 0 }
    public var heartRateMeasurementSupported: Bool { machineFeatures & (1 << 10) != 0 }
    public var elapsedTimeSupported: Bool { machineFeatures & (1 << 12) != 0 }
    public var powerMeasurementSupported: Bool { machineFeatures & (1 << 14) != 0 }

    public var resistanceTargetSupported: Bool { targetSettingFeatures & (1 << 2) != 0 }
    public var powerTargetSupported: Bool { targetSettingFeatures & (1 << 3) != 0 }
    public var indoorBikeSimulationSupported: Bool { targetSettingFeatures & (1 << 13) != 0 }
    public var wheelCircumferenceSupported: Bool { targetSettingFeatures & (1 << 14) != 0 }
    public var spinDownSupported: Bool { targetSettingFeatures & (1 << 15) != 0 }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> FitnessMachineFeature {
        guard bytes.count >= 8 else {
            let field: StaticStringName = bytes.count < 4 ? "fitness machine features" : "target setting features"
            throw .truncated(.fitnessMachineFeature, field: field, needed: bytes.count < 4 ? 4 : 8, got: bytes.count)
        }
        var r = PrecheckedByteReader(bytes)
        let machine = r.u32()
        return FitnessMachineFeature(machineFeatures: machine, targetSettingFeatures: r.u32())
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> FitnessMachineFeature {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 8)
        w.u32(machineFeatures)
        w.u32(targetSettingFeatures)
        return w.bytes
    }
}

/// Supported Power Range 0x2AD8 (W) and Supported Resistance Level Range 0x2AD6 (1/10, unitless):
/// sint16 minimum, sint16 maximum, uint16 minimum increment — the same six octets.
public struct SupportedRange: Equatable, Sendable {
    public var minimum: Int16
    public var maximum: Int16
    public var increment: UInt16

    public init(minimum: Int16, maximum: Int16, increment: UInt16) {
        self.minimum = minimum
        self.maximum = maximum
        self.increment = increment
    }

    public static func decode(_ c: GATTCharacteristic, _ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> SupportedRange {
        guard bytes.count == 6 else { throw .wrongLength(c, expected: 6, got: bytes.count) }
        var r = PrecheckedByteReader(bytes)
        let minimum = r.s16(), maximum = r.s16()
        let range = SupportedRange(minimum: minimum, maximum: maximum, increment: r.u16())
        guard minimum <= maximum else { throw .outOfRange(c, field: "minimum above maximum", value: Int(minimum)) }
        return range
    }

    /// `c` is `.supportedPowerRange` or `.supportedResistanceLevelRange` (names the errors).
    public static func decode(_ c: GATTCharacteristic, _ bytes: [UInt8]) throws(GATTDecodingError) -> SupportedRange {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(c, raw) }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 6)
        w.s16(minimum)
        w.s16(maximum)
        w.u16(increment)
        return w.bytes
    }
}

/// Training Status 0x2AD3: flags, a status code, and optionally a UTF-8 string (the only
/// field here that allocates, and only when present).
public struct TrainingStatus: Equatable, Sendable {
    public var code: UInt8
    public var text: String?
    /// Flag bit 1: the string continues in the Extended String of a later read.
    public var extendedString: Bool

    public init(code: UInt8, text: String? = nil, extendedString: Bool = false) {
        self.code = code
        self.text = text
        self.extendedString = extendedString
    }

    static let names = ["other", "idle", "warmingUp", "lowIntensityInterval", "highIntensityInterval",
                        "recoveryInterval", "isometric", "heartRateControl", "fitnessTest", "speedOutsideControlRegionLow",
                        "speedOutsideControlRegionHigh", "coolDown", "wattControl", "manualMode", "preWorkout", "postWorkout"]

    public var name: String { Int(code) < Self.names.count ? Self.names[Int(code)] : "reserved" }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> TrainingStatus {
        guard bytes.count >= 2 else { throw .truncated(.trainingStatus, field: "training status", needed: 2, got: bytes.count) }
        let flags = bytes[0]
        var text: String?
        if flags & 0x01 != 0 {
            guard let s = String(validating: bytes[2...], as: UTF8.self) else { throw .invalidUTF8(.trainingStatus) }
            text = s
        }
        return TrainingStatus(code: bytes[1], text: text, extendedString: flags & 0x02 != 0)
    }

    public func encoded() -> [UInt8] {
        [(text != nil ? 0x01 : 0) | (extendedString ? 0x02 : 0), code] + Array((text ?? "").utf8)
    }
}

/// Fitness Machine Status 0x2ADA (notify): what changed on the machine, including a change
/// another client or the user made, and "control permission lost".
public enum FitnessMachineStatus: Equatable, Sendable {
    case reset
    /// 1 stop, 2 pause.
    case stoppedOrPausedByUser(UInt8)
    case stoppedBySafetyKey
    case startedOrResumedByUser
    /// 1/100 km/h.
    case targetSpeedChanged(UInt16)
    /// 1/10 %.
    case targetInclineChanged(Int16)
    /// 1/10, unitless (uint8 as in FTMS v1.0).
    case targetResistanceLevelChanged(UInt8)
    /// Watts.
    case targetPowerChanged(Int16)
    case targetHeartRateChanged(UInt8)
    case indoorBikeSimulationParametersChanged(IndoorBikeSimulationParameters)
    /// 1/10 mm.
    case wheelCircumferenceChanged(UInt16)
    /// 1 requested, 2 success, 3 error, 4 stop pedalling.
    case spinDownStatus(UInt8)
    /// 1/2 rpm.
    case targetedCadenceChanged(UInt16)
    case controlPermissionLost
    /// A status this decoder does not model (targeted energy, steps, HR zones…): its op code;
    /// the parameter octets are not kept.
    case other(opCode: UInt8)

    public var opCode: UInt8 {
        switch self {
        case .reset: 0x01
        case .stoppedOrPausedByUser: 0x02
        case .stoppedBySafetyKey: 0x03
        case .startedOrResumedByUser: 0x04
        case .targetSpeedChanged: 0x05
        case .targetInclineChanged: 0x06
        case .targetResistanceLevelChanged: 0x07
        case .targetPowerChanged: 0x08
        case .targetHeartRateChanged: 0x09
        case .indoorBikeSimulationParametersChanged: 0x12
        case .wheelCircumferenceChanged: 0x13
        case .spinDownStatus: 0x14
        case .targetedCadenceChanged: 0x15
        case .controlPermissionLost: 0xFF
        case let .other(op): op
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> FitnessMachineStatus {
        let c = GATTCharacteristic.fitnessMachineStatus
        guard let op = bytes.first else { throw .truncated(c, field: "op code", needed: 1, got: 0) }
        func need(_ n: Int, _ field: StaticStringName) throws(GATTDecodingError) {
            if bytes.count < 1 + n { throw .truncated(c, field: field, needed: 1 + n, got: bytes.count) }
        }
        let u16 = { UInt16(bytes[1]) | UInt16(bytes[2]) << 8 }
        switch op {
        case 0x01: return .reset
        case 0x02: try need(1, "stop or pause"); return .stoppedOrPausedByUser(bytes[1])
        case 0x03: return .stoppedBySafetyKey
        case 0x04: return .startedOrResumedByUser
        case 0x05: try need(2, "target speed"); return .targetSpeedChanged(u16())
        case 0x06: try need(2, "target incline"); return .targetInclineChanged(Int16(bitPattern: u16()))
        case 0x07: try need(1, "target resistance level"); return .targetResistanceLevelChanged(bytes[1])
        case 0x08: try need(2, "target power"); return .targetPowerChanged(Int16(bitPattern: u16()))
        case 0x09: try need(1, "target heart rate"); return .targetHeartRateChanged(bytes[1])
        case 0x12:
            try need(6, "indoor bike simulation parameters")
            return .indoorBikeSimulationParametersChanged(IndoorBikeSimulationParameters(octets: bytes, at: 1))
        case 0x13: try need(2, "wheel circumference"); return .wheelCircumferenceChanged(u16())
        case 0x14: try need(1, "spin down status"); return .spinDownStatus(bytes[1])
        case 0x15: try need(2, "targeted cadence"); return .targetedCadenceChanged(u16())
        case 0xFF: return .controlPermissionLost
        default: return .other(opCode: op)
        }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 7)
        w.u8(opCode)
        switch self {
        case let .stoppedOrPausedByUser(v), let .targetResistanceLevelChanged(v), let .targetHeartRateChanged(v),
             let .spinDownStatus(v):
            w.u8(v)
        case let .targetSpeedChanged(v), let .wheelCircumferenceChanged(v), let .targetedCadenceChanged(v): w.u16(v)
        case let .targetInclineChanged(v), let .targetPowerChanged(v): w.s16(v)
        case let .indoorBikeSimulationParametersChanged(p): p.write(to: &w)
        case .reset, .stoppedBySafetyKey, .startedOrResumedByUser, .controlPermissionLost, .other: break
        }
        return w.bytes
    }
}
