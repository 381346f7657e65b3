import CShims
import Synchronization

/// Where StrapBlueZ reports what it does. The daemon installs a journald-backed handler;
/// the default writes to stderr so tests and tools see it too.
public enum BlueZLogLevel: Int, Sendable, Comparable {
    case debug, info, notice, warning, error
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

public enum BusLog {
    public typealias Handler = @Sendable (BlueZLogLevel, String) -> Void

    private static let state = Mutex<(handler: Handler, minimum: BlueZLogLevel)>((
        { level, text in
            let line = "strapd[bluez] \(level): \(text)\n"
            line.withCString { cshims_write_stderr($0, strlen($0)) }
        },
        .info
    ))

    /// Replaces the handler; returns the previous one so a caller can chain or restore it.
    @discardableResult
    public static func install(minimum: BlueZLogLevel = .info, _ handler: @escaping Handler) -> (Handler, BlueZLogLevel) {
        state.withLock { state in
            defer { state = (handler, minimum) }
            return (state.handler, state.minimum)
        }
    }

    public static func log(_ level: BlueZLogLevel, _ text: @autoclosure () -> String) {
        let (handler, minimum) = state.withLock { ($0.handler, $0.minimum) }
        guard level >= minimum else { return }
        handler(level, text())
    }

    public static func debug(_ text: @autoclosure () -> String) { log(.debug, text()) }
    public static func info(_ text: @autoclosure () -> String) { log(.info, text()) }
    public static func notice(_ text: @autoclosure () -> String) { log(.notice, text()) }
    public static func warning(_ text: @autoclosure () -> String) { log(.warning, text()) }
    public static func error(_ text: @autoclosure () -> String) { log(.error, text()) }
}

import Glibc
