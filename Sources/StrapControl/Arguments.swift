import Glibc
import StrapWire

typealias WireJSON = StrapWire.JSONValue

/// A usage error: exit 2 with the message and the command's usage.
struct UsageError: Error {
    let message: String
    /// False when the usage text would not help (which session to pick, say).
    var showsUsage = true
}

/// Minimal option parsing: `--name value`, `--name=value`, repeated options, flags and
/// positional arguments, in any order.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    init(_ args: [String], options: Set<String>, flags known: Set<String>) throws(UsageError) {
        var i = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            guard arg.hasPrefix("--"), arg.count > 2 else { positional.append(arg); continue }
            var name = String(arg.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if known.contains(name) {
                guard inline == nil else { throw UsageError(message: "--\(name) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                if let inline { values[name, default: []].append(inline); continue }
                guard i < args.count else { throw UsageError(message: "--\(name) needs a value") }
                values[name, default: []].append(args[i])
                i += 1
            } else {
                throw UsageError(message: "unknown option --\(name)")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func value(_ name: String) -> String? { values[name]?.last }

    func int(_ name: String, min: Int = 1) throws(UsageError) -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v), n >= min else { throw UsageError(message: "--\(name) must be an integer ≥ \(min)") }
        return n
    }

    func number(_ name: String) throws(UsageError) -> Double? {
        guard let v = value(name) else { return nil }
        guard let n = Double(v), n > 0 else { throw UsageError(message: "--\(name) must be a positive number") }
        return n
    }

    /// A time: RFC 3339, `now`, or relative to now like `-90s`, `-15m`, `-2h`, `-1d`, `-1w`.
    func time(_ name: String, now: Int64) throws(UsageError) -> Int64? {
        guard let v = value(name) else { return nil }
        if let t = TimeArgument.parse(v, now: now) { return t }
        throw UsageError(message: "--\(name): not a time: \(v) (RFC 3339, now, or -15m/-2h/-1d)")
    }

    func single(_ what: String) throws(UsageError) -> String {
        guard positional.count == 1 else { throw UsageError(message: positional.isEmpty ? "missing \(what)" : "too many arguments") }
        return positional[0]
    }

    func noPositional() throws(UsageError) {
        if let extra = positional.first { throw UsageError(message: "unexpected argument '\(extra)'") }
    }
}

enum TimeArgument {
    static func parse(_ text: String, now: Int64) -> Int64? {
        if text == "now" { return now }
        if text.hasPrefix("-"), let d = duration(String(text.dropFirst())) { return now - d }
        return try? RFC3339Timestamp.parse(text)
    }

    /// `90s`, `15m`, `2h`, `1d`, `1w` in milliseconds.
    static func duration(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000), ("w", 604_800_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let n = Int64(text.dropLast(suffix.count)), n >= 0 { return n * scale }
        }
        return nil
    }

    static func nowMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
