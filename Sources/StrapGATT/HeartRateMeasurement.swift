/// Sensor Contact Status, bits 1–2 of the Heart Rate Measurement flags
/// (docs/decoding.md#rule-2-sensor-contact).
public enum SensorContact: UInt8, Sendable, CaseIterable {
    case notSupported
    case notDetected
    case detected

    /// `(flags >> 1) & 3`: 0 and 1 mean the feature is not supported (bit 1 alone, 0x02, is
    /// *not* contact — the pycycling and SwiftySensors bugs), 2 supported but no contact, 3 contact.
    @inlinable
    public init(flags: UInt8) {
        switch (flags >> 1) & 0b11 {
        case 0b11: self = .detected
        case 0b10: self = .notDetected
        default: self = .notSupported
        }
    }

    /// The two flag bits that encode this state.
    public var flagBits: UInt8 {
        switch self {
        case .notSupported: 0
        case .notDetected: 0b100
        case .detected: 0b110
        }
    }

    public var name: String {
        switch self {
        case .notSupported: "notSupported"
        case .notDetected: "notDetected"
        case .detected: "detected"
        }
    }
}

/// Heart Rate Measurement 0x2A37 (HRS v1.0 §3.1, docs/decoding.md#heart-rate-measurement-0x2a37).
public struct HeartRateMeasurement: Equatable, Sendable {
    /// Beats per minute. 0 is a legal encoding that many straps use for "no reading"; it is
    /// kept, and `isNoReading` lets storage flag it rather than drop it (rule 6).
    public var heartRate: UInt16
    /// Whether the value came in the uint16 format (flag bit 0).
    public var isUInt16Format: Bool
    public var contact: SensorContact
    /// Cumulative kJ since the last reset; absent from most packets (carry the last one forward).
    public var energyExpended: UInt16?
    /// RR intervals in 1/1024 s, oldest first; nil when the RR flag is clear. Raw units are
    /// kept because raw × 1000/1024 is exact in binary and peers disagree on rounding.
    public var rrIntervals: [UInt16]?
    public var warnings: DecodeWarnings

    public init(heartRate: UInt16, isUInt16Format: Bool = false, contact: SensorContact = .notSupported,
                energyExpended: UInt16? = nil, rrIntervals: [UInt16]? = nil, warnings: DecodeWarnings = []) {
        self.heartRate = heartRate
        self.isUInt16Format = isUInt16Format || heartRate > 0xFF
        self.contact = contact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.warnings = warnings
    }

    public var isNoReading: Bool { heartRate == 0 }

    /// RR intervals in milliseconds (exact: raw × 1000 / 1024).
    public var rrIntervalsMilliseconds: [Double]? {
        rrIntervals?.map { Double($0) * 1000.0 / 1024.0 }
    }

    public static let characteristic = GATTCharacteristic.heartRateMeasurement

    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(GATTDecodingError) -> HeartRateMeasurement {
        guard bytes.count >= 1 else { throw .truncated(.heartRateMeasurement, field: "flags", needed: 1, got: 0) }
        var reader = PrecheckedByteReader(bytes)
        let flags = reader.u8()
        let wide = flags & 0x01 != 0
        let hasEnergy = flags & 0x08 != 0
        let hasRR = flags & 0x10 != 0
        // The fixed part the flags announce must be whole; only the RR tail may be odd.
        let fixed = 1 + (wide ? 2 : 1) + (hasEnergy ? 2 : 0)
        guard bytes.count >= fixed else {
            let rateEnd = wide ? 3 : 2
            if bytes.count < rateEnd { throw .truncated(.heartRateMeasurement, field: "heart rate", needed: rateEnd, got: bytes.count) }
            throw .truncated(.heartRateMeasurement, field: "energy expended", needed: fixed, got: bytes.count)
        }
        let heartRate = wide ? reader.u16() : UInt16(reader.u8())
        let energy: UInt16? = hasEnergy ? reader.u16() : nil
        var warnings: DecodeWarnings = []
        var rr: [UInt16]? = nil
        if hasRR {
            let count = reader.remaining / 2
            if count == 0 { warnings.insert(.emptyRRField) }
            var values = [UInt16]()
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(reader.u16()) }
            rr = values
            if reader.remaining == 1 { warnings.insert(.danglingOctet) }
        } else if reader.remaining > 0 {
            warnings.insert(.trailingOctets)
        }
        return HeartRateMeasurement(heartRate: heartRate, isUInt16Format: wide, contact: SensorContact(flags: flags),
                                    energyExpended: energy, rrIntervals: rr, warnings: warnings)
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> HeartRateMeasurement {
        try bytes.decode { (raw) throws(GATTDecodingError) in try decode(raw) }
    }

    /// Encodes as a sensor would: uint8 format when the value fits unless uint16 was asked for.
    public func encoded() -> [UInt8] {
        let wide = isUInt16Format || heartRate > 0xFF
        var flags: UInt8 = wide ? 0x01 : 0
        flags |= contact.flagBits
        if energyExpended != nil { flags |= 0x08 }
        if rrIntervals != nil { flags |= 0x10 }
        var w = ByteWriter()
        w.u8(flags)
        if wide { w.u16(heartRate) } else { w.u8(UInt8(heartRate)) }
        if let energyExpended { w.u16(energyExpended) }
        for rr in rrIntervals ?? [] { w.u16(rr) }
        return w.bytes
    }
}
