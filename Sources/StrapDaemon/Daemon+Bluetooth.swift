import StrapBluetooth
import StrapSystem

extension Daemon {
    /// Real sensors through BlueZ. Never fails the start: without the system bus,
    /// bluetoothd or an adapter the daemon runs degraded ("bluetooth: …" in `status`) and
    /// picks them up when they appear.
    func startBluetooth(pipeline: Pipeline) -> BlueZDeviceService {
        if options.forwardBusLog { BlueZDeviceService.forwardBusLog(to: logger) }
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
}
