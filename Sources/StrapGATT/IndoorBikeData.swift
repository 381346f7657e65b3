/// Indoor Bike Data 0x2AD2 (FTMS v1.0 §4.9, docs/decoding.md#indoor-bike-data-0x2ad2). Every
/// field optional, raw in its wire unit. One record may arrive split over several
/// notifications; `IndoorBikeDataAssembler` joins them.
public struct IndoorBikeData: Equatable, Sendable {
    /// Expended Energy (flag bit 8): three fields that come together. 0xFFFF / 0xFF mean
    /// "not available" and are kept raw.
    public struct ExpendedEnergy: Equatable, Sendable {
        /// kcal.
        public var total: UInt16
        /// kcal per hour.
        public var perHour: UInt16
        /// kcal per minute.
        public var perMinute: UInt8
        public init(total: UInt16, perHour: UInt16, perMinute: UInt8) {
            (self.total, self.perHour, self.perMinute) = (total, perHour, perMinute)
        }
    }

    /// 1/100 km/h. Present exactly when flag bit 0 ("More Data") is 0: the bit is inverted —
    /// set, it says this packet is not the last of its record and carries no speed.
    public var instantaneousSpeed: UInt16?
    /// 1/100 km/h.
    public var averageSpeed: UInt16?
    /// 1/2 rpm.
    public var instantaneousCadence: UInt16?
    /// 1/2 rpm.
    public var averageCadence: UInt16?
    /// Metres, uint24.
    public var totalDistance: UInt32?
    /// Unitless, resolution 1 (sint16).
    public var resistanceLevel: Int16?
    /// Watts.
    public var instantaneousPower: Int16?
    /// Watts.
    public var averagePower: Int16?
    public var expendedEnergy: ExpendedEnergy?
    /// Beats per minute.
    public var heartRate: UInt8?
    /// 1/10 MET.
    public var metabolicEquivalent: UInt8?
    /// Seconds.
    public var elapsedTime: UInt16?
    /// Seconds.
    public var remainingTime: UInt16?
    public var warnings: DecodeWarnings

    public init(instantaneousSpeed: UInt16? = nil, averageSpeed: UInt16? = nil, instantaneousCadence: UInt16? = nil,
                averageCadence: UInt16? = nil, totalDistance: UInt32? = nil, resistanceLevel: Int16? = nil,
                instantaneousPower: Int16? = nil, averagePower: Int16? = nil, expendedEnergy: ExpendedEnergy? = nil,
                heartRate: UInt8? = nil, metabolicEquivalent: UInt8? = nil, elapsedTime: UInt16? = nil,
                remainingTime: UInt16? = nil, warnings: DecodeWarnings = []) {
        self.instantaneousSpeed = instantaneousSpeed
        self.averageSpeed = averageSpeed
        self.instantaneousCadence = instantaneousCadence
        self.averageCadence = averageCadence
        self.totalDistance = totalDistance.map { $0 & 0xFF_FFFF }
        self.resistanceLevel = resistanceLevel
        self.instantaneousPower = instantaneousPower
        self.averagePower = averagePower
        self.expendedEnergy = expendedEnergy
        self.heartRate = heartRate
        self.metabolicEquivalent = metabolicEquivalent
        self.elapsedTime = elapsedTime
        self.remainingTime = remainingTime
        self.warnings = warnings
    }

    /// Flag bit 0 as it is on the wire: 1 = more packets of this record follow, no speed here.
    public var moreData: Bool { instantaneousSpeed == nil }
    /// m/s.
    public var speedMetresPerSecond: Double? { instantaneousSpeed.map { Double($0) / 360 } }
    /// rpm.
    public var cadenceRPM: Double? { instantaneousCadence.map { Double($0) / 2 } }

    public static let characteristic = GATTCharacteristic.indoorBikeData

    /// Octets each flag bit adds after the flags, in wire order; bit 0's field is present when
    /// the bit is *clear*.
    @usableFromInline static let fieldLayout: [(bit: UInt16, size: Int, name: StaticStringName)] = [
        (0x0001, 2, "instantaneous speed"), (0x0002, 2, "average speed"), (0x0004, 2, "instantaneous cadence"),
        (0x0008, 2, "average cadence"), (0x0010, 3, "total distance"), (0x0020, 2, "resistance level"),
        (0x0040, 2, "instantaneous power"), (0x0080, 2, "average power"), (0x0100, 5, "expended energy"),
        (0x0200, 1, "heart rate"), (0x0400, 1, "metabolic equivalent"), (0x0800, 2, "elapsed time"),
        (0x1000, 2, "remaining time"),
    ]

