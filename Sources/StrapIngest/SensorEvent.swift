import Glibc
import StrapGATT
import StrapModel

/// What every source (BlueZ links, the simulator, a replayed capture) hands the pipeline:
/// the "raw notification" of docs/architecture.md#the-pipeline plus the link changes around it.
public enum SensorEvent: Sendable, Equatable {
    /// A notification, exactly as received (no decoding yet).
    case notification(SensorAddress, GATTCharacteristic, [UInt8], ReceiveTime)
    /// A value read on connect (battery, body sensor location, DIS strings, features).
    case read(SensorAddress, GATTCharacteristic, [UInt8], ReceiveTime)
    /// Notifications are flowing (again): counters start from a baseline. A source submits it
    /// before the connection's first notification, or that one is derived against the state
    /// from before the outage.
    case linkUp(SensorAddress, name: String, ReceiveTime)
    case linkDown(SensorAddress, reason: String, ReceiveTime)

    public var address: SensorAddress {
        switch self {
        case let .notification(a, _, _, _), let .read(a, _, _, _), let .linkUp(a, _, _), let .linkDown(a, _, _): a
        }
    }

    public var time: ReceiveTime {
        switch self {
        case let .notification(_, _, _, t), let .read(_, _, _, t), let .linkUp(_, _, t), let .linkDown(_, _, t): t
        }
    }
}

/// A Bluetooth address, upper case with colons: the device's stable identity here.
public typealias SensorAddress = String

/// When something was received: wall clock for sample times, monotonic for rates and gaps.
public struct ReceiveTime: Sendable, Equatable, Hashable {
    public var wall: Millis
    /// Seconds on CLOCK_MONOTONIC (or any clock that never steps).
    public var monotonic: Double

    public init(wall: Millis, monotonic: Double) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// Both clocks read now: what sources stamp events with. Decoding and derivation never
    /// call it; they take times as values.
    public static func now() -> ReceiveTime {
        var wall = timespec(), mono = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return ReceiveTime(wall: Millis(wall.tv_sec) * 1000 + Millis(wall.tv_nsec / 1_000_000),
                           monotonic: Double(mono.tv_sec) + Double(mono.tv_nsec) / 1e9)
    }
}
