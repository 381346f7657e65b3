/// Why a byte sequence is not a JSON document; `offset` is the byte offset in the input.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public let offset: Int
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes. Hand-written rather than Foundation's
/// so that integer/double stay distinct, duplicate keys and invalid UTF-8 are rejected,
/// nesting is bounded (a hostile client cannot exhaust the stack) and error messages name
/// the byte offset.
public struct JSONParser {
    public static let maximumDepth = 64

    /// `overflowToInfinity`: a number too large for a double (`1e400`) parses as ±infinity
    /// instead of failing the whole document, so a request's envelope (its id) still parses
    /// and the one parameter can be refused by name. JSON output never holds infinities.
    public static func parse(_ bytes: some Collection<UInt8>, overflowToInfinity: Bool = false) throws(JSONParseError) -> JSONValue {
        // A line already in contiguous memory (an array or a slice of one) is parsed where it is.
        if let parsed = bytes.withContiguousStorageIfAvailable({ buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer, overflowToInfinity: overflowToInfinity) }
        }) {
            return try parsed.get()
        }
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSONValue in
            try parse(buffer: buffer, overflowToInfinity: overflowToInfinity)
        }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>, overflowToInfinity: Bool) throws(JSONParseError) -> JSONValue {
        var parser = Cursor(bytes: buffer)
        parser.overflowToInfinity = overflowToInfinity
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.error("unexpected data after the JSON value") }
        return value
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var overflowToInfinity = false

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func error(_ reason: String) -> JSONParseError { JSONParseError(reason: reason, offset: index) }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
            guard let byte = peek else { throw error("unexpected end of input") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("unexpected character")
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONParseError) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw error("invalid literal") }
            for i in 0..<count where bytes[index + i] != word.utf8Start[i] { throw error("invalid literal") }
            index += count
        }

        mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth <= JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
            index += 1
            var result = JSONObject()
            skipWhitespace()
            if peek == UInt8(ascii: "}") { index += 1; return .object(result) }
            while true {
                skipWhitespace()
                guard peek == UInt8(ascii: "\"") else { throw error("expected a string key") }
                let keyOffset = index
                let key = try string()
                guard result[key] == nil else { throw JSONParseError(reason: "duplicate key \"\(key)\"", offset: keyOffset) }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                // Known absent (checked above): appended without a second search.
                result.appendAbsent(key, try value(depth: depth))
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return .object(result)
                default: throw error("expected ',' or '}'")
                }
            }
        }

        mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth <= JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
            index += 1
            var result: [JSONValue] = []
            skipWhitespace()
            if peek == UInt8(ascii: "]") { index += 1; return .array(result) }
            while true {
                skipWhitespace()
                result.append(try value(depth: depth))
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array(result)
                default: throw error("expected ',' or ']'")
                }
            }
        }

        mutating func number() throws(JSONParseError) -> JSONValue {
            let start = index
            var isInteger = true
            if peek == UInt8(ascii: "-") { index += 1 }
            guard let first = peek, first >= 0x30, first <= 0x39 else { throw error("invalid number") }
            if first == 0x30 {
                index += 1
                if let next = peek, next >= 0x30, next <= 0x39 { throw error("leading zero in number") }
            } else {
                skipDigits()
            }
            if peek == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard skipDigits() > 0 else { throw error("digit expected after '.'") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard skipDigits() > 0 else { throw error("digit expected in exponent") }
            }
            if isInteger, let int = integer(from: start, to: index) { return .int(int) }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let double = Double(text), double.isFinite || overflowToInfinity else {
                throw JSONParseError(reason: "number out of range", offset: start)
            }
            return .double(double)
        }

        /// An integer's digits (an optional minus, then digits) read as an Int64 without a
        /// String in between; nil past Int64's range, which then parses as a double, as before.
        func integer(from start: Int, to end: Int) -> Int64? {
            var i = start
            let negative = bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            var value: Int64 = 0
            while i < end {
                let digit = Int64(bytes[i] &- 0x30)
                // Accumulated negatively so that Int64.min, one more than Int64.max in size, fits.
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(digit)
                guard !o1, !o2 else { return nil }
                value = next
                i += 1
            }
            if negative { return value }
            return value == .min ? nil : -value
        }

        @discardableResult
        mutating func skipDigits() -> Int {
            let start = index
            while let b = peek, b >= 0x30, b <= 0x39 { index += 1 }
            return index - start
        }

        mutating func string() throws(JSONParseError) -> String {
            index += 1  // opening quote
            let start = index
            // Fast path: no escapes, all ASCII or valid UTF-8 validated by String(validating:).
            var hasEscape = false
            var ascii = true
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") { break }
                if b < 0x20 { throw error("control character in string") }
                if b == UInt8(ascii: "\\") { hasEscape = true; index += 2; continue }
                if b >= 0x80 { ascii = false }
                index += 1
            }
            guard index < bytes.count else { throw JSONParseError(reason: "unterminated string", offset: start - 1) }
            let end = index
            index += 1
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // ASCII is valid UTF-8 as it stands: String(decoding:) takes it in one copy, where
            // String(validating:) goes through generic metadata on every call (a third of a
            // live line's parsing in strapd-web's profile).
            if !hasEscape, ascii { return String(decoding: raw, as: UTF8.self) }
            if !hasEscape {
                guard let s = String(validating: raw, as: UTF8.self) else {
                    throw JSONParseError(reason: "invalid UTF-8 in string", offset: start)
                }
                return s
            }
            return try unescape(raw, base: start)
        }

        func unescape(_ raw: UnsafeBufferPointer<UInt8>, base: Int) throws(JSONParseError) -> String {
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var i = 0
            func fail(_ reason: String) -> JSONParseError { JSONParseError(reason: reason, offset: base + i) }
            func hex4(at p: Int) throws(JSONParseError) -> UInt32 {
                guard p + 4 <= raw.count else { throw fail("truncated \\u escape") }
                var v: UInt32 = 0
                for k in 0..<4 {
                    let c = raw[p + k]
                    let d: UInt32
                    switch c {
                    case 0x30...0x39: d = UInt32(c - 0x30)
                    case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                    case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                    default: throw fail("invalid \\u escape")
                    }
                    v = v << 4 | d
                }
                return v
            }
            while i < raw.count {
                let b = raw[i]
                guard b == UInt8(ascii: "\\") else { out.append(b); i += 1; continue }
                guard i + 1 < raw.count else { throw fail("truncated escape") }
                let e = raw[i + 1]
                switch e {
                case UInt8(ascii: "\""): out.append(0x22); i += 2
                case UInt8(ascii: "\\"): out.append(0x5C); i += 2
                case UInt8(ascii: "/"): out.append(0x2F); i += 2
                case UInt8(ascii: "b"): out.append(0x08); i += 2
                case UInt8(ascii: "f"): out.append(0x0C); i += 2
                case UInt8(ascii: "n"): out.append(0x0A); i += 2
                case UInt8(ascii: "r"): out.append(0x0D); i += 2
                case UInt8(ascii: "t"): out.append(0x09); i += 2
                case UInt8(ascii: "u"):
                    var scalar = try hex4(at: i + 2)
                    i += 6
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 1 < raw.count, raw[i] == 0x5C, raw[i + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate")
                        }
                        let low = try hex4(at: i + 2)
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate")
                    }
                    out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default: throw fail("invalid escape")
                }
            }
            guard let s = String(validating: out, as: UTF8.self) else {
                throw JSONParseError(reason: "invalid UTF-8 in string", offset: base)
            }
            return s
        }
    }
}
