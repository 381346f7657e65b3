import StrapModel
import StrapWire

/// Home Assistant's MQTT discovery (docs/mqtt.md#home-assistant): one HA device per sensor,
/// one retained config message per entity under `<ha prefix>/<component>/<node id>/<object
/// id>/config`. An entity reads either a sample topic (heart rate, speed, cadence) or the
/// device's retained state topic (battery, contact, connection, RSSI, running distance and
/// energy) or its workout topic. An empty retained config removes the entity.
public struct HomeAssistantDiscovery: Sendable {
    public enum Entity: String, Sendable, CaseIterable {
        case heartRate = "heart_rate"
        case speed, cadence, power, distance, energy, battery, contact, connected, rssi, workout

        var component: String { self == .contact || self == .connected ? "binary_sensor" : "sensor" }
    }

    /// The workout states an entity may show (`idle` when the device is in no session).
    public static let workoutStates = ["idle", "notStarted", "prepared", "running", "paused", "stopped", "ended"]

    public struct Identity: Sendable, Equatable {
        public var address: String
        public var name: String
        public var manufacturer: String?
        public var model: String?
        public var firmware: String?
        public var serial: String?

        public init(address: String, name: String, manufacturer: String? = nil, model: String? = nil,
                    firmware: String? = nil, serial: String? = nil) {
            self.address = address; self.name = name; self.manufacturer = manufacturer
            self.model = model; self.firmware = firmware; self.serial = serial
        }
    }

    public let topics: MQTTTopics
    public let prefix: String
    /// The box's topic prefix as an id (`strapd/gym1` → `strapd_gym1`): keeps two boxes'
    /// entities apart when both see one strap, as their prefixes must differ anyway.
    public let nodeID: String
    public let softwareVersion: String

    public init(topics: MQTTTopics, prefix: String, softwareVersion: String) {
        self.topics = topics
        self.prefix = prefix
        nodeID = MQTTTopics.levelSafe(topics.prefix)
        self.softwareVersion = softwareVersion
    }

    /// The entity a sample type feeds, if any.
    public static func entity(for type: QuantityType) -> Entity? {
        switch type {
        case .heartRate: .heartRate
        case .cyclingSpeed, .runningSpeed: .speed
        case .cyclingCadence, .runningCadence: .cadence
        case .cyclingDistance, .runningDistance: .distance
        case .energyExpended: .energy
        case .batteryLevel: .battery
        case .sensorContact: .contact
        case .cyclingPower: .power
        case .heartbeatSeries, .activeEnergy, .strideLength, .cyclingPowerBalance: nil
        }
    }

    public func configTopic(_ entity: Entity, address: String) -> String {
        "\(prefix)/\(entity.component)/\(nodeID)/\(MQTTTopics.node(address))_\(entity.rawValue)/config"
    }

