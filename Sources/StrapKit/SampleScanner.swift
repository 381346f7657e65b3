import FoundationEssentials
import Glibc
import StrapModel
import StrapWire

/// Reads anchored pages and follow events straight from the line's bytes into samples: no
/// parsed tree, no string per member. The catch-up's hot loop allocates nothing per sample
/// beyond the sample's own parts (its metadata or beats when it has them): the UUID, anchor,
/// type, value and times are read in place, and a device is looked up by its bytes among the
/// devices already seen. The scanner understands the shapes strapd writes (docs/protocol.md
/// *Shapes*); whatever it does not (an escape in a string, a workout) it hands to the general
/// parser, for that item or that page, so the result never depends on which path read it.
struct SampleScanner {
    /// The scanner met something it leaves to the general parser.
    struct Unhandled: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var i: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) {
        self.bytes = bytes
        i = start
    }

    // MARK: pages

    /// `{"added":[…],"deleted":[…],"anchor":N}` into `update`.
    mutating func page(into update: inout AnchoredQuery.Update, decoder: inout WireDecoder) throws(Unhandled) {
        try expect(UInt8(ascii: "{"))
        var sawAnchor = false
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            if equals(key, "added") {
                try expect(UInt8(ascii: "["))
                if !consume(UInt8(ascii: "]")) {
                    repeat { update.added.append(try item(decoder: &decoder)) } while consume(UInt8(ascii: ","))
                    try expect(UInt8(ascii: "]"))
                }
            } else if equals(key, "anchor") {
                update.newAnchor = UInt64(try nonNegative())
                sawAnchor = true
            } else if equals(key, "deleted") {
                let start = i
                try skipValue()
                guard case .array(let items)? = try? JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[start..<i])) else { throw Unhandled() }
                for item in items {
                    guard let d = try? WireDecoder.deleted(item) else { throw Unhandled() }
                    update.deleted.append(d)
                }
            } else {
                try skipValue()
            }
            if consume(UInt8(ascii: "}")) { break }
            try expect(UInt8(ascii: ","))
        }
        guard sawAnchor else { throw Unhandled() }
    }

    /// One added item: a sample read in place, a workout through the general parser.
    mutating func item(decoder: inout WireDecoder) throws(Unhandled) -> StoredObject {
        let start = i
        do {
            return .sample(try sample(decoder: &decoder))
        } catch {
            i = start
            try skipValue()
            guard let value = try? JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[start..<i])),
                  let object = try? decoder.object(value) else { throw Unhandled() }
            return object
        }
    }

    // MARK: samples

    mutating func sample(decoder: inout WireDecoder) throws(Unhandled) -> Sample {
        try expect(UInt8(ascii: "{"))
        var uuid = UUID.unassigned, anchor: UInt64 = 0, type: QuantityType?, value: Double?
        var start: Millis?, end: Millis?, device: Device?
        var beats: [Double] = [], metadata: [String: String] = [:]
        if !consume(UInt8(ascii: "}")) {
            repeat {
                let key = try string()
                try expect(UInt8(ascii: ":"))
                switch bytes[key.lowerBound] {
                case UInt8(ascii: "u") where equals(key, "uuid"): uuid = try self.uuid()
                case UInt8(ascii: "a") where equals(key, "anchor"): anchor = UInt64(try nonNegative())
                case UInt8(ascii: "t") where equals(key, "type"): type = try quantityType()
                case UInt8(ascii: "v") where equals(key, "value"): value = try number()
                case UInt8(ascii: "s") where equals(key, "start"): start = try time()
                case UInt8(ascii: "e") where equals(key, "end"): end = try time()
                case UInt8(ascii: "d") where equals(key, "device"):
                    let from = i
                    try skipValue()
                    guard let d = decoder.device(bytes: UnsafeBufferPointer(rebasing: bytes[from..<i])) else { throw Unhandled() }
                    device = d
                case UInt8(ascii: "b") where equals(key, "beats"): beats = try numbers()
                case UInt8(ascii: "m") where equals(key, "metadata"): metadata = try strings()
                default: try skipValue()
                }
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"))
        }
        guard let type, let start, let device else { throw Unhandled() }
        let v = value ?? Double(beats.count)
        if beats.isEmpty && metadata.isEmpty {
            return Sample(uuid: uuid, anchor: anchor, type: type, value: v, start: start, end: end ?? start, device: device)
        }
        return Sample(type: type, value: v, start: start, end: end ?? start, device: device, metadata: metadata, beats: beats,
                      uuid: uuid, anchor: anchor)
    }

    private static let types: [(name: [UInt8], type: QuantityType)] = QuantityType.allCases.map { (Array($0.rawValue.utf8), $0) }

    mutating func quantityType() throws(Unhandled) -> QuantityType {
        let name = try string()
        for t in Self.types where t.name.count == name.count && equals(name, t.name) { return t.type }
        throw Unhandled()  // "workout", or a type this library does not know
    }

    mutating func uuid() throws(Unhandled) -> UUID {
        let r = try string()
        guard r.count == 36 else { throw Unhandled() }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &raw) { (out: UnsafeMutableRawBufferPointer) throws(Unhandled) in
            var j = r.lowerBound, n = 0
            while n < 16 {
                guard j + 1 < r.upperBound else { throw Unhandled() }
                if bytes[j] == UInt8(ascii: "-") { j += 1; continue }
                guard let hi = Self.hex(bytes[j]), let lo = Self.hex(bytes[j + 1]) else { throw Unhandled() }
                out[n] = hi << 4 | lo
                n += 1
                j += 2
            }
        }
        return UUID(uuid: raw)
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// strapd's own form, `YYYY-MM-DDTHH:MM:SS.mmmZ`, read in place; any other the general way.
    mutating func time() throws(Unhandled) -> Millis {
        let r = try string()
        func d(_ at: Int, _ n: Int) -> Int? {
            var v = 0
            for k in 0..<n {
                let c = bytes[r.lowerBound + at + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            return v
        }
        if r.count == 24, bytes[r.lowerBound + 10] == UInt8(ascii: "T"), bytes[r.lowerBound + 19] == UInt8(ascii: "."),
           bytes[r.upperBound - 1] == UInt8(ascii: "Z"), let year = d(0, 4), let month = d(5, 2), let day = d(8, 2),
           let hour = d(11, 2), let minute = d(14, 2), let second = d(17, 2), let milli = d(20, 3),
           (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 {
            let days = Int64(Self.days(year: year, month: month, day: day))
            return (days * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1000 + Int64(milli)
        }
        guard let ms = try? RFC3339Timestamp.parse(String(decoding: UnsafeBufferPointer(rebasing: bytes[r]), as: UTF8.self)) else {
            throw Unhandled()
        }
        return ms
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    // MARK: values

    private static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { acc, _ in acc * 10 } }

    /// A JSON number. Up to 15 significant digits with at most 22 fraction digits and no
    /// exponent (everything strapd writes for a measurement) is one exact integer divided by an
    /// exact power of ten: correctly rounded, as the general parser's. Others go that way.
    mutating func number() throws(Unhandled) -> Double {
        skipWhitespace()
        let start = i
        let negative = i < bytes.count && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var mantissa: Int64 = 0, digits = 0, fraction = 0, inFraction = false
        while i < bytes.count {
            let c = bytes[i]
            if c >= 0x30, c <= 0x39 {
                mantissa = mantissa &* 10 &+ Int64(c - 0x30)
                digits += 1
                if inFraction { fraction += 1 }
            } else if c == UInt8(ascii: "."), !inFraction {
                inFraction = true
            } else {
                break
            }
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") || digits > 15 || fraction > 22 {
            i = start
            try skipValue()
            guard let value = (try? JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[start..<i])))?.number else { throw Unhandled() }
            return value
        }
        guard digits > 0 else { throw Unhandled() }
        let v = Double(mantissa) / Self.powersOfTen[fraction]
        return negative ? -v : v
    }

    mutating func nonNegative() throws(Unhandled) -> Int64 {
        skipWhitespace()
        var v: Int64 = 0, n = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, n < 18 {
            v = v * 10 + Int64(bytes[i] - 0x30)
            i += 1
            n += 1
        }
        guard n > 0, i < bytes.count, bytes[i] != UInt8(ascii: "."), bytes[i] != UInt8(ascii: "e") else { throw Unhandled() }
        return v
    }

    mutating func numbers() throws(Unhandled) -> [Double] {
        try expect(UInt8(ascii: "["))
        var out: [Double] = []
        if consume(UInt8(ascii: "]")) { return out }
        repeat { out.append(try number()) } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return out
    }

    /// An object of strings (metadata); `{}` costs nothing.
    mutating func strings() throws(Unhandled) -> [String: String] {
        try expect(UInt8(ascii: "{"))
        var out: [String: String] = [:]
        if consume(UInt8(ascii: "}")) { return out }
        repeat {
            let k = try string()
            try expect(UInt8(ascii: ":"))
            let v = try string()
            out[text(k)] = text(v)
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
        return out
    }

    /// A string's contents, without its quotes; one with an escape is left to the general parser.
    mutating func string() throws(Unhandled) -> Range<Int> {
        try expect(UInt8(ascii: "\""))
        let start = i
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; return start..<(i - 1) }
            if c == UInt8(ascii: "\\") || c < 0x20 { throw Unhandled() }
            i += 1
        }
        throw Unhandled()
    }

    func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[r]), as: UTF8.self) }

    func equals(_ r: Range<Int>, _ s: StaticString) -> Bool {
        r.count == s.utf8CodeUnitCount && memcmp(bytes.baseAddress! + r.lowerBound, s.utf8Start, r.count) == 0
    }

    func equals(_ r: Range<Int>, _ s: [UInt8]) -> Bool {
        s.withUnsafeBufferPointer { memcmp(bytes.baseAddress! + r.lowerBound, $0.baseAddress!, r.count) == 0 }
    }

    /// Past one JSON value of any kind (strings with escapes included), without reading it.
    mutating func skipValue() throws(Unhandled) {
        skipWhitespace()
        guard i < bytes.count else { throw Unhandled() }
        var depth = 0
        repeat {
            guard i < bytes.count else { throw Unhandled() }
            switch bytes[i] {
            case UInt8(ascii: "\""):
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1; i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1; i += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D: i += 1
            default:
                // A scalar: up to the next delimiter.
                while i < bytes.count, !Self.delimiter(bytes[i]) { i += 1 }
            }
        } while depth > 0
        guard depth == 0, i <= bytes.count else { throw Unhandled() }
    }

    private static func delimiter(_ c: UInt8) -> Bool {
        c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09
    }

    mutating func skipWhitespace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func expect(_ c: UInt8) throws(Unhandled) {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == c else { throw Unhandled() }
        i += 1
    }

    mutating func consume(_ c: UInt8) -> Bool {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == c else { return false }
        i += 1
        return true
    }
}
