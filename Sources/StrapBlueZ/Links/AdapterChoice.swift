import StrapDBus

/// How strapd.conf names an adapter (`[bluetooth] adapter`, `[device.ADDR] adapter`): `hciN`,
/// as `bluetoothctl list` and the kernel call it, or its Bluetooth address. The name can
/// change when a dongle is plugged in again (another hciN); the address cannot.
public enum AdapterName {
    /// `hci1` for `/org/bluez/hci1`.
    public static func of(_ path: ObjectPath) -> String { String(path.lastElement) }

    public static func matches(_ spec: String, name: String, address: String?) -> Bool {
        name == spec || address?.uppercased() == spec.uppercased()
    }

    /// The N of hciN, for ties; adapters named otherwise come after every hciN.
    static func index(_ name: String) -> Int {
        name.hasPrefix("hci") ? Int(name.dropFirst(3)) ?? Int.max : Int.max
    }
}

extension BlueZAdapter {
    public var name: String { AdapterName.of(path) }

    public func matches(_ spec: String) -> Bool { AdapterName.matches(spec, name: name, address: address) }
}

/// Which of a sensor's device objects a link uses. BlueZ keeps one per adapter that has seen
/// the sensor; with a built-in adapter and a dongle a sensor in range of both has two.
/// Controllers allow few connections each, so a sensor that is free to choose goes where
/// strapd has the fewest links. Pure: `SensorLink` passes the mirror's view and the load the
/// manager counts.
struct AdapterChoice {
    struct Candidate: Equatable {
        let device: BlueZDevice
        let adapter: BlueZAdapter
        /// strapd's other links connected or connecting through this adapter.
        let load: Int
    }

    /// `committed`: the link is connecting or connected through `current`; leaving it would
    /// drop a connection (or an attempt under way) for a choice that is no better.
    static func choose(_ candidates: [Candidate], current: ObjectPath?, committed: Bool) -> Candidate? {
        // A live connection wins: the link's own, or one BlueZ made by itself (GattProfile1
        // auto-connect), which the link adopts rather than opening a second.
        if let own = candidates.first(where: { $0.device.path == current && $0.device.connected }) { return own }
        if let adopted = candidates.first(where: \.device.connected) { return adopted }
        if committed, let kept = candidates.first(where: { $0.device.path == current }) { return kept }
        return candidates.min { a, b in
            (a.load, AdapterName.index(a.adapter.name), a.adapter.path) < (b.load, AdapterName.index(b.adapter.name), b.adapter.path)
        }
    }
}
