/// Every key strapd.conf(5) documents: how to parse it into `Configuration`, how to print
/// it back, and whether SIGHUP may change it in a running daemon. The man page, the
/// parser and the reload logic all follow this table.
public struct ConfigKey: Sendable {
    public let section: String
    public let name: String
    /// SIGHUP applies a change of this key; other keys need a restart.
    public let reloadable: Bool
    let apply: @Sendable (inout Configuration, String) throws(ConfigValue.Invalid) -> Void
    let render: @Sendable (Configuration) -> String

    public var qualifiedName: String { "\(section).\(name)" }
}

public enum ConfigSchema {
    public static let keys: [ConfigKey] = [
        ConfigKey(section: "daemon", name: "state_dir", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in c.daemon.stateDirectory = try ConfigValue.absolutePath(v) },
                  render: { $0.daemon.stateDirectory }),
        ConfigKey(section: "daemon", name: "socket", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in c.daemon.socket = try ConfigValue.absolutePath(v) },
                  render: { $0.daemon.socket }),
        ConfigKey(section: "daemon", name: "log_level", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in c.daemon.logLevel = try ConfigValue.choice(v, ConfiguredLogLevel.self) },
                  render: { $0.daemon.logLevel.rawValue }),
        ConfigKey(section: "daemon", name: "socket_group", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      if v.isEmpty { c.daemon.socketGroup = nil; return }
                      guard case .group(let name) = try ConfigValue.principal("group:" + v) else { return }
                      c.daemon.socketGroup = name
                  },
                  render: { $0.daemon.socketGroup ?? "" }),
        ConfigKey(section: "daemon", name: "client_buffer", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      let n = try ConfigValue.size(v)
                      guard n >= 64 * 1024 else { throw ConfigValue.Invalid("must be at least 64K") }
                      guard n <= 1 << 30 else { throw ConfigValue.Invalid("must be at most 1G") }
                      c.daemon.clientBuffer = n
                  },
                  render: { String($0.daemon.clientBuffer) }),
        ConfigKey(section: "daemon", name: "max_clients", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in c.daemon.maxClients = try ConfigValue.integer(v, in: 1...65536) },
                  render: { String($0.daemon.maxClients) }),
        ConfigKey(section: "daemon", name: "max_workout_sessions", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in c.daemon.maxWorkoutSessions = try ConfigValue.integer(v, in: 1...1024) },
                  render: { String($0.daemon.maxWorkoutSessions) }),

        ConfigKey(section: "store", name: "sync", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in c.store.sync = try ConfigValue.choice(v, SyncMode.self) },
                  render: { $0.store.sync.rawValue }),
        ConfigKey(section: "store", name: "sync_interval", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      let d = try ConfigValue.duration(v)
                      guard d >= .milliseconds(1), d <= .seconds(3600) else { throw ConfigValue.Invalid("must be between 1ms and 1h") }
                      c.store.syncInterval = d
                  },
                  render: { render($0.store.syncInterval) }),
        ConfigKey(section: "store", name: "retention", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      let d = try ConfigValue.duration(v)
                      if d == .zero { c.store.retention = .forever; return }
                      guard d >= .seconds(3600) else { throw ConfigValue.Invalid("must be 0 (forever) or at least 1h") }
                      c.store.retention = .duration(d)
                  },
                  render: { c in
                      if case .duration(let d) = c.store.retention { return render(d) }
                      return "0"
                  }),

        ConfigKey(section: "bluetooth", name: "adapter", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      c.bluetooth.adapter = v.isEmpty ? nil : try ConfigValue.adapter(v)
                  },
                  render: { $0.bluetooth.adapter ?? "" }),
        ConfigKey(section: "bluetooth", name: "auto_connect", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in c.bluetooth.autoConnect = try ConfigValue.bool(v) },
                  render: { $0.bluetooth.autoConnect ? "yes" : "no" }),
        ConfigKey(section: "bluetooth", name: "notify_mode", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in c.bluetooth.notifyMode = try ConfigValue.choice(v, NotifyMode.self) },
                  render: { $0.bluetooth.notifyMode.rawValue }),
        ConfigKey(section: "bluetooth", name: "scan_timeout", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      let d = try ConfigValue.duration(v)
                      guard d >= .seconds(1), d <= .seconds(3600) else { throw ConfigValue.Invalid("must be between 1s and 1h") }
                      c.bluetooth.scanTimeout = d
                  },
                  render: { render($0.bluetooth.scanTimeout) }),
        ConfigKey(section: "bluetooth", name: "pair_agent", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in c.bluetooth.pairAgent = try ConfigValue.bool(v) },
                  render: { $0.bluetooth.pairAgent ? "yes" : "no" }),

        ConfigKey(section: "access", name: "read", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in c.access.read = try ConfigValue.principals(v) },
                  render: { $0.access.read.map(\.description).joined(separator: ", ") }),
        ConfigKey(section: "access", name: "record", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in c.access.record = try ConfigValue.principals(v) },
                  render: { $0.access.record.map(\.description).joined(separator: ", ") }),
        ConfigKey(section: "access", name: "admin", reloadable: true,
                  apply: { c, v throws(ConfigValue.Invalid) in c.access.admin = try ConfigValue.principals(v) },
                  render: { $0.access.admin.map(\.description).joined(separator: ", ") }),

        ConfigKey(section: "simulate", name: "devices", reloadable: false,
                  apply: { c, v throws(ConfigValue.Invalid) in
                      var out: [SimulatedSensorKind] = []
                      for item in ConfigValue.list(v) { out.append(try ConfigValue.choice(item, SimulatedSensorKind.self)) }
                      guard !out.isEmpty, out.count <= 64 else { throw ConfigValue.Invalid("expected 1 to 64 devices") }
                      c.simulate.devices = out
                  },
                  render: { $0.simulate.devices.map(\.rawValue).joined(separator: ", ") }),
    ] + mqttKeys

    /// `read_types.<principal>` in `[access]`: dynamic key, reloadable.
    static func applyReadTypes(_ c: inout Configuration, principal: String, value: String) throws(ConfigValue.Invalid) {
        let p = try ConfigValue.principal(principal)
        c.access.readTypes[p] = try ConfigValue.sampleTypes(value)
    }

    /// Keys of a `[device.<address>]` section; all reloadable (they apply on the next
    /// connection or sample, except notify_mode and adapter, which apply when the sensor's
    /// link is next set up).
    public static let deviceKeys = ["name", "wheel_circumference", "notify_mode", "cadence_is_spm", "adapter"]

    static func applyDevice(_ d: inout Configuration.DeviceSettings, key: String, value: String) throws(ConfigValue.Invalid) -> Bool {
        switch key {
        case "name":
            guard !value.isEmpty, value.utf8.count <= 248 else { throw ConfigValue.Invalid("a name is 1 to 248 bytes") }
            d.name = value
        case "wheel_circumference": d.wheelCircumference = try ConfigValue.circumference(value)
        case "notify_mode": d.notifyMode = try ConfigValue.choice(value, NotifyMode.self)
        case "cadence_is_spm": d.cadenceIsSpm = try ConfigValue.bool(value)
        case "adapter": d.adapter = value.isEmpty ? nil : try ConfigValue.adapter(value)
        default: return false
        }
        return true
    }

    public static func key(_ qualifiedName: String) -> ConfigKey? {
        keys.first { $0.qualifiedName == qualifiedName }
    }

    static func render(_ d: Duration) -> String {
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        for (unit, size) in [("w", Int64(604_800_000)), ("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)] where ms % size == 0 {
            return "\(ms / size)\(unit)"
        }
        return "\(ms)ms"
    }
}

extension Configuration {
    /// The keys whose values differ between `self` and `other` (qualified names; devices
    /// and read_types as `device.<address>` and `access.read_types`).
    public func changedKeys(comparedTo other: Configuration) -> [String] {
        var out = ConfigSchema.keys.filter { $0.render(self) != $0.render(other) }.map(\.qualifiedName)
        if access.readTypes != other.access.readTypes { out.append("access.read_types") }
        for address in Set(devices.keys).union(other.devices.keys).sorted() where devices[address] != other.devices[address] {
            out.append("device.\(address)")
        }
        return out
    }

    /// Changed keys SIGHUP cannot apply; the daemon logs them as needing a restart.
    public func restartRequiredChanges(comparedTo other: Configuration) -> [String] {
        let reloadable = Set(ConfigSchema.keys.filter(\.reloadable).map(\.qualifiedName))
        return changedKeys(comparedTo: other).filter {
            !reloadable.contains($0) && $0 != "access.read_types" && !$0.hasPrefix("device.")
        }
    }

    /// The value of a schema key as the configuration file would spell it.
    public func value(of qualifiedName: String) -> String? {
        ConfigSchema.key(qualifiedName)?.render(self)
    }
}
