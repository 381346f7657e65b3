import StrapModel

/// The FIT protocol pieces the encoder needs: the CRC, the file header, base types, message
/// definitions and the time base. Field and message numbers are the FIT profile's
/// (docs/export.md lists each with its type).
public enum FIT {
    /// Seconds from the Unix epoch to FIT's, 1989-12-31T00:00:00Z.
    public static let epochOffset: Int64 = 631_065_600

    /// A Unix time in milliseconds as a FIT `date_time` (whole seconds since FIT's epoch).
    public static func timestamp(_ ms: Millis) -> UInt32 {
        UInt32(clamping: ms.floorDiv(1000) - epochOffset)
    }

    /// The FIT CRC-16 (the protocol's nibble-table form of CRC-16/ARC: reflected polynomial
    /// 0xA001, initial value 0). Computed over the header's first 12 bytes for the header CRC
    /// and over header + data for the file CRC.
    public struct CRC: Sendable, Equatable {
        public private(set) var value: UInt16 = 0

        static let table: [UInt16] = [
            0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
            0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
        ]

        public init() {}

        public mutating func update(_ byte: UInt8) {
            var crc = value
            var tmp = Self.table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ Self.table[Int(byte & 0xF)]
            tmp = Self.table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            value = crc ^ tmp ^ Self.table[Int((byte >> 4) & 0xF)]
        }

        public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
            for b in bytes { update(b) }
        }

        public static func checksum<C: Collection>(_ bytes: C) -> UInt16 where C.Element == UInt8 {
            var crc = CRC()
            crc.update(bytes)
            return crc.value
        }
    }

    /// The 14-byte file header: size, protocol 2.0, profile version, data size, ".FIT", CRC.
    public static func header(dataSize: UInt32) -> [UInt8] {
        var h: [UInt8] = [14, protocolVersion]
        h += [UInt8(profileVersion & 0xFF), UInt8(profileVersion >> 8)]
        h += [UInt8(dataSize & 0xFF), UInt8((dataSize >> 8) & 0xFF), UInt8((dataSize >> 16) & 0xFF), UInt8(dataSize >> 24)]
        h += Array(".FIT".utf8)
        let crc = CRC.checksum(h)
        return h + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    static let headerSize = 14
    /// Protocol 2.0 (major in the high nibble).
    static let protocolVersion: UInt8 = 0x20
    /// Profile 21.00 (major × 100 + minor): every message and field used is in that profile.
    static let profileVersion: UInt16 = 2100

    /// FIT base types (the byte a definition carries; bit 7 = multi-byte, endianness applies).
    enum BaseType: UInt8 {
        case enumeration = 0x00, uint8 = 0x02, uint16 = 0x84, uint32 = 0x86, string = 0x07, uint32z = 0x8C

        var size: Int {
            switch self {
            case .enumeration, .uint8, .string: 1
            case .uint16: 2
            case .uint32, .uint32z: 4
            }
        }
    }

    /// One field of a definition: profile field number, size in bytes, base type.
    struct Field {
        let number: UInt8
        let size: UInt8
        let type: BaseType

        init(_ number: UInt8, _ type: BaseType, count: Int = 1) {
            self.number = number
            self.type = type
            size = UInt8(type.size * count)
        }
    }

    /// A local message definition: written once, then every data message of that local number
    /// reuses it (normal headers; architecture 0 = little-endian).
    struct Definition {
        let local: UInt8
        let global: UInt16
        let fields: [Field]
        let dataSize: Int

        init(local: UInt8, global: UInt16, _ fields: [Field]) {
            self.local = local
            self.global = global
            self.fields = fields
            dataSize = 1 + fields.reduce(0) { $0 + Int($1.size) }
        }

        func write(into sink: inout ByteSink) {
            sink.u8(0x40 | local)          // definition message, normal header
            sink.u8(0)                     // reserved
            sink.u8(0)                     // architecture: little-endian
            sink.u16(global)
            sink.u8(UInt8(fields.count))
            for f in fields {
                sink.u8(f.number)
                sink.u8(f.size)
                sink.u8(f.type.rawValue)
            }
        }

        /// The data message's record header (normal header, this local number).
        func header(into sink: inout ByteSink) { sink.u8(local) }
    }

    // Invalid values per base type (the protocol's "no value").
    static let invalid8: UInt8 = 0xFF
    static let invalid16: UInt16 = 0xFFFF
    static let invalid32: UInt32 = 0xFFFF_FFFF

    /// A value scaled and rounded into a field's range; the invalid value when absent or
    /// not finite. The largest valid value is one below the invalid one.
    static func scaled8(_ v: Double?, _ scale: Double = 1) -> UInt8 {
        guard let v, v.isFinite else { return invalid8 }
        return UInt8(max(0, min(254, (v * scale).rounded())))
    }

    static func scaled16(_ v: Double?, _ scale: Double = 1) -> UInt16 {
        guard let v, v.isFinite else { return invalid16 }
        return UInt16(max(0, min(65_534, (v * scale).rounded())))
    }

    static func scaled32(_ v: Double?, _ scale: Double = 1) -> UInt32 {
        guard let v, v.isFinite else { return invalid32 }
        return UInt32(max(0, min(4_294_967_294, (v * scale).rounded())))
    }
}
