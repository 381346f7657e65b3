import StrapGATT
import StrapIngest
import StrapModel
import Synchronization

/// What the daemon knows about each device, merged from the device service (BlueZ's view)
/// and the pipeline (battery, contact, identity strings, link transitions, last seen).
///
/// A lock, not a queue: `observe` runs for every burst the pipeline hands on and does a few
/// dictionary updates; a hop to its own queue cost a thread wake-up per notification.
public final class DeviceDirectory: Sendable {
    private let devices = Mutex<[SensorAddress: DeviceInfo]>([:])

    public init() {}

    /// Feeds pipeline output; subscribe it to the live hub.
    public func observe(_ events: [LiveEvent]) {
        devices.withLock { devices in
            for event in events {
                switch event {
                case .samples(let samples):
                    Self.observe(samples, in: &devices)
                case let .change(address, change):
                    Self.update(address, in: &devices) { info in
                        switch change {
                        case let .identity(d):
                            info.manufacturer = d.manufacturer
                            info.model = d.model
                            info.serial = d.serial
                            info.firmware = d.firmware
                        case let .contact(c): info.contact = c.name
                        case let .battery(b): info.battery = b
                        case let .bodySensorLocation(l): info.bodySensorLocation = l
                        case let .sensorLocation(l): info.sensorLocation = l
                        case .energySaturated: break
                        }
                    }
                case .linkQuality:
                    // The device service's snapshot has the current reading.
                    break
                case let .link(address, up, reason, time):
                    Self.update(address, in: &devices) { info in
                        info.connected = up
                        // Max: never back, whatever the order of a turn's events.
                        info.lastSeen = max(info.lastSeen ?? time, time)
                        if !up { info.lastDisconnectReason = reason }
                    }
                case let .quietNotification(address, characteristic, time):
                    Self.noteQuiet(address, characteristic, at: time, in: &devices)
                }
            }
        }
    }

    /// A notification that yielded no sample (`LiveEvent.quietNotification`): the device is
    /// alive; a measurement notification counts as one received.
    private static func noteQuiet(_ address: SensorAddress, _ characteristic: GATTCharacteristic, at time: Millis,
                                  in devices: inout [SensorAddress: DeviceInfo]) {
        let measurement = characteristic == .heartRateMeasurement || characteristic == .cscMeasurement
            || characteristic == .rscMeasurement || characteristic == .cyclingPowerMeasurement
            || characteristic == .indoorBikeData
        update(address, in: &devices) { info in
            info.lastSeen = max(info.lastSeen ?? time, time)
            if measurement { info.notifications += 1 }
        }
    }

    /// One dictionary update per run of one device's samples, not per sample: a burst of a
    /// few thousand samples is a few updates.
    private static func observe(_ samples: ArraySlice<Sample>, in devices: inout [SensorAddress: DeviceInfo]) {
        var i = samples.startIndex
        while i < samples.endIndex {
            let device = samples[i].device
            var lastSeen = samples[i].end
            var notifications = 0
            var j = i
            while j < samples.endIndex, samples[j].device === device {
                // The two fields read in place: a copy of the sample (its device and extras
                // retained and released) was over a quarter of the directory's cost per notification.
                lastSeen = max(lastSeen, samples[j].end)
                let type = samples[j].type
                if type == .heartRate || type == .cyclingSpeed || type == .cyclingCadence || type == .runningSpeed
                    || type == .cyclingPower {
                    notifications += 1
                }
                j += 1
            }
            update(device.address, in: &devices) { info in
                info.lastSeen = max(info.lastSeen ?? lastSeen, lastSeen)
                info.notifications += notifications
                info.name = device.name
            }
            i = j
        }
    }

    private static func update(_ address: SensorAddress, in devices: inout [SensorAddress: DeviceInfo],
                               _ body: (inout DeviceInfo) -> Void) {
        body(&devices[address, default: DeviceInfo(address: address, name: address)])
    }

    /// The merged view: the service's devices, completed with what the pipeline observed, and
    /// devices only the pipeline saw (forgotten since): the MQTT publisher clears their state.
    public func list(service: DeviceService) -> [DeviceInfo] { merged(service.snapshot()) }

    /// What clients are shown (`devices.list`, `devices.info`): the devices the service lists
    /// (BlueZ: known, linked or seen advertising; the simulator: not forgotten), completed with
    /// what the pipeline observed. A forgotten device is gone, whatever the pipeline saw of it.
    public func listed(by service: DeviceService) -> [DeviceInfo] {
        let fromService = service.snapshot()
        let addresses = Set(fromService.map(\.address))
        return merged(fromService).filter { addresses.contains($0.address) }
    }

    private func merged(_ fromService: [DeviceInfo]) -> [DeviceInfo] {
        var merged = devices.withLock { $0 }
        for s in fromService {
            var info = merged[s.address] ?? s
            info.name = s.name
            info.known = s.known
            info.paired = s.paired
            info.connected = s.connected
            info.services = s.services
            info.rssi = s.rssi
            info.rssiUnavailableReason = s.rssiUnavailableReason
            info.adapter = s.adapter
            info.adapterAddress = s.adapterAddress
            if info.battery == nil { info.battery = s.battery }
            if s.lastDisconnectReason != nil { info.lastDisconnectReason = s.lastDisconnectReason }
            merged[s.address] = info
        }
        return merged.values.sorted { $0.address < $1.address }
    }

    public var connectedCount: Int { devices.withLock { $0.values.filter(\.connected).count } }
}
