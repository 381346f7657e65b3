import Glibc

/// One notification as received, before any decoding (the raw notification of
/// docs/architecture.md#the-pipeline).
public struct RawNotification: Sendable, Equatable {
    /// Bluetooth address of the sensor, upper case with colons.
    public let device: String
    /// 128-bit characteristic UUID, lower case (e.g. 00002a37-0000-1000-8000-00805f9b34fb).
    public let characteristic: String
    public let value: [UInt8]
    /// CLOCK_MONOTONIC nanoseconds at receive time.
    public let monotonicNanoseconds: UInt64
    /// CLOCK_REALTIME nanoseconds since the Unix epoch at receive time.
    public let wallNanoseconds: Int64

    public init(device: String, characteristic: String, value: [UInt8], monotonicNanoseconds: UInt64, wallNanoseconds: Int64) {
        self.device = device
        self.characteristic = characteristic
        self.value = value
        self.monotonicNanoseconds = monotonicNanoseconds
        self.wallNanoseconds = wallNanoseconds
    }
}

/// What the daemon receives from sensor links. Called on the bus queue: implementations
/// must hand work to their own queue rather than block.
public protocol SensorSink: AnyObject, Sendable {
    /// Also while the link is still `subscribing`: handlers are attached before notifications
    /// are enabled, and a characteristic streams as soon as its own subscription is through
    /// (with StartNotify even before bluetoothd's reply), so a notification of a new connection
    /// can come before `linkChanged(.streaming)`.
    func received(_ notification: RawNotification)
    /// A value read on connect (battery 0x2A19, body sensor location 0x2A38, DIS strings).
    func read(device: String, characteristic: String, value: [UInt8])
    /// Battery1.Percentage, as BlueZ's battery plugin reports it.
    func battery(device: String, percentage: UInt8)
    func linkChanged(device: String, phase: LinkPhase)
}

extension SensorSink {
    public func read(device: String, characteristic: String, value: [UInt8]) {}
    public func battery(device: String, percentage: UInt8) {}
    public func linkChanged(device: String, phase: LinkPhase) {}
}

/// CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds, as `RawNotification` carries them and
/// the link machine's timers count.
enum SystemClock {
    static func monotonicNanoseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    static func wallNanoseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}
