/// Cycling Power Measurement 0x2A63 (CPS v1.1 §3.2, docs/decoding.md#cycling-power-measurement-0x2a63).
/// Raw fields in their wire units, with helpers for SI; speed and cadence from the revolution
/// data come from `CSCDerivation.update(_:receivedAt:)`, which needs two packets.
public struct CyclingPowerMeasurement: Equatable, Sendable {
    /// Flag bit 1: whose pedal the balance is the share of.
    public enum PedalPowerBalanceReference: UInt8, Sendable {
        case unknown = 0
        case left = 1
    }

    /// Flag bit 3: where the accumulated torque is measured.
    public enum AccumulatedTorqueSource: UInt8, Sendable {
        case wheelBased = 0
        case crankBased = 1
    }

    public struct WheelRevolutionData: Equatable, Sendable {
        /// Cumulative wheel revolutions, uint32, wraps at 2³².
        public var revolutions: UInt32
        /// Last wheel event time in 1/2048 s (not 1/1024 s as in CSC), wraps every 32 s.
        public var eventTime: UInt16
        public init(revolutions: UInt32, eventTime: UInt16) {
            self.revolutions = revolutions
            self.eventTime = eventTime
        }
    }

    /// The crank block has the same layout and units (uint16 revolutions, 1/1024 s) as CSC's.
    public typealias CrankRevolutionData = CSCMeasurement.CrankData

    /// A pair of extreme magnitudes since the last notification (sint16 each).
    public struct Extremes: Equatable, Sendable {
        public var maximum: Int16
        public var minimum: Int16
        public init(maximum: Int16, minimum: Int16) {
            self.maximum = maximum
            self.minimum = minimum
        }
    }

    /// Crank angles, in degrees, at which the extreme force or torque happened: two uint12
    /// packed into three octets, maximum in the low 12 bits.
    public struct ExtremeAngles: Equatable, Sendable {
        public var maximum: UInt16
        public var minimum: UInt16
        /// Values are masked to 12 bits, as the wire carries no more.
        public init(maximum: UInt16, minimum: UInt16) {
            self.maximum = maximum & 0x0FFF
            self.minimum = minimum & 0x0FFF
        }
    }

    /// Watts; may be negative (a sint16 on the wire, e.g. a trainer braking).
    public var instantaneousPower: Int16
    /// Share of the power from the reference pedal, in 1/2 %.
    public var pedalPowerBalance: UInt8?
    public var pedalPowerBalanceReference: PedalPowerBalanceReference
    /// In 1/32 N·m, wraps at 2¹⁶.
    public var accumulatedTorque: UInt16?
    public var accumulatedTorqueSource: AccumulatedTorqueSource
    public var wheel: WheelRevolutionData?
    public var crank: CrankRevolutionData?
    /// Newtons.
    public var extremeForce: Extremes?
    /// In 1/32 N·m.
    public var extremeTorque: Extremes?
    public var extremeAngles: ExtremeAngles?
    /// Degrees.
    public var topDeadSpotAngle: UInt16?
    public var bottomDeadSpotAngle: UInt16?
    /// Kilojoules since the last reset; wraps at 2¹⁶ (a `CumulativeCounter` when totalled).
    public var accumulatedEnergy: UInt16?
    /// Flag bit 12: the sensor asks the collector to run offset compensation.
    public var offsetCompensationIndicator: Bool
    public var warnings: DecodeWarnings

    public init(instantaneousPower: Int16, pedalPowerBalance: UInt8? = nil,
                pedalPowerBalanceReference: PedalPowerBalanceReference = .unknown,
                accumulatedTorque: UInt16? = nil, accumulatedTorqueSource: AccumulatedTorqueSource = .wheelBased,
                wheel: WheelRevolutionData? = nil, crank: CrankRevolutionData? = nil,
                extremeForce: Extremes? = nil, extremeTorque: Extremes? = nil, extremeAngles: ExtremeAngles? = nil,
                topDeadSpotAngle: UInt16? = nil, bottomDeadSpotAngle: UInt16? = nil, accumulatedEnergy: UInt16? = nil,
                offsetCompensationIndicator: Bool = false, warnings: DecodeWarnings = []) {
        self.instantaneousPower = instantaneousPower
        self.pedalPowerBalance = pedalPowerBalance
        self.pedalPowerBalanceReference = pedalPowerBalanceReference
        self.accumulatedTorque = accumulatedTorque
        self.accumulatedTorqueSource = accumulatedTorqueSource
        self.wheel = wheel
        self.crank = crank
        self.extremeForce = extremeForce
        self.extremeTorque = extremeTorque
        self.extremeAngles = extremeAngles
        self.topDeadSpotAngle = topDeadSpotAngle
        self.bottomDeadSpotAngle = bottomDeadSpotAngle
        self.accumulatedEnergy = accumulatedEnergy
        self.offsetCompensationIndicator = offsetCompensationIndicator
        self.warnings = warnings
    }