    @usableFromInline static func cutField(presence: UInt16, count: Int) -> (StaticStringName, Int) {
        var end = 2
        for field in fieldLayout where presence & field.bit != 0 {
            end += field.size
            if count < end { return (field.name, end) }
        }
        return ("flags", 2)
    }

    @inlinable @inline(__always)
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> IndoorBikeData {
        try decodeIndoorBikeData(bytes)
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> IndoorBikeData {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public var flags: UInt16 {
        var f: UInt16 = instantaneousSpeed == nil ? 0x0001 : 0
        if averageSpeed != nil { f |= 0x0002 }
        if instantaneousCadence != nil { f |= 0x0004 }
        if averageCadence != nil { f |= 0x0008 }
        if totalDistance != nil { f |= 0x0010 }
        if resistanceLevel != nil { f |= 0x0020 }
        if instantaneousPower != nil { f |= 0x0040 }
        if averagePower != nil { f |= 0x0080 }
        if expendedEnergy != nil { f |= 0x0100 }
        if heartRate != nil { f |= 0x0200 }
        if metabolicEquivalent != nil { f |= 0x0400 }
        if elapsedTime != nil { f |= 0x0800 }
        if remainingTime != nil { f |= 0x1000 }
        return f
    }

    /// One packet as a trainer sends it; `warnings` are not encoded.
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 30)
        w.u16(flags)
        if let instantaneousSpeed { w.u16(instantaneousSpeed) }
        if let averageSpeed { w.u16(averageSpeed) }
        if let instantaneousCadence { w.u16(instantaneousCadence) }
        if let averageCadence { w.u16(averageCadence) }
        if let totalDistance { w.u24(totalDistance) }
        if let resistanceLevel { w.s16(resistanceLevel) }
        if let instantaneousPower { w.s16(instantaneousPower) }
        if let averagePower { w.s16(averagePower) }
        if let e = expendedEnergy { w.u16(e.total); w.u16(e.perHour); w.u8(e.perMinute) }
        if let heartRate { w.u8(heartRate) }
        if let metabolicEquivalent { w.u8(metabolicEquivalent) }
        if let elapsedTime { w.u16(elapsedTime) }
        if let remainingTime { w.u16(remainingTime) }
        return w.bytes
    }

    /// Fields of `later` overwrite this record's; warnings add up.
    func merged(with later: IndoorBikeData) -> IndoorBikeData {
        var m = self
        m.instantaneousSpeed = later.instantaneousSpeed ?? instantaneousSpeed
        m.averageSpeed = later.averageSpeed ?? averageSpeed
        m.instantaneousCadence = later.instantaneousCadence ?? instantaneousCadence
        m.averageCadence = later.averageCadence ?? averageCadence
        m.totalDistance = later.totalDistance ?? totalDistance
        m.resistanceLevel = later.resistanceLevel ?? resistanceLevel
        m.instantaneousPower = later.instantaneousPower ?? instantaneousPower
        m.averagePower = later.averagePower ?? averagePower
        m.expendedEnergy = later.expendedEnergy ?? expendedEnergy
        m.heartRate = later.heartRate ?? heartRate
        m.metabolicEquivalent = later.metabolicEquivalent ?? metabolicEquivalent
        m.elapsedTime = later.elapsedTime ?? elapsedTime
        m.remainingTime = later.remainingTime ?? remainingTime
        m.warnings.formUnion(later.warnings)
        return m
    }
}

