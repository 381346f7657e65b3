/// Where a setting came from: a file line or a command-line flag.
public enum ConfigOrigin: Sendable, Equatable, CustomStringConvertible {
    case file(path: String, line: Int)
    case flag(String)

    public var description: String {
        switch self {
        case .file(let path, let line): "\(path):\(line)"
        case .flag(let flag): "command line \(flag)"
        }
    }
}

/// One problem found in the configuration.
public struct ConfigDiagnostic: Sendable, Equatable, CustomStringConvertible {
    public var origin: ConfigOrigin
    /// `section.key` when the problem concerns a key.
    public var key: String?
    public var message: String

    public var description: String {
        if let key { return "\(origin): \(key): \(message)" }
        return "\(origin): \(message)"
    }
}

/// Invalid configuration: every bad value found, each naming file, line, key and why.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [ConfigDiagnostic]
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

public struct ParsedConfiguration: Sendable, Equatable {
    public var configuration: Configuration
    /// Unknown sections and keys, repeated keys: reported, not fatal.
    public var warnings: [ConfigDiagnostic]
}

/// The INI dialect of strapd.conf: `[section]` headers (`[device.AA:BB:CC:DD:EE:FF]` for
/// per-device sections), `key = value` lines, whole-line comments starting with `#` or
/// `;`. Values are taken verbatim after trimming; a value wrapped in double quotes has
/// them removed. There are no inline comments (a `#` inside a value is part of it) and
/// no continuation lines. A key given twice: the later one wins, with a warning.
public enum ConfigParser {
    public static func parse(_ text: String, path: String, base: Configuration = Configuration()) throws(ConfigError) -> ParsedConfiguration {
        var config = base
        var warnings: [ConfigDiagnostic] = []
        var errors: [ConfigDiagnostic] = []
        var section: String?
        var sectionKnown = false
        var seen: [String: Int] = [:]

        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let lineNumber = index + 1
            let origin = ConfigOrigin.file(path: path, line: lineNumber)
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }

            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    errors.append(ConfigDiagnostic(origin: origin, key: nil, message: "malformed section header \"\(line)\""))
                    // Skip this section's keys: one error per mistake, not one per line.
                    section = ""
                    sectionKnown = false
                    continue
                }
                var name = String(line.dropFirst().dropLast()).trimmingWhitespace()
                sectionKnown = true
                if name.hasPrefix("device.") {
                    do {
                        name = "device." + (try ConfigValue.address(String(name.dropFirst(7))))
                    } catch {
                        errors.append(ConfigDiagnostic(origin: origin, key: nil, message: error.reason))
                        sectionKnown = false
                    }
                } else if !["daemon", "store", "bluetooth", "access", "simulate", "mqtt"].contains(name) {
                    warnings.append(ConfigDiagnostic(origin: origin, key: nil, message: "unknown section [\(name)]; its keys are ignored"))
                    sectionKnown = false
                }
                section = name
                continue
            }

            guard let eq = line.firstIndex(of: "=") else {
                errors.append(ConfigDiagnostic(origin: origin, key: nil, message: "expected key = value, got \"\(line)\""))
                continue
            }
            let key = String(line[..<eq]).trimmingWhitespace()
            var value = String(line[line.index(after: eq)...]).trimmingWhitespace()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard let current = section else {
                errors.append(ConfigDiagnostic(origin: origin, key: key, message: "key outside any [section]"))
                continue
            }
            guard sectionKnown else { continue }  // already warned about the section
            let qualified = "\(current).\(key)"
            if let previous = seen[qualified] {
                warnings.append(ConfigDiagnostic(origin: origin, key: qualified, message: "set again (first at line \(previous)); this value wins"))
            }
            seen[qualified] = lineNumber
            do {
                if !(try apply(&config, section: current, key: key, value: value)) {
                    warnings.append(ConfigDiagnostic(origin: origin, key: qualified, message: "unknown key; ignored"))
                }
            } catch {
                errors.append(ConfigDiagnostic(origin: origin, key: qualified, message: error.reason))
            }
        }
        if !errors.isEmpty { throw ConfigError(problems: errors) }
        return ParsedConfiguration(configuration: config, warnings: warnings)
    }

    /// Applies one `section.key = value`; false when the key is unknown.
    static func apply(_ config: inout Configuration, section: String, key: String, value: String) throws(ConfigValue.Invalid) -> Bool {
        if section.hasPrefix("device.") {
            let address = String(section.dropFirst(7))
            var device = config.devices[address] ?? Configuration.DeviceSettings()
            guard try ConfigSchema.applyDevice(&device, key: key, value: value) else { return false }
            config.devices[address] = device
            return true
        }
        if section == "mqtt", key == "password" { throw ConfigSchema.passwordRefusal }
        if section == "access", key.hasPrefix("read_types.") {
            try ConfigSchema.applyReadTypes(&config, principal: String(key.dropFirst(11)), value: value)
            return true
        }
        guard let entry = ConfigSchema.key("\(section).\(key)") else { return false }
        try entry.apply(&config, value)
        return true
    }
}