    /// Percent (0–127.5 as encoded; above 100 is a sensor fault the caller may flag).
    public var pedalPowerBalancePercent: Double? { pedalPowerBalance.map { Double($0) / 2 } }
    public var accumulatedTorqueNewtonMetres: Double? { accumulatedTorque.map { Double($0) / 32 } }

    public static let characteristic = GATTCharacteristic.cyclingPowerMeasurement

    /// Octets each flag bit adds after flags and power, in wire order (bits 1, 3 and 12 add none).
    @usableFromInline static let fieldLayout: [(bit: UInt16, size: Int, name: StaticStringName)] = [
        (0x0001, 1, "pedal power balance"), (0x0004, 2, "accumulated torque"),
        (0x0010, 6, "wheel revolution data"), (0x0020, 4, "crank revolution data"),
        (0x0040, 4, "extreme force magnitudes"), (0x0080, 4, "extreme torque magnitudes"),
        (0x0100, 3, "extreme angles"), (0x0200, 2, "top dead spot angle"),
        (0x0400, 2, "bottom dead spot angle"), (0x0800, 2, "accumulated energy"),
    ]

    /// The first field a too-short packet cuts, with the length that field needs (error path only).
    @usableFromInline static func cutField(flags: UInt16, count: Int) -> (StaticStringName, Int) {
        var end = 4
        for field in fieldLayout where flags & field.bit != 0 {
            end += field.size
            if count < end { return (field.name, end) }
        }
        return ("instantaneous power", 4)
    }

    @inlinable @inline(__always)
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> CyclingPowerMeasurement {
        try decodeCyclingPowerMeasurement(bytes)
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> CyclingPowerMeasurement {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public var flags: UInt16 {
        var f: UInt16 = 0
        if pedalPowerBalance != nil { f |= 0x0001 }
        if pedalPowerBalanceReference == .left { f |= 0x0002 }
        if accumulatedTorque != nil { f |= 0x0004 }
        if accumulatedTorqueSource == .crankBased { f |= 0x0008 }
        if wheel != nil { f |= 0x0010 }
        if crank != nil { f |= 0x0020 }
        if extremeForce != nil { f |= 0x0040 }
        if extremeTorque != nil { f |= 0x0080 }
        if extremeAngles != nil { f |= 0x0100 }
        if topDeadSpotAngle != nil { f |= 0x0200 }
        if bottomDeadSpotAngle != nil { f |= 0x0400 }
        if accumulatedEnergy != nil { f |= 0x0800 }
        if offsetCompensationIndicator { f |= 0x1000 }
        return f
    }

    /// Encodes as a sensor would (simulator, tests); `warnings` are not encoded.
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 34)
        w.u16(flags)
        w.s16(instantaneousPower)
        if let pedalPowerBalance { w.u8(pedalPowerBalance) }
        if let accumulatedTorque { w.u16(accumulatedTorque) }
        if let wheel { w.u32(wheel.revolutions); w.u16(wheel.eventTime) }
        if let crank { w.u16(crank.revolutions); w.u16(crank.eventTime) }
        if let extremeForce { w.s16(extremeForce.maximum); w.s16(extremeForce.minimum) }
        if let extremeTorque { w.s16(extremeTorque.maximum); w.s16(extremeTorque.minimum) }
        if let extremeAngles { w.u24(UInt32(extremeAngles.maximum) | UInt32(extremeAngles.minimum) << 12) }
        if let topDeadSpotAngle { w.u16(topDeadSpotAngle) }
        if let bottomDeadSpotAngle { w.u16(bottomDeadSpotAngle) }
        if let accumulatedEnergy { w.u16(accumulatedEnergy) }
        return w.bytes
    }
}