/// `IndoorBikeData.decode`'s body, a free function on purpose: as a static method its unused
/// metatype argument had the optimizer split it into a body without that argument and a public
/// thunk that copied the result out of a temporary right after the body's narrow stores, a
/// store-forwarding stall that cost a third of the decode (`perf annotate`, strap-bench decode,
/// issue 35). Nothing to drop, no thunk: the body writes the caller's result directly.
@inlinable
func decodeIndoorBikeData(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> IndoorBikeData {
    typealias ExpendedEnergy = IndoorBikeData.ExpendedEnergy
    guard bytes.count >= 2 else { throw .truncated(.indoorBikeData, field: "flags", needed: 2, got: bytes.count) }
    var reader = PrecheckedByteReader(bytes)
    // Bit 0 flipped, so every set bit of `presence` means "this field is here".
    let presence = reader.u16() ^ 0x0001
    var needed = 2
    if presence & 0x0001 != 0 { needed &+= 2 }
    if presence & 0x0002 != 0 { needed &+= 2 }
    if presence & 0x0004 != 0 { needed &+= 2 }
    if presence & 0x0008 != 0 { needed &+= 2 }
    if presence & 0x0010 != 0 { needed &+= 3 }
    if presence & 0x0020 != 0 { needed &+= 2 }
    if presence & 0x0040 != 0 { needed &+= 2 }
    if presence & 0x0080 != 0 { needed &+= 2 }
    if presence & 0x0100 != 0 { needed &+= 5 }
    if presence & 0x0200 != 0 { needed &+= 1 }
    if presence & 0x0400 != 0 { needed &+= 1 }
    if presence & 0x0800 != 0 { needed &+= 2 }
    if presence & 0x1000 != 0 { needed &+= 2 }
    guard bytes.count >= needed else {
        let (field, end) = IndoorBikeData.cutField(presence: presence, count: bytes.count)
        throw .truncated(.indoorBikeData, field: field, needed: end, got: bytes.count)
    }
    // Fields into locals, then one initializer (as CyclingPowerMeasurement's: a value built
    // by mutation stayed on the stack and cost a third more, strap-bench decode, issue 35).
    let speed: UInt16? = presence & 0x0001 != 0 ? reader.u16() : nil
    let averageSpeed: UInt16? = presence & 0x0002 != 0 ? reader.u16() : nil
    let cadence: UInt16? = presence & 0x0004 != 0 ? reader.u16() : nil
    let averageCadence: UInt16? = presence & 0x0008 != 0 ? reader.u16() : nil
    let distance: UInt32? = presence & 0x0010 != 0 ? reader.u24() : nil
    let resistance: Int16? = presence & 0x0020 != 0 ? reader.s16() : nil
    let power: Int16? = presence & 0x0040 != 0 ? reader.s16() : nil
    let averagePower: Int16? = presence & 0x0080 != 0 ? reader.s16() : nil
    var energy: ExpendedEnergy?
    if presence & 0x0100 != 0 {
        let total = reader.u16(), perHour = reader.u16()
        energy = ExpendedEnergy(total: total, perHour: perHour, perMinute: reader.u8())
    }
    let heartRate: UInt8? = presence & 0x0200 != 0 ? reader.u8() : nil
    let metabolicEquivalent: UInt8? = presence & 0x0400 != 0 ? reader.u8() : nil
    let elapsed: UInt16? = presence & 0x0800 != 0 ? reader.u16() : nil
    let remaining: UInt16? = presence & 0x1000 != 0 ? reader.u16() : nil
    return IndoorBikeData(
        instantaneousSpeed: speed, averageSpeed: averageSpeed, instantaneousCadence: cadence,
        averageCadence: averageCadence, totalDistance: distance, resistanceLevel: resistance,
        instantaneousPower: power, averagePower: averagePower, expendedEnergy: energy, heartRate: heartRate,
        metabolicEquivalent: metabolicEquivalent, elapsedTime: elapsed, remainingTime: remaining,
        warnings: reader.remaining > 0 ? .trailingOctets : [])
}

/// Joins the packets of one Indoor Bike Data record. A trainer whose fields do not fit one
/// notification sends packets with More Data = 1 (no speed) and ends the record with a
/// More Data = 0 packet, which carries the instantaneous speed.
///
/// Rules (docs/decoding.md#a-record-split-across-notifications): a More Data = 0 packet
/// completes the record; a More Data = 1 packet that repeats a field already pending means
/// the trainer started a new record without ending the last (some never send More Data = 0),
/// so the pending one is emitted with `unterminatedRecord`. Call `reset()` on reconnect.
public struct IndoorBikeDataAssembler: Sendable {
    var pending: IndoorBikeData?

    public init() {}

    public mutating func reset() { pending = nil }

    /// The record this packet completes, or the unterminated one it flushes; nil while a
    /// record is still open.
    public mutating func add(_ packet: IndoorBikeData) -> IndoorBikeData? {
        if !packet.moreData {
            defer { pending = nil }
            return pending.map { $0.merged(with: packet) } ?? packet
        }
        guard let current = pending else {
            pending = packet
            return nil
        }
        if current.flags & packet.flags & 0xFFFE != 0 {
            var flushed = current
            flushed.warnings.insert(.unterminatedRecord)
            pending = packet
            return flushed
        }
        pending = current.merged(with: packet)
        return nil
    }
}
