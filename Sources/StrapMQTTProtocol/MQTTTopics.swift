import StrapModel

/// strapd's topic tree under its prefix (docs/mqtt.md#topics). One box's prefix is
/// `strapd/<hostname>` by default, so several boxes share a broker (or a bridge) without a
/// collision; nothing below the prefix depends on the box.
public struct MQTTTopics: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String) { self.prefix = prefix }

    /// `strapd/<hostname>`, the hostname reduced to what is safe in a topic level and in Home
    /// Assistant's ids.
    public static func defaultPrefix(hostname: String) -> String { "strapd/" + levelSafe(hostname) }

    /// A device's topic level: its address in lower-case hex without separators
    /// (`C0:FF:EE:00:00:01` → `c0ffee000001`), valid as a Home Assistant object id too.
    public static func node(_ address: String) -> String { levelSafe(address.lowercased(), keepDashes: false) }

    /// Letters, digits, `_` and `-` (Home Assistant's id alphabet); anything else becomes `_`,
    /// except that separators are dropped from addresses.
    static func levelSafe(_ text: String, keepDashes: Bool = true) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_": out.unicodeScalars.append(scalar)
            case "-" where keepDashes: out.unicodeScalars.append(scalar)
            case ":", "-": continue
            default: out.append("_")
            }
        }
        return out.isEmpty ? "_" : out
    }

    /// Retained `online` / `offline`: the birth message and the Last Will.
    public var status: String { prefix + "/status" }
    /// One message per stored sample.
    public func sample(address: String, type: QuantityType) -> String {
        "\(prefix)/samples/\(Self.node(address))/\(type.rawValue)"
    }
    /// Tombstones: the uuids the store deleted.
    public var deleted: String { prefix + "/deleted" }
    /// Retained device state (connected, battery, contact, RSSI, running totals).
    public func deviceState(address: String) -> String { "\(prefix)/devices/\(Self.node(address))/state" }
    /// Retained: the workout the device is in, or `idle`.
    public func deviceWorkout(address: String) -> String { "\(prefix)/devices/\(Self.node(address))/workout" }
    /// Retained session state and live statistics.
    public func workout(id: String) -> String { "\(prefix)/workouts/\(id.lowercased())/state" }
    /// Saved workouts as the store holds them (delivered with the samples, at least once).
    public var savedWorkouts: String { prefix + "/workouts/saved" }
}
