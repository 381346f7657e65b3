import Glibc
import StrapGATT

/// What a simulated device does at a moment: the same things a BlueZ link reports.
public enum SimulatedEvent: Sendable, Equatable {
    /// A notification carrying real GATT bytes, as the sensor would send them.
    case notification(characteristic: GATTCharacteristic, value: [UInt8])
    /// A value the daemon reads on (re)connect: battery, body sensor location, DIS strings.
    case read(characteristic: GATTCharacteristic, value: [UInt8])
    /// The link dropped (simulated dropout); nothing is sent until `.connected`.
    case disconnected(reason: String)
    case connected
}

/// A device the simulator drives: it is asked for everything that happened up to a time.
public protocol SimulatedDevice: Sendable {
    var identity: SimulatedIdentity { get }
    /// Events with their times (seconds since the simulation started), up to `time`, in order.
    mutating func advance(to time: Double) -> [(time: Double, event: SimulatedEvent)]
    /// The earliest time `advance(to:)` would return something new: a real-time driver sleeps
    /// until then instead of polling.
    var nextEventTime: Double { get }
}

/// The identity a simulated device reports, like a real one's address and DIS strings.
public struct SimulatedIdentity: Sendable, Equatable {
    public var address: String
    public var name: String
    public var manufacturer: String
    public var model: String
    public var serial: String
    public var firmware: String
    public var services: [GATTService]

    public init(address: String, name: String, manufacturer: String = "", model: String = "", serial: String = "",
                firmware: String = "", services: [GATTService] = []) {
        self.address = address
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.firmware = firmware
        self.services = services
    }

    /// Values read on every (re)connect, as BlueZ links read them.
    public var connectReads: [SimulatedEvent] {
        [
            .read(characteristic: .manufacturerName, value: Array(manufacturer.utf8)),
            .read(characteristic: .modelNumber, value: Array(model.utf8)),
            .read(characteristic: .serialNumber, value: Array(serial.utf8)),
            .read(characteristic: .firmwareRevision, value: Array(firmware.utf8)),
        ]
    }
}

/// Occasional dropouts: a link that goes away for a while, then comes back
/// (docs/bluetooth-field-notes.md#dropouts-and-reconnection).
public struct DropoutSchedule: Sendable, Equatable {
    /// Mean seconds between dropouts (exponential); 0 disables them.
    public var meanInterval: Double
    public var minimumDuration: Double
    public var maximumDuration: Double

    public init(meanInterval: Double = 600, minimumDuration: Double = 3, maximumDuration: Double = 12) {
        self.meanInterval = meanInterval
        self.minimumDuration = minimumDuration
        self.maximumDuration = maximumDuration
    }

    public static let none = DropoutSchedule(meanInterval: 0)

    func nextDropout(after time: Double, using rng: inout SimulationRandom) -> (start: Double, end: Double)? {
        guard meanInterval > 0 else { return nil }
        let start = time + rng.exponential(mean: meanInterval)
        return (start, start + rng.uniform(minimumDuration, maximumDuration))
    }
}

/// Seeded SplitMix64 so a simulated session can be reproduced exactly (tests, bug reports).
public struct SimulationRandom: RandomNumberGenerator, Sendable, Equatable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    public mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }
    public mutating func exponential(mean: Double) -> Double { -mean * log(1 - unit()) }
    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}


/// A locally administered-looking address: 5E:1A:00:00:<kind>:<index>.
func simulatedAddress(kind: UInt8, index: Int) -> String {
    let octets: [UInt8] = [0x5E, 0x1A, 0x00, 0x00, kind, UInt8(truncatingIfNeeded: index)]
    return octets.map { octet in
        let digits = String(octet, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }.joined(separator: ":")
}
