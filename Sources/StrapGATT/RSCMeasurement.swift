/// RSC Measurement 0x2A53 (RSCS v1.0, docs/decoding.md#rsc-measurement-0x2a53).
public struct RSCMeasurement: Equatable, Sendable {
    /// Instantaneous speed in 1/256 m/s.
    public var speedRaw: UInt16
    /// Instantaneous cadence, 1/min. Stored raw: some pods (TICKR X) report steps where the
    /// spec says strides, which is a per-device quirk flag, never a default halving.
    public var cadence: UInt8
    /// Instantaneous stride length in 1/100 m (the spec's unit, whatever peer tests say).
    public var strideLengthRaw: UInt16?
    /// Total distance in 1/10 m, wraps at 2³² and resets on power cycle.
    public var totalDistanceRaw: UInt32?
    /// Flag bit 2; meaningful only when RSC Feature bit 2 is set (treadmills leave it clear).
    public var isRunning: Bool
    public var warnings: DecodeWarnings

    public init(speedRaw: UInt16, cadence: UInt8, strideLengthRaw: UInt16? = nil,
                totalDistanceRaw: UInt32? = nil, isRunning: Bool = false, warnings: DecodeWarnings = []) {
        self.speedRaw = speedRaw
        self.cadence = cadence
        self.strideLengthRaw = strideLengthRaw
        self.totalDistanceRaw = totalDistanceRaw
        self.isRunning = isRunning
        self.warnings = warnings
    }

    public var speed: Double { Double(speedRaw) / 256.0 }
    public var strideLength: Double? { strideLengthRaw.map { Double($0) / 100.0 } }
    public var totalDistance: Double? { totalDistanceRaw.map { Double($0) / 10.0 } }

    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> RSCMeasurement {
        guard bytes.count >= 4 else {
            throw .truncated(.rscMeasurement, field: "speed and cadence", needed: 4, got: bytes.count)
        }
        var reader = PrecheckedByteReader(bytes)
        let flags = reader.u8()
        let hasStride = flags & 0x01 != 0
        let hasDistance = flags & 0x02 != 0
        let needed = 4 + (hasStride ? 2 : 0) + (hasDistance ? 4 : 0)
        guard bytes.count >= needed else {
            let field: StaticStringName = hasStride && bytes.count < 6 ? "stride length" : "total distance"
            throw .truncated(.rscMeasurement, field: field, needed: needed, got: bytes.count)
        }
        let speed = reader.u16()
        let cadence = reader.u8()
        let stride: UInt16? = hasStride ? reader.u16() : nil
        let distance: UInt32? = hasDistance ? reader.u32() : nil
        // Bit 2 alone is the walking/running status; OpenTracks' `flags & 0x03` is the bug.
        return RSCMeasurement(speedRaw: speed, cadence: cadence, strideLengthRaw: stride,
                              totalDistanceRaw: distance, isRunning: flags & 0x04 != 0,
                              warnings: reader.remaining > 0 ? .trailingOctets : [])
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> RSCMeasurement {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 10)
        w.u8((strideLengthRaw != nil ? 0x01 : 0) | (totalDistanceRaw != nil ? 0x02 : 0) | (isRunning ? 0x04 : 0))
        w.u16(speedRaw)
        w.u8(cadence)
        if let strideLengthRaw { w.u16(strideLengthRaw) }
        if let totalDistanceRaw { w.u32(totalDistanceRaw) }
        return w.bytes
    }
}

/// RSC Feature 0x2A54: uint16 bit field.
public struct RSCFeature: Equatable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public var instantaneousStrideLengthSupported: Bool { rawValue & 0x01 != 0 }
    public var totalDistanceSupported: Bool { rawValue & 0x02 != 0 }
    public var walkingOrRunningStatusSupported: Bool { rawValue & 0x04 != 0 }
    public var calibrationProcedureSupported: Bool { rawValue & 0x08 != 0 }
    public var multipleSensorLocationsSupported: Bool { rawValue & 0x10 != 0 }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> RSCFeature {
        guard bytes.count >= 2 else { throw .truncated(.rscFeature, field: "feature bits", needed: 2, got: bytes.count) }
        var r = PrecheckedByteReader(bytes)
        return RSCFeature(rawValue: r.u16())
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> RSCFeature {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    public func encoded() -> [UInt8] { var w = ByteWriter(); w.u16(rawValue); return w.bytes }
}
