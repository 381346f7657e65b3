import StrapBluetooth
import StrapConfig
import StrapSystem

extension BlueZDeviceService {
    /// Real sensors through BlueZ, feeding `pipeline` (built, not started). Its start never
    /// fails: without the system bus, bluetoothd or an adapter the daemon runs degraded
    /// ("bluetooth: …" in `status`) and picks them up when they appear.
    static func make(options: DaemonOptions, configuration c: Configuration, logger: Logger, pipeline: Pipeline) -> BlueZDeviceService {
        let settings = BlueZDeviceService.Settings(stateDirectory: c.daemon.stateDirectory, busAddress: options.systemBusAddress,
                                                   bluetooth: c.bluetooth, devices: c.devices)
        let service = BlueZDeviceService(settings: settings, logger: logger) { pipeline.submit($0) }
        let live = pipeline.live
        service.publishLinkQuality = { address, reading in
            live.publish([.linkQuality(address, rssi: reading.value, reason: reading.reason)])
        }
        return service
    }
}