/// Command-line flags that override the file (docs/product.md §7), applied after it.
public enum ConfigOverrides {
    /// Flag → key it sets.
    public static let flags: [String: String] = [
        "--state-dir": "daemon.state_dir",
        "--socket": "daemon.socket",
        "--log-level": "daemon.log_level",
    ]

    /// Applies `(flag, value)` pairs in order. Besides the named flags, `--set` takes
    /// `section.key=value` for any key (the escape hatch for tests and one-off runs).
    public static func apply(_ overrides: [(flag: String, value: String)], to base: Configuration) throws(ConfigError) -> Configuration {
        var config = base
        var errors: [ConfigDiagnostic] = []
        for (flag, value) in overrides {
            var qualified: String
            var v = value
            if flag == "--set" {
                guard let eq = value.firstIndex(of: "=") else {
                    errors.append(ConfigDiagnostic(origin: .flag(flag), key: nil, message: "expected section.key=value, got \"\(value)\""))
                    continue
                }
                qualified = String(value[..<eq]).trimmingWhitespace()
                v = String(value[value.index(after: eq)...]).trimmingWhitespace()
            } else if let key = flags[flag] {
                qualified = key
            } else {
                errors.append(ConfigDiagnostic(origin: .flag(flag), key: nil, message: "not a configuration flag"))
                continue
            }
            // Split at the first dot, except device sections whose address contains none.
            let section: String
            let key: String
            if qualified.hasPrefix("device.") {
                guard let dot = qualified.lastIndex(of: ".") , dot > qualified.index(qualified.startIndex, offsetBy: 6) else {
                    errors.append(ConfigDiagnostic(origin: .flag(flag), key: qualified, message: "expected device.ADDRESS.key"))
                    continue
                }
                key = String(qualified[qualified.index(after: dot)...])
                do {
                    section = "device." + (try ConfigValue.address(String(qualified[qualified.index(qualified.startIndex, offsetBy: 7)..<dot])))
                } catch {
                    errors.append(ConfigDiagnostic(origin: .flag(flag), key: qualified, message: error.reason))
                    continue
                }
            } else {
                guard let dot = qualified.firstIndex(of: ".") else {
                    errors.append(ConfigDiagnostic(origin: .flag(flag), key: qualified, message: "expected section.key"))
                    continue
                }
                section = String(qualified[..<dot])
                key = String(qualified[qualified.index(after: dot)...])
            }
            do {
                if !(try ConfigParser.apply(&config, section: section, key: key, value: v)) {
                    errors.append(ConfigDiagnostic(origin: .flag(flag), key: qualified, message: "unknown key"))
                }
            } catch {
                errors.append(ConfigDiagnostic(origin: .flag(flag), key: qualified, message: error.reason))
            }
        }
        if !errors.isEmpty { throw ConfigError(problems: errors) }
        return config
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}