/// `CyclingPowerMeasurement.decode`'s body, a free function on purpose: as a static method its unused
/// metatype argument had the optimizer split it into a body without that argument and a public
/// thunk that copied the result out of a temporary right after the body's narrow stores, a
/// store-forwarding stall that cost a third of the decode (`perf annotate`, strap-bench decode,
/// issue 35). Nothing to drop, no thunk: the body writes the caller's result directly.
@inlinable
func decodeCyclingPowerMeasurement(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> CyclingPowerMeasurement {
    typealias WheelRevolutionData = CyclingPowerMeasurement.WheelRevolutionData
    typealias CrankRevolutionData = CyclingPowerMeasurement.CrankRevolutionData
    typealias Extremes = CyclingPowerMeasurement.Extremes
    typealias ExtremeAngles = CyclingPowerMeasurement.ExtremeAngles
    guard bytes.count >= 4 else {
        let field: StaticStringName = bytes.count < 2 ? "flags" : "instantaneous power"
        throw .truncated(.cyclingPowerMeasurement, field: field, needed: bytes.count < 2 ? 2 : 4, got: bytes.count)
    }
    var reader = PrecheckedByteReader(bytes)
    let flags = reader.u16()
    // Each bit tested alone with `&`; the sum is branch-light and allocation-free.
    var needed = 4
    if flags & 0x0001 != 0 { needed &+= 1 }
    if flags & 0x0004 != 0 { needed &+= 2 }
    if flags & 0x0010 != 0 { needed &+= 6 }
    if flags & 0x0020 != 0 { needed &+= 4 }
    if flags & 0x0040 != 0 { needed &+= 4 }
    if flags & 0x0080 != 0 { needed &+= 4 }
    if flags & 0x0100 != 0 { needed &+= 3 }
    if flags & 0x0200 != 0 { needed &+= 2 }
    if flags & 0x0400 != 0 { needed &+= 2 }
    if flags & 0x0800 != 0 { needed &+= 2 }
    guard bytes.count >= needed else {
        let (field, end) = CyclingPowerMeasurement.cutField(flags: flags, count: bytes.count)
        throw .truncated(.cyclingPowerMeasurement, field: field, needed: end, got: bytes.count)
    }
    // Fields into locals, then one initializer: building `m` by mutation kept it on the stack
    // and copied it out after byte-wide stores, twice the time (strap-bench decode, issue 35).
    let power = reader.s16()
    let balance: UInt8? = flags & 0x0001 != 0 ? reader.u8() : nil
    let torque: UInt16? = flags & 0x0004 != 0 ? reader.u16() : nil
    var wheel: WheelRevolutionData?
    if flags & 0x0010 != 0 {
        let revolutions = reader.u32()
        wheel = WheelRevolutionData(revolutions: revolutions, eventTime: reader.u16())
    }
    var crank: CrankRevolutionData?
    if flags & 0x0020 != 0 {
        let revolutions = reader.u16()
        crank = CrankRevolutionData(revolutions: revolutions, eventTime: reader.u16())
    }
    var force: Extremes?
    if flags & 0x0040 != 0 {
        let maximum = reader.s16()
        force = Extremes(maximum: maximum, minimum: reader.s16())
    }
    var torqueExtremes: Extremes?
    if flags & 0x0080 != 0 {
        let maximum = reader.s16()
        torqueExtremes = Extremes(maximum: maximum, minimum: reader.s16())
    }
    var angles: ExtremeAngles?
    if flags & 0x0100 != 0 {
        let packed = reader.u24()
        angles = ExtremeAngles(maximum: UInt16(packed & 0x0FFF), minimum: UInt16(packed >> 12))
    }
    let topDeadSpot: UInt16? = flags & 0x0200 != 0 ? reader.u16() : nil
    let bottomDeadSpot: UInt16? = flags & 0x0400 != 0 ? reader.u16() : nil
    let energy: UInt16? = flags & 0x0800 != 0 ? reader.u16() : nil
    var warnings: DecodeWarnings = []
    if flags & 0x00C0 == 0x00C0 { warnings.insert(.conflictingFlags) }
    if reader.remaining > 0 { warnings.insert(.trailingOctets) }
    return CyclingPowerMeasurement(
        instantaneousPower: power, pedalPowerBalance: balance,
        pedalPowerBalanceReference: flags & 0x0002 != 0 ? .left : .unknown, accumulatedTorque: torque,
        accumulatedTorqueSource: flags & 0x0008 != 0 ? .crankBased : .wheelBased, wheel: wheel, crank: crank,
        extremeForce: force, extremeTorque: torqueExtremes, extremeAngles: angles, topDeadSpotAngle: topDeadSpot,
        bottomDeadSpotAngle: bottomDeadSpot, accumulatedEnergy: energy,
        offsetCompensationIndicator: flags & 0x1000 != 0, warnings: warnings)
}

extension CSCDerivation {
    /// Speed and cadence from a Cycling Power Measurement's revolution data, by the CSC rules.
    /// The wheel event time is read in 1/2048 s (CPS), the crank's in 1/1024 s as in CSC.
    public mutating func update(_ m: CyclingPowerMeasurement, receivedAt now: Double) -> Output {
        update(wheelRevolutions: m.wheel?.revolutions, wheelEventTime: m.wheel?.eventTime ?? 0,
               wheelTicksPerSecond: 2048, crank: m.crank, receivedAt: now)
    }
}
