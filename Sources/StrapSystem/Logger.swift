import CShims
import CSystemd
import Glibc
import StrapWire
import Synchronization

/// syslog priorities, as journald stores them in PRIORITY=.
public enum LogLevel: Int32, Sendable, CaseIterable, Comparable {
    case critical = 2
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public var name: String {
        switch self {
        case .critical: "critical"
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    /// More severe compares smaller, as in syslog.
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Where log lines go.
public enum LogSink: Sendable, Equatable {
    /// journald through `sd_journal_sendv`, with structured fields.
    case journal
    /// A human-readable line on stderr (through the C shim: Swift 6 may not touch the
    /// `stderr` global: docs/swift-on-linux.md#stdout-and-stderr-are-off-limits-under-swift-6).
    case stderr

    /// journald when stderr is already connected to it (systemd sets JOURNAL_STREAM to
    /// the stream's `device:inode`, and we check it is still our fd 2), else stderr.
    /// This is sd_journal_stream_fd's documented detection and avoids sending to journald
    /// when a user runs the daemon by hand in a terminal.
    public static func detect(environment: [String: String]) -> LogSink {
        guard let stream = environment["JOURNAL_STREAM"] else { return .stderr }
        var st = stat()
        guard fstat(2, &st) == 0 else { return .stderr }
        return stream == "\(st.st_dev):\(st.st_ino)" ? .journal : .stderr
    }
}

/// A log line's structured context: lower-case dotted keys, as swift-log writes them.
public typealias LogMetadata = [String: String]

/// The metadata keys strapd uses.
public enum LogKey {
    /// The sensor a line is about ("AA:BB:CC:DD:EE:FF"): journald's `DEVICE_ADDRESS=`.
    public static let deviceAddress = "device.address"
    /// A link-quality reading in dBm: `RSSI=`.
    public static let rssi = "rssi"
}

/// Structured logging. Thread-safe: the level may be changed (SIGHUP reload) while
/// other threads log.
public final class Logger: Sendable {
    public let identifier: String
    public let sink: LogSink
    private let level: Atomic<Int32>

    public init(identifier: String = "strapd", level: LogLevel = .info, sink: LogSink) {
        self.identifier = identifier
        self.sink = sink
        self.level = Atomic(level.rawValue)
    }

    public var minimumLevel: LogLevel {
        get { LogLevel(rawValue: level.load(ordering: .relaxed)) ?? .info }
        set { level.store(newValue.rawValue, ordering: .relaxed) }
    }

    public func isEnabled(_ l: LogLevel) -> Bool { l.rawValue <= level.load(ordering: .relaxed) }

    /// `metadata` is structured context in swift-log's style, e.g.
    /// `["device.address": "AA:BB:..."]`; journald gets each entry as a field
    /// (`DEVICE_ADDRESS=`, see `JournalEntry.fieldName(forMetadataKey:)`).
    public func log(_ l: LogLevel, _ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        guard isEnabled(l) else { return }
        let entry = JournalEntry(level: l, message: message(), identifier: identifier, metadata: metadata)
        switch sink {
        case .journal: entry.send()
        case .stderr:
            let line = entry.stderrLine(timestampMilliseconds: currentMilliseconds())
            line.withCString { cshims_write_stderr($0, strlen($0)) }
        }
    }

    public func debug(_ m: @autoclosure () -> String, metadata: LogMetadata = [:]) { log(.debug, m(), metadata: metadata) }
    public func info(_ m: @autoclosure () -> String, metadata: LogMetadata = [:]) { log(.info, m(), metadata: metadata) }
    public func notice(_ m: @autoclosure () -> String, metadata: LogMetadata = [:]) { log(.notice, m(), metadata: metadata) }
    public func warning(_ m: @autoclosure () -> String, metadata: LogMetadata = [:]) { log(.warning, m(), metadata: metadata) }
    public func error(_ m: @autoclosure () -> String, metadata: LogMetadata = [:]) { log(.error, m(), metadata: metadata) }

    private func currentMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec / 1_000_000)
    }
}

/// One log record and its two renderings.
public struct JournalEntry: Sendable, Equatable {
    public var level: LogLevel
    public var message: String
    public var identifier: String
    public var metadata: LogMetadata

    public init(level: LogLevel, message: String, identifier: String, metadata: LogMetadata = [:]) {
        self.level = level
        self.message = message
        self.identifier = identifier
        self.metadata = metadata
    }

    /// journald field names: uppercase ASCII letters, digits, underscore; not starting
    /// with a digit or underscore (leading underscore is reserved for trusted fields);
    /// at most 64 characters.
    public static func isValidFieldName(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 64 else { return false }
        guard first != UInt8(ascii: "_"), !(0x30...0x39).contains(first) else { return false }
        return name.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// "device.address" → "DEVICE_ADDRESS": upper case, `.` and `-` as `_`. nil when the
    /// result is still no valid journald name (it is then dropped).
    public static func fieldName(forMetadataKey key: String) -> String? {
        var name = ""
        for c in key.unicodeScalars {
            switch c {
            case ".", "-": name.unicodeScalars.append("_")
            case "a"..."z": name.unicodeScalars.append(Unicode.Scalar(c.value - 32)!)
            default: name.unicodeScalars.append(c)
            }
        }
        return isValidFieldName(name) ? name : nil
    }

    /// The metadata as journald fields, sorted by name; invalid and reserved names dropped.
    public var fields: [(name: String, value: String)] {
        let reserved: Set<String> = ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"]
        return metadata.compactMap { key, value in
            guard let name = Self.fieldName(forMetadataKey: key), !reserved.contains(name) else { return nil }
            return (name, value)
        }.sorted { $0.name < $1.name }
    }

    /// The `KEY=value` assignments handed to sd_journal_sendv, in a stable order.
    public var assignments: [String] {
        ["MESSAGE=\(message)", "PRIORITY=\(level.rawValue)", "SYSLOG_IDENTIFIER=\(identifier)"]
            + fields.map { "\($0.name)=\($0.value)" }
    }

    /// `2026-11-29T21:00:00.123Z strapd[warning]: message DEVICE_ADDRESS=AA:BB`
    public func stderrLine(timestampMilliseconds: Int64) -> String {
        var line = "\(RFC3339Timestamp.format(millisecondsSinceEpoch: timestampMilliseconds)) \(identifier)[\(level.name)]: "
        line += message.replacing("\n", with: "\\n")
        for (name, value) in fields {
            line += " \(name)=\(value.replacing("\n", with: "\\n"))"
        }
        return line + "\n"
    }

    /// Sends through sd_journal_sendv. Values may contain newlines: sd-journal encodes
    /// such fields in journald's binary form. Failures are ignored: a logger must not fail.
    public func send() {
        let strings = assignments
        let buffers: [UnsafeMutableBufferPointer<UInt8>] = strings.map { s in
            let buf = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: s.utf8.count)
            _ = buf.initialize(from: s.utf8)
            return buf
        }
        defer { buffers.forEach { $0.deallocate() } }
        var iov = buffers.map { iovec(iov_base: UnsafeMutableRawPointer($0.baseAddress), iov_len: $0.count) }
        _ = iov.withUnsafeMutableBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
    }
}
