/// Parses packet octets as users paste them from btmon, bluetoothctl or a spec:
/// `16 4a 3e 03`, `16:4a:3e:03`, `0x164a3e03`, or split across arguments.
public enum HexParseError: Error, Equatable, CustomStringConvertible {
    case oddDigitCount(Int)
    case notHex(Character)

    public var description: String {
        switch self {
        case let .oddDigitCount(n): "odd number of hex digits (\(n)): every octet needs two"
        case let .notHex(c): "'\(c)' is not a hex digit"
        }
    }
}

public enum HexParser {
    public static func parse(_ parts: [String]) throws(HexParseError) -> [UInt8] {
        var digits: [UInt8] = []
        for part in parts {
            for token in part.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "\t" || $0 == "," || $0 == "-" }) {
                var body = Substring(token)
                if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
                for ch in body {
                    guard let v = ch.hexDigitValue, ch.isASCII else { throw .notHex(ch) }
                    digits.append(UInt8(v))
                }
            }
        }
        guard digits.count % 2 == 0 else { throw .oddDigitCount(digits.count) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            bytes.append(digits[i] << 4 | digits[i + 1])
            i += 2
        }
        return bytes
    }
}
