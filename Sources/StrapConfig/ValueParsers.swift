/// Parsers for the value syntaxes of strapd.conf. Each throws a `String` reason that the
/// caller wraps with file, line and key.
public enum ConfigValue {
    public struct Invalid: Error, Sendable, Equatable {
        public let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// `yes/no`, `true/false`, `on/off`, `1/0` (case-insensitive), as systemd accepts.
    public static func bool(_ text: String) throws(Invalid) -> Bool {
        switch text.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw Invalid("expected yes or no, got \"\(text)\"")
        }
    }

    public static func choice<E: RawRepresentable & CaseIterable>(_ text: String, _: E.Type) throws(Invalid) -> E where E.RawValue == String {
        if let v = E(rawValue: text.lowercased()) ?? E.allCases.first(where: { $0.rawValue == text }) { return v }
        throw Invalid("expected one of \(E.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
    }

    /// `0`, or one or more `<integer><unit>` parts: `100ms`, `30s`, `5min`/`5m`, `2h`,
    /// `14d`, `1w`, `1h30min`. A bare number without unit is refused (ambiguous), except 0.
    public static func duration(_ text: String) throws(Invalid) -> Duration {
        let s = text.lowercased().filter { $0 != " " }
        if s == "0" { return .zero }
        var total = Duration.zero
        var rest = Substring(s)
        guard !rest.isEmpty else { throw Invalid("empty duration") }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let n = Int64(digits) else {
                throw Invalid("expected a duration such as 100ms, 30s, 5min, 2h, 14d, got \"\(text)\"")
            }
            // Bounded before any unit multiplication, which would otherwise overflow.
            guard n <= 1_000_000_000 else { throw Invalid("duration \"\(text)\" is too large") }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            let part: Duration
            switch unit {
            case "ms": part = .milliseconds(n)
            case "s", "sec": part = .seconds(n)
            case "m", "min": part = .seconds(n * 60)
            case "h": part = .seconds(n * 3600)
            case "d": part = .seconds(n * 86_400)
            case "w": part = .seconds(n * 604_800)
            case "": throw Invalid("a duration needs a unit (ms, s, min, h, d, w), got \"\(text)\"")
            default: throw Invalid("unknown duration unit \"\(unit)\" in \"\(text)\"")
            }
            total += part
        }
        return total
    }

    /// Bytes: `<integer>[B|K|KiB|M|MiB|G|GiB]`, binary multiples (as systemd: K = 1024).
    public static func size(_ text: String) throws(Invalid) -> Int {
        let s = text.filter { $0 != " " }
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let n = Int(digits) else { throw Invalid("expected a size such as 512K or 4M, got \"\(text)\"") }
        let multiplier: Int
        switch s.dropFirst(digits.count).lowercased() {
        case "", "b": multiplier = 1
        case "k", "kib", "kb": multiplier = 1 << 10
        case "m", "mib", "mb": multiplier = 1 << 20
        case "g", "gib", "gb": multiplier = 1 << 30
        default: throw Invalid("unknown size unit in \"\(text)\" (use K, M or G)")
        }
        let (bytes, overflow) = n.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw Invalid("size \"\(text)\" is too large") }
        return bytes
    }

    public static func integer(_ text: String, in range: ClosedRange<Int>) throws(Invalid) -> Int {
        guard let n = Int(text) else { throw Invalid("expected an integer, got \"\(text)\"") }
        guard range.contains(n) else { throw Invalid("\(n) is outside \(range.lowerBound)...\(range.upperBound)") }
        return n
    }

    /// Items separated by commas and/or whitespace; empty items are dropped.
    public static func list(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// `uid:1000`, `user:alice`, `gid:100`, `group:strapd`.
    public static func principal(_ text: String) throws(Invalid) -> PrincipalSpec {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else {
            throw Invalid("expected uid:N, user:NAME, gid:N or group:NAME, got \"\(text)\"")
        }
        switch parts[0] {
        case "uid", "gid":
            guard let id = UInt32(parts[1]), id != UInt32.max else { throw Invalid("\"\(parts[1])\" is not a valid \(parts[0])") }
            return parts[0] == "uid" ? .uid(id) : .gid(id)
        case "user", "group":
            // POSIX portable user/group name characters, plus the common leading '_'.
            let ok = parts[1].utf8.count <= 32 && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-$".contains($0)) }
            guard ok else { throw Invalid("\"\(parts[1])\" is not a valid \(parts[0]) name") }
            return parts[0] == "user" ? .user(parts[1]) : .group(parts[1])
        default:
            throw Invalid("expected uid:N, user:NAME, gid:N or group:NAME, got \"\(text)\"")
        }
    }

    public static func principals(_ text: String) throws(Invalid) -> [PrincipalSpec] {
        var out: [PrincipalSpec] = []
        for item in list(text) {
            let p = try principal(item)
            if !out.contains(p) { out.append(p) }
        }
        return out
    }

    public static func sampleTypes(_ text: String) throws(Invalid) -> [String] {
        let items = list(text)
        guard !items.isEmpty else { throw Invalid("expected at least one sample type") }
        for t in items where !knownSampleTypes.contains(t) {
            throw Invalid("unknown sample type \"\(t)\" (known: \(knownSampleTypes.joined(separator: ", ")))")
        }
        return items
    }

    /// A Bluetooth address `AA:BB:CC:DD:EE:FF`, returned upper-case.
    public static func address(_ text: String) throws(Invalid) -> String {
        let octets = text.split(separator: ":", omittingEmptySubsequences: false)
        guard octets.count == 6, octets.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw Invalid("\"\(text)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        return text.uppercased()
    }

    /// An adapter as strapd.conf names one: `hciN` (N a number), or its Bluetooth address,
    /// returned upper-case.
    public static func adapter(_ text: String) throws(Invalid) -> String {
        let index = text.dropFirst(3)
        if text.hasPrefix("hci"), !index.isEmpty, index.allSatisfy({ $0.isASCII && $0.isNumber }) { return text }
        if let address = try? address(text) { return address }
        throw Invalid("expected an adapter: hciN with N a number (hci0, hci1) or its Bluetooth address (AA:BB:CC:DD:EE:FF), got \"\(text)\"")
    }

    /// An absolute path without NUL or newline.
    public static func absolutePath(_ text: String) throws(Invalid) -> String {
        guard text.hasPrefix("/") else { throw Invalid("expected an absolute path, got \"\(text)\"") }
        guard !text.contains("\0") else { throw Invalid("path contains NUL") }
        return text
    }

    /// Wheel circumference: metres (`2.105`, `2.105m`) or millimetres (`2105mm`), 0.1–5 m.
    public static func circumference(_ text: String) throws(Invalid) -> Double {
        let lower = text.lowercased()
        let metres: Double?
        if lower.hasSuffix("mm") {
            metres = Double(lower.dropLast(2)).map { $0 / 1000 }
        } else if lower.hasSuffix("m") {
            metres = Double(lower.dropLast())
        } else {
            metres = Double(lower)
        }
        guard let m = metres, m.isFinite else { throw Invalid("expected metres (2.105) or millimetres (2105mm), got \"\(text)\"") }
        guard (0.1...5).contains(m) else { throw Invalid("\(text) is not a plausible wheel circumference (0.1 to 5 m)") }
        return m
    }
}