    /// The retained config payload. `source` is the sample type a sample-fed entity reads
    /// (cycling or running speed and cadence).
    public func config(_ entity: Entity, device: Identity, source: QuantityType? = nil) -> [UInt8] {
        let node = MQTTTopics.node(device.address)
        let stateTopic = topics.deviceState(address: device.address)
        var o: JSONObject = [
            "name": label(entity),
            "unique_id": .string("\(nodeID)_\(node)_\(entity.rawValue)"),
        ]
        func set(_ key: String, _ value: String) { o[key] = .string(value) }
        switch entity {
        case .heartRate:
            set("state_topic", topics.sample(address: device.address, type: .heartRate))
            set("value_template", "{{ value_json.value }}")
            set("unit_of_measurement", "bpm"); set("state_class", "measurement"); set("icon", "mdi:heart-pulse")
        case .speed:
            set("state_topic", topics.sample(address: device.address, type: source ?? .cyclingSpeed))
            set("value_template", "{{ value_json.value }}")
            set("device_class", "speed"); set("unit_of_measurement", "m/s"); set("state_class", "measurement")
        case .cadence:
            let running = source == .runningCadence
            set("state_topic", topics.sample(address: device.address, type: source ?? .cyclingCadence))
            set("value_template", "{{ value_json.value }}")
            set("unit_of_measurement", running ? "spm" : "rpm"); set("state_class", "measurement"); set("icon", running ? "mdi:run" : "mdi:bike")
        case .power:
            set("state_topic", topics.sample(address: device.address, type: .cyclingPower))
            set("value_template", "{{ value_json.value }}")
            set("device_class", "power"); set("unit_of_measurement", "W"); set("state_class", "measurement")
        case .distance:
            set("state_topic", stateTopic); set("value_template", "{{ value_json.distance }}")
            set("device_class", "distance"); set("unit_of_measurement", "m"); set("state_class", "total_increasing")
        case .energy:
            set("state_topic", stateTopic); set("value_template", "{{ value_json.energy }}")
            set("device_class", "energy"); set("unit_of_measurement", "kcal"); set("state_class", "total_increasing")
        case .battery:
            set("state_topic", stateTopic); set("value_template", "{{ value_json.battery }}")
            set("device_class", "battery"); set("unit_of_measurement", "%"); set("state_class", "measurement")
            set("entity_category", "diagnostic")
        case .rssi:
            set("state_topic", stateTopic); set("value_template", "{{ value_json.rssi }}")
            set("device_class", "signal_strength"); set("unit_of_measurement", "dBm"); set("state_class", "measurement")
            set("entity_category", "diagnostic")
        case .contact:
            set("state_topic", stateTopic)
            set("value_template", "{{ 'ON' if value_json.contact == 'detected' else 'OFF' }}")
            set("payload_on", "ON"); set("payload_off", "OFF"); set("icon", "mdi:heart-pulse")
        case .connected:
            set("state_topic", stateTopic)
            set("value_template", "{{ 'ON' if value_json.connected else 'OFF' }}")
            set("payload_on", "ON"); set("payload_off", "OFF"); set("device_class", "connectivity")
            set("entity_category", "diagnostic")
        case .workout:
            set("state_topic", topics.deviceWorkout(address: device.address))
            set("value_template", "{{ value_json.state }}")
            set("device_class", "enum")
            o["options"] = .array(Self.workoutStates.map(JSONValue.string))
            set("icon", "mdi:timer-outline")
        }
        // Unavailable when strapd is gone; a sample-fed entity also when its sensor is not
        // connected (its last value would otherwise look current).
        var availability: [JSONValue] = [.object(["topic": .string(topics.status), "payload_available": .string("online"),
                                                  "payload_not_available": .string("offline")])]
        if entity == .heartRate || entity == .speed || entity == .cadence || entity == .power || entity == .contact || entity == .rssi {
            availability.append(.object(["topic": .string(stateTopic),
                                         "value_template": .string("{{ 'online' if value_json.connected else 'offline' }}")]))
        }
        o["availability"] = .array(availability)
        set("availability_mode", "all")
        var dev: JSONObject = ["identifiers": .array([.string("\(nodeID)_\(node)")]), "name": .string(device.name)]
        if let m = device.manufacturer { dev["manufacturer"] = .string(m) }
        if let m = device.model { dev["model"] = .string(m) }
        if let f = device.firmware { dev["sw_version"] = .string(f) }
        if let s = device.serial { dev["serial_number"] = .string(s) }
        o["device"] = .object(dev)
        o["origin"] = .object(["name": .string("strapd"), "sw_version": .string(softwareVersion)])
        var out: [UInt8] = []
        JSONWriter.write(.object(o), into: &out)
        return out
    }

    private func label(_ e: Entity) -> JSONValue {
        switch e {
        case .heartRate: .string("Heart rate")
        case .speed: .string("Speed")
        case .cadence: .string("Cadence")
        case .power: .string("Power")
        case .distance: .string("Distance")
        case .energy: .string("Energy")
        case .battery: .string("Battery")
        case .contact: .string("Skin contact")
        case .connected: .string("Connected")
        case .rssi: .string("Signal strength")
        case .workout: .string("Workout")
        }
    }
}
