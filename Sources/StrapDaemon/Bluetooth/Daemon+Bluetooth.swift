import StrapBlueZ
import StrapSystem

extension Daemon {
    /// Real sensors through BlueZ. Never fails the start: without the system bus,
    /// bluetoothd or an adapter the daemon runs degraded ("bluetooth: …" in `status`) and
    /// picks them up when they appear.
    func startBluetooth(pipeline: Pipeline) -> BlueZDeviceService {
        if options.forwardBusLog { Self.forwardBusLog(to: logger) }
        let c = configuration
        let settings = BlueZDeviceService.Settings(stateDirectory: c.daemon.stateDirectory, busAddress: options.systemBusAddress,
                                                   bluetooth: c.bluetooth, devices: c.devices)
        let service = BlueZDeviceService(settings: settings, logger: logger) { pipeline.submit($0) }
        let live = pipeline.live
        service.publishLinkQuality = { address, reading in
            live.publish([.linkQuality(address, rssi: reading.value, reason: reading.reason)])
        }
        service.start()
        return service
    }

    /// StrapBlueZ logs through `BusLog`; send it to our logger (journald), with the
    /// `[AA:BB:…]` prefix its link messages carry as `DEVICE_ADDRESS=`.
    static func forwardBusLog(to logger: Logger) {
        let minimum: BlueZLogLevel = logger.isEnabled(.debug) ? .debug : .info
        BusLog.install(minimum: minimum) { level, text in
            var fields: [String: String] = [:]
            if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                let address = text[text.index(after: text.startIndex)..<close]
                if address.count == 17 { fields["DEVICE_ADDRESS"] = String(address) }
            }
            let l: LogLevel = switch level {
            case .debug: .debug
            case .info: .info
            case .notice: .notice
            case .warning: .warning
            case .error: .error
            }
            logger.log(l, text, fields: fields)
        }
    }
}
