/// A FIT file read into its messages (protocol 1.0 and 2.0: normal and compressed-timestamp
/// headers, both architectures, developer fields skipped). Pure and bounded: every length is
/// checked against the bytes there are, so a truncated or hostile file is an error naming
/// the offset, never a trap (Tests/Fuzz reads random and mutated files with it).
public struct FITReader: Sendable {
    public struct Message: Sendable, Equatable {
        public var global: UInt16
        /// Field number → its raw bytes, little-endian whatever the file's architecture.
        public var fields: [UInt8: [UInt8]]

        /// An unsigned integer field of 1, 2 or 4 bytes; nil when absent or FIT's invalid value.
        public func uint(_ number: UInt8) -> UInt32? {
            guard let b = fields[number] else { return nil }
            switch b.count {
            case 1: return b[0] == 0xFF ? nil : UInt32(b[0])
            case 2: let v = UInt16(b[0]) | UInt16(b[1]) << 8; return v == 0xFFFF ? nil : UInt32(v)
            case 4:
                let v = UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
                return v == 0xFFFF_FFFF ? nil : v
            default: return nil
            }
        }

        /// A string field up to its first NUL; nil when absent or empty.
        public func string(_ number: UInt8) -> String? {
            guard let b = fields[number] else { return nil }
            let text = b.prefix { $0 != 0 }
            return text.isEmpty ? nil : String(decoding: text, as: UTF8.self)
        }
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notFIT(String)
        case truncated(offset: Int)
        case checksum(expected: UInt16, found: UInt16)
        case undefinedLocalMessage(local: UInt8, offset: Int)
        case badDefinition(offset: Int, why: String)

        public var description: String {
            switch self {
            case .notFIT(let why): "not a FIT file: \(why)"
            case .truncated(let o): "the FIT file ends inside a record at byte \(o)"
            case let .checksum(e, f): "FIT file checksum 0x\(String(f, radix: 16)) does not match its data (0x\(String(e, radix: 16)))"
            case let .undefinedLocalMessage(l, o): "FIT data message of local type \(l) at byte \(o) has no definition before it"
            case let .badDefinition(o, why): "bad FIT definition at byte \(o): \(why)"
            }
        }
    }

    public static let maximumBytes = 1 << 20

    public let messages: [Message]

    private struct Definition {
        var global: UInt16
        var bigEndian: Bool
        var fields: [(number: UInt8, size: Int)]
        var developerBytes: Int
    }

    public init(_ bytes: [UInt8]) throws(Failure) {
        guard bytes.count <= Self.maximumBytes else { throw .notFIT("over \(Self.maximumBytes) bytes") }
        guard bytes.count >= 12 else { throw .notFIT("\(bytes.count) bytes, shorter than a header") }
        let headerSize = Int(bytes[0])
        guard headerSize == 12 || headerSize == 14, bytes.count >= headerSize else { throw .notFIT("header size \(headerSize)") }
        guard Array(bytes[8..<12]) == Array(".FIT".utf8) else { throw .notFIT("no .FIT signature") }
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        let end = headerSize + dataSize
        guard dataSize >= 0, end + 2 <= bytes.count else { throw .truncated(offset: bytes.count) }
        let stored = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
        let computed = FIT.CRC.checksum(bytes[0..<end])
        guard stored == computed else { throw .checksum(expected: computed, found: stored) }

        var definitions = [Definition?](repeating: nil, count: 16)
        var out: [Message] = []
        var pos = headerSize
        func need(_ n: Int) throws(Failure) { if pos + n > end { throw .truncated(offset: pos) } }
        while pos < end {
            let start = pos
            let header = bytes[pos]; pos += 1
            let local: UInt8
            if header & 0x80 != 0 {
                local = (header >> 5) & 0x03     // compressed timestamp: always a data message
            } else if header & 0x40 != 0 {
                try need(5)
                let bigEndian = bytes[pos + 1] == 1
                guard bytes[pos + 1] <= 1 else { throw .badDefinition(offset: start, why: "architecture \(bytes[pos + 1])") }
                let global = bigEndian ? UInt16(bytes[pos + 2]) << 8 | UInt16(bytes[pos + 3])
                                       : UInt16(bytes[pos + 2]) | UInt16(bytes[pos + 3]) << 8
                let count = Int(bytes[pos + 4]); pos += 5
                try need(count * 3)
                var fields: [(UInt8, Int)] = []
                for i in 0..<count {
                    let size = Int(bytes[pos + i * 3 + 1])
                    guard size > 0 else { throw .badDefinition(offset: start, why: "field of size 0") }
                    fields.append((bytes[pos + i * 3], size))
                }
                pos += count * 3
                var developer = 0
                if header & 0x20 != 0 {
                    try need(1)
                    let n = Int(bytes[pos]); pos += 1
                    try need(n * 3)
                    for i in 0..<n { developer += Int(bytes[pos + i * 3 + 1]) }
                    pos += n * 3
                }
                definitions[Int(header & 0x0F)] = Definition(global: global, bigEndian: bigEndian, fields: fields, developerBytes: developer)
                continue
            } else {
                local = header & 0x0F
            }
            guard let d = definitions[Int(local)] else { throw .undefinedLocalMessage(local: local, offset: start) }
            var message = Message(global: d.global, fields: [:])
            for f in d.fields {
                try need(f.size)
                let raw = Array(bytes[pos..<pos + f.size])
                message.fields[f.number] = d.bigEndian && [2, 4, 8].contains(f.size) ? raw.reversed() : raw
                pos += f.size
            }
            try need(d.developerBytes)
            pos += d.developerBytes
            out.append(message)
        }
        messages = out
    }
}
