/// CSC Measurement 0x2A5B (CSCS v1.0 §3.1, docs/decoding.md#csc-measurement-0x2a5b). Raw counters
/// only; speed, cadence and distance come from `CSCDerivation`, which needs two packets.
public struct CSCMeasurement: Equatable, Sendable {
    public struct WheelData: Equatable, Sendable {
        /// Cumulative wheel revolutions, uint32, wraps at 2³².
        public var revolutions: UInt32
        /// Last wheel event time in 1/1024 s (not 1/2048 as in CPS), wraps every 64 s.
        public var eventTime: UInt16
        public init(revolutions: UInt32, eventTime: UInt16) {
            self.revolutions = revolutions
            self.eventTime = eventTime
        }
    }

    public struct CrankData: Equatable, Sendable {
        /// Cumulative crank revolutions, uint16 (not int32 — the Gadgetbridge bug), wraps at 2¹⁶.
        public var revolutions: UInt16
        /// Last crank event time in 1/1024 s, wraps every 64 s.
        public var eventTime: UInt16
        public init(revolutions: UInt16, eventTime: UInt16) {
            self.revolutions = revolutions
            self.eventTime = eventTime
        }
    }

    public var wheel: WheelData?
    public var crank: CrankData?
    public var warnings: DecodeWarnings

    public init(wheel: WheelData? = nil, crank: CrankData? = nil, warnings: DecodeWarnings = []) {
        self.wheel = wheel
        self.crank = crank
        self.warnings = warnings
    }

    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> CSCMeasurement {
        guard bytes.count >= 1 else { throw .truncated(.cscMeasurement, field: "flags", needed: 1, got: 0) }
        var reader = PrecheckedByteReader(bytes)
        let flags = reader.u8()
        // Test each bit with `&` (Gadgetbridge's `(flags | M) == M` is the bug to avoid).
        let hasWheel = flags & 0x01 != 0
        let hasCrank = flags & 0x02 != 0
        let needed = 1 + (hasWheel ? 6 : 0) + (hasCrank ? 4 : 0)
        guard bytes.count >= needed else {
            let field: StaticStringName = hasWheel && bytes.count < 7 ? "wheel revolution data" : "crank revolution data"
            throw .truncated(.cscMeasurement, field: field, needed: needed, got: bytes.count)
        }
        var result = CSCMeasurement()
        if hasWheel {
            let revolutions = reader.u32()
            result.wheel = WheelData(revolutions: revolutions, eventTime: reader.u16())
        }
        if hasCrank {
            let revolutions = reader.u16()
            result.crank = CrankData(revolutions: revolutions, eventTime: reader.u16())
        }
        if !hasWheel && !hasCrank { result.warnings.insert(.noData) }
        if reader.remaining > 0 { result.warnings.insert(.trailingOctets) }
        return result
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> CSCMeasurement {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 11)
        w.u8((wheel != nil ? 0x01 : 0) | (crank != nil ? 0x02 : 0))
        if let wheel { w.u32(wheel.revolutions); w.u16(wheel.eventTime) }
        if let crank { w.u16(crank.revolutions); w.u16(crank.eventTime) }
        return w.bytes
    }
}

/// CSC Feature 0x2A5C: uint16 bit field.
public struct CSCFeature: Equatable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public var wheelRevolutionDataSupported: Bool { rawValue & 0x01 != 0 }
    public var crankRevolutionDataSupported: Bool { rawValue & 0x02 != 0 }
    public var multipleSensorLocationsSupported: Bool { rawValue & 0x04 != 0 }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> CSCFeature {
        guard bytes.count >= 2 else { throw .truncated(.cscFeature, field: "feature bits", needed: 2, got: bytes.count) }
        var r = PrecheckedByteReader(bytes)
        return CSCFeature(rawValue: r.u16())
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> CSCFeature {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { var w = ByteWriter(); w.u16(rawValue); return w.bytes }
}
