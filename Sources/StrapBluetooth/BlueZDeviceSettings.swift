import StrapBlueZ
import StrapConfig
import StrapIngest

extension BlueZDeviceService {
    public struct Settings: Sendable {
        public var stateDirectory: String
        /// nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured by sd-bus); tests pass
        /// their private bus here rather than changing the process environment.
        public var busAddress: String?
        public var bluetooth: Configuration.Bluetooth
        public var devices: [String: Configuration.DeviceSettings]
        public var link = SensorLinkOptions()
        /// How long `devices.connect` waits for the sensor to stream before answering.
        public var connectWait = 30.0
        public var rssiInterval = 10.0
        public var hci: any HCIAccess = LibBluetoothHCI()

        public init(stateDirectory: String, busAddress: String? = nil, bluetooth: Configuration.Bluetooth = Configuration().bluetooth,
                    devices: [String: Configuration.DeviceSettings] = [:]) {
            self.stateDirectory = stateDirectory
            self.busAddress = busAddress
            self.bluetooth = bluetooth
            self.devices = devices
        }

        /// Per-device link options: `[device.ADDR] notify_mode` over `[bluetooth] notify_mode`,
        /// and `[device.ADDR] adapter`.
        func linkOptions(_ address: SensorAddress) -> SensorLinkOptions {
            var options = link
            let mode = devices[address]?.notifyMode ?? bluetooth.notifyMode
            options.notifyMode = mode == .acquire ? .acquireNotify : .startNotify
            options.adapter = devices[address]?.adapter
            return options
        }
    }
}
