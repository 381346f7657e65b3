/// Where a command writes. Streaming commands (scan, live, anchored --follow) write as
/// events arrive; tests collect instead.
public final class OutputSink: @unchecked Sendable {
    public let isTerminal: Bool
    private let out: (String) -> Void
    private let err: (String) -> Void

    public init(isTerminal: Bool = false, stdout: @escaping (String) -> Void, stderr: @escaping (String) -> Void) {
        self.isTerminal = isTerminal
        self.out = stdout
        self.err = stderr
    }

    public func print(_ line: String) { out(line + "\n") }
    public func write(_ text: String) { out(text) }
    public func error(_ line: String) { err(line + "\n") }

    /// A sink that keeps everything, for `CommandOutput`.
    static func collecting(isTerminal: Bool = false) -> (OutputSink, () -> (String, String)) {
        let box = Collected()
        let sink = OutputSink(isTerminal: isTerminal, stdout: { box.out += $0 }, stderr: { box.err += $0 })
        return (sink, { (box.out, box.err) })
    }

    private final class Collected { var out = ""; var err = "" }
}
