import StrapBlueZ
import StrapSystem

extension BlueZDeviceService {
    /// StrapBlueZ logs through `BusLog` (process-global); this sends it to `logger`
    /// (journald), its metadata as journal fields (`device.address` → `DEVICE_ADDRESS=`).
    /// Debug lines pass only while `logger` is at debug level: call again after a change.
    public static func forwardBusLog(to logger: Logger) {
        let minimum: BlueZLogLevel = logger.isEnabled(.debug) ? .debug : .info
        BusLog.install(minimum: minimum) { level, text, metadata in
            let l: LogLevel = switch level {
            case .debug: .debug
            case .info: .info
            case .notice: .notice
            case .warning: .warning
            case .error: .error
            }
            logger.log(l, text, metadata: metadata)
        }
    }
}
