import CShims
import Synchronization

/// Where StrapBlueZ reports what it does. The daemon installs a journald-backed handler;
/// the default writes to stderr so tests and tools see it too.
public enum BlueZLogLevel: Int, Sendable, Comparable {
    case debug, info, notice, warning, error
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

public enum BusLog {
    /// Structured context of a line in swift-log's style; strapd's logger turns each key into
    /// a journald field ("device.address" → `DEVICE_ADDRESS=`).
    public typealias Metadata = [String: String]
    public typealias Handler = @Sendable (BlueZLogLevel, String, Metadata) -> Void

    /// The metadata key of the sensor a line is about.
    public static let deviceAddressKey = "device.address"

    /// The metadata of a line about the sensor at `address`.
    public static func device(_ address: String) -> Metadata { [deviceAddressKey: address] }

    private struct State {
        var handler: Handler
        var minimum: BlueZLogLevel
        var taps: [Int: (minimum: BlueZLogLevel, handler: Handler)] = [:]
        var nextTap = 0
    }

    private static let state = Mutex<State>(State(
        handler: { level, text, _ in
            let line = "strapd[bluez] \(level): \(text)\n"
            line.withCString { cshims_write_stderr($0, strlen($0)) }
        },
        minimum: .info
    ))

    /// Replaces the handler; returns the previous one so a caller can chain or restore it.
    @discardableResult
    public static func install(minimum: BlueZLogLevel = .info, _ handler: @escaping Handler) -> (Handler, BlueZLogLevel) {
        state.withLock { state in
            defer { (state.handler, state.minimum) = (handler, minimum) }
            return (state.handler, state.minimum)
        }
    }

    /// Another receiver of every line at or above `minimum`, beside the handler, until
    /// `removeTap`. Tests read the log this way: tests run in parallel, and one restoring the
    /// handler it replaced would unhook another's.
    public static func addTap(minimum: BlueZLogLevel = .info, _ tap: @escaping Handler) -> Int {
        state.withLock { state in
            state.nextTap += 1
            state.taps[state.nextTap] = (minimum, tap)
            return state.nextTap
        }
    }

    public static func removeTap(_ id: Int) {
        state.withLock { _ = $0.taps.removeValue(forKey: id) }
    }

    public static func log(_ level: BlueZLogLevel, _ text: @autoclosure () -> String, metadata: Metadata = [:]) {
        let (handler, minimum, taps) = state.withLock { ($0.handler, $0.minimum, $0.taps) }
        let tapped = taps.values.filter { level >= $0.minimum }
        guard level >= minimum || !tapped.isEmpty else { return }
        let line = text()
        if level >= minimum { handler(level, line, metadata) }
        for tap in tapped { tap.handler(level, line, metadata) }
    }

    public static func debug(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.debug, text(), metadata: metadata) }
    public static func info(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.info, text(), metadata: metadata) }
    public static func notice(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.notice, text(), metadata: metadata) }
    public static func warning(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.warning, text(), metadata: metadata) }
    public static func error(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.error, text(), metadata: metadata) }
}
