import Glibc

/// Where a command writes. Streaming commands (scan, live, anchored --follow) write as
/// events arrive; tests collect instead.
public final class OutputSink: @unchecked Sendable {
    /// Standard output is a terminal (redrawing, charts in Unicode).
    public let isTerminal: Bool
    /// Standard error is a terminal (progress bars).
    public let errorIsTerminal: Bool
    /// The terminal's width in columns when the terminal told (TIOCGWINSZ).
    public let columns: Int?
    private let out: (String) -> Void
    private let err: (String) -> Void
    private let outBytes: ([UInt8]) -> Void

    /// `stdoutBytes` writes binary data (`workout export -o -`); without it bytes go through
    /// `stdout` as UTF-8 text.
    public init(isTerminal: Bool = false, errorIsTerminal: Bool = false, columns: Int? = nil,
                stdout: @escaping (String) -> Void, stderr: @escaping (String) -> Void,
                stdoutBytes: (([UInt8]) -> Void)? = nil) {
        self.isTerminal = isTerminal
        self.errorIsTerminal = errorIsTerminal
        self.columns = columns
        self.out = stdout
        self.err = stderr
        self.outBytes = stdoutBytes ?? { stdout(String(decoding: $0, as: UTF8.self)) }
    }

    public func print(_ line: String) { out(line + "\n") }
    public func write(_ text: String) { out(text) }
    public func write(bytes: [UInt8]) { outBytes(bytes) }
    public func error(_ line: String) { err(line + "\n") }
    /// Standard error without a line end (a progress bar redrawn with `\r`).
    public func writeError(_ text: String) { err(text) }

    /// A sink that keeps everything, for `CommandOutput`.
    static func collecting(isTerminal: Bool = false) -> (OutputSink, () -> (String, String)) {
        let box = Collected()
        let sink = OutputSink(isTerminal: isTerminal, stdout: { box.out += $0 }, stderr: { box.err += $0 })
        return (sink, { (box.out, box.err) })
    }

    private final class Collected { var out = ""; var err = "" }
}

/// What strapctl asks of the terminal it runs in.
public enum Terminal {
    /// The width of the terminal on `fd`, nil when it is not one (or says 0).
    public static func columns(fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Whether the locale's character set is UTF-8: the first of LC_ALL, LC_CTYPE, LANG that
    /// is set decides, as setlocale(3) does; none set is the C locale (ASCII).
    static func isUTF8(_ environment: [String: String]) -> Bool {
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            guard let value = environment[name], !value.isEmpty else { continue }
            let lower = value.lowercased()
            return lower.contains("utf-8") || lower.contains("utf8")
        }
        return false
    }

    /// The variables strapctl reads besides STRAPD_SOCKET.
    public static let environmentNames = ["STRAPD_SOCKET", "COLUMNS", "LC_ALL", "LC_CTYPE", "LANG"]
}
