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

    private static let state = Mutex<(handler: Handler, minimum: BlueZLogLevel)>((
        { level, text, _ in
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

    public static func log(_ level: BlueZLogLevel, _ text: @autoclosure () -> String, metadata: Metadata = [:]) {
        let (handler, minimum) = state.withLock { ($0.handler, $0.minimum) }
        guard level >= minimum else { return }
        handler(level, text(), metadata)
    }

    public static func debug(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.debug, text(), metadata: metadata) }
    public static func info(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.info, text(), metadata: metadata) }
    public static func notice(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.notice, text(), metadata: metadata) }
    public static func warning(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.warning, text(), metadata: metadata) }
    public static func error(_ text: @autoclosure () -> String, metadata: Metadata = [:]) { log(.error, text(), metadata: metadata) }
}
