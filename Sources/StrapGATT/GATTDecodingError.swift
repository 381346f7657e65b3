/// Why a characteristic value could not be decoded. Each case names the characteristic and
/// the field, so `strapctl decode` and the daemon's log can say exactly what was wrong.
public enum GATTDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The value ended before a field its own flags (or the spec) say is present.
    case truncated(GATTCharacteristic, field: StaticStringName, needed: Int, got: Int)
    /// The value has a fixed length and this is not it.
    case wrongLength(GATTCharacteristic, expected: Int, got: Int)
    /// A field holds a value the spec forbids (e.g. battery level above 100).
    case outOfRange(GATTCharacteristic, field: StaticStringName, value: Int)
    /// A Device Information string is not valid UTF-8.
    case invalidUTF8(GATTCharacteristic)
    /// A control point indication that is not a response (SC 0x10, CP 0x20, FTMS 0x80).
    case notAResponse(GATTCharacteristic, opCode: UInt8)
    /// A control point request or status whose op code this decoder does not know.
    case unknownOpCode(GATTCharacteristic, opCode: UInt8)

    public var description: String {
        switch self {
        case let .truncated(c, field, needed, got):
            "\(c.name): \(field) needs \(needed) octets, the packet has \(got)"
        case let .wrongLength(c, expected, got):
            "\(c.name): value must be \(expected) octet\(expected == 1 ? "" : "s"), got \(got)"
        case let .outOfRange(c, field, value):
            "\(c.name): \(field) \(value) is out of range"
        case let .invalidUTF8(c):
            "\(c.name): value is not valid UTF-8"
        case let .notAResponse(c, opCode):
            "\(c.name): op code 0x\(String(opCode, radix: 16)) is not a response (0x\(String(c.responseOpCode, radix: 16)))"
        case let .unknownOpCode(c, opCode):
            "\(c.name): op code 0x\(String(opCode, radix: 16)) is not one this decoder knows"
        }
    }
}

extension GATTCharacteristic {
    /// The op code that starts a control point's response indication.
    public var responseOpCode: UInt8 {
        switch self {
        case .cyclingPowerControlPoint: 0x20
        case .fitnessMachineControlPoint: 0x80
        default: 0x10
        }
    }
}

/// A field name kept as a static string so building an error never allocates on the hot path.
public struct StaticStringName: Equatable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    let text: StaticString
    public init(stringLiteral value: StaticString) { text = value }
    public var description: String { text.description }
    public static func == (a: Self, b: Self) -> Bool { a.description == b.description }
}

/// Non-fatal oddities in an otherwise decodable packet (keep what is whole, warn:
/// docs/decoding.md#policies-where-peers-disagree).
public struct DecodeWarnings: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The RR flag is set but no RR octets follow.
    public static let emptyRRField = DecodeWarnings(rawValue: 1 << 0)
    /// One octet is left over after the last whole RR interval.
    public static let danglingOctet = DecodeWarnings(rawValue: 1 << 1)
    /// A CSC measurement with neither wheel nor crank data.
    public static let noData = DecodeWarnings(rawValue: 1 << 2)
    /// Octets after the last field the flags announce (legal for CSC/RSC, reported for clarity).
    public static let trailingOctets = DecodeWarnings(rawValue: 1 << 3)
    /// A Cycling Power Measurement announcing both extreme force and extreme torque, which the
    /// spec forbids (a sensor measures one or the other); both are decoded.
    public static let conflictingFlags = DecodeWarnings(rawValue: 1 << 4)
    /// An Indoor Bike Data record that ended without the packet carrying More Data = 0
    /// (`IndoorBikeDataAssembler`): emitted as it stood.
    public static let unterminatedRecord = DecodeWarnings(rawValue: 1 << 5)

    /// Stable camelCase names, as `strapctl decode` prints them.
    public var names: [String] {
        var out: [String] = []
        if contains(.emptyRRField) { out.append("rrFlagSetWithoutIntervals") }
        if contains(.danglingOctet) { out.append("danglingOddOctet") }
        if contains(.noData) { out.append("noDataFlags") }
        if contains(.trailingOctets) { out.append("trailingOctetsIgnored") }
        if contains(.conflictingFlags) { out.append("extremeForceAndTorqueBothFlagged") }
        if contains(.unterminatedRecord) { out.append("recordWithoutFinalPacket") }
        return out
    }
}
