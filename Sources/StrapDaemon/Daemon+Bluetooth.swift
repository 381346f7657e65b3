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
        // The bus queue runs on the pipeline's ingest queue. A notification then goes from
        // sd-bus through decoding on one thread: with queues of their own, each one woke a
        // second thread (a futex wake and a context switch per notification, the largest
        // part of strapd's CPU at sensor rates; docs/benchmarks.md). Nothing on the ingest
        // queue waits for the bus queue (that would deadlock): the pipeline hands on by
        // `async`, and its live subscribers take locks, hop, or (the socket fan-out) wait for
        // the server queue, which never waits for this one (docs/architecture.md).
        let service = BlueZDeviceService(settings: settings, logger: logger, target: pipeline.queue) { pipeline.submit($0) }
        let live = pipeline.live
        service.publishLinkQuality = { address, reading in
            live.publish([.linkQuality(address, rssi: reading.value, reason: reading.reason)])
        }
        return service
    }
}
