import StrapWire

/// strapd's state in Prometheus' text exposition format (version 0.0.4). Names follow
/// Prometheus' conventions: the `strapd_` prefix, base units in the name (`_seconds`,
/// `_ratio`, `_dbm`), `_total` on counters only, one family per name with its HELP and TYPE.
public struct PrometheusMetrics {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// What one scrape read from strapd; nil parts are left out (strapd down, no grant).
    public struct Snapshot {
        public var status: JSONObject?
        public var devices: [JSONObject]?
        public var sessions: [JSONObject]?
        public var heartRates: [String: LiveRelay.HeartRate]
        public var liveStreamOpen: Bool
        public var eventClients: Int

        public init(status: JSONObject?, devices: [JSONObject]?, sessions: [JSONObject]?,
                    heartRates: [String: LiveRelay.HeartRate], liveStreamOpen: Bool, eventClients: Int) {
            self.status = status
            self.devices = devices
            self.sessions = sessions
            self.heartRates = heartRates
            self.liveStreamOpen = liveStreamOpen
            self.eventClients = eventClients
        }
    }

    private var out = ""

    public static func render(_ s: Snapshot) -> String {
        var m = PrometheusMetrics()
        m.family("strapd_up", .gauge, "1 when strapd answered this scrape's status request, else 0")
        m.sample("strapd_up", [], s.status == nil ? 0 : 1)
        if let st = s.status { m.status(st) }
        if let devices = s.devices { m.devices(devices, heartRates: s.heartRates) }
        if let sessions = s.sessions {
            // A session is open until it has ended (saved) or was discarded.
            let open = sessions.filter { o in
                guard case .string(let state)? = o["state"] else { return false }
                return state != "ended" && state != "discarded"
            }
            m.family("strapd_workout_sessions_open", .gauge, "workout sessions not ended or discarded")
            m.sample("strapd_workout_sessions_open", [], Double(open.count))
        }
        m.family("strapd_web_live_stream_open", .gauge, "1 while strapd-web holds strapd's live stream")
        m.sample("strapd_web_live_stream_open", [], s.liveStreamOpen ? 1 : 0)
        m.family("strapd_web_event_clients", .gauge, "Server-Sent Events clients of /events")
        m.sample("strapd_web_event_clients", [], Double(s.eventClients))
        return m.out
    }

    enum Kind: String { case gauge, counter }

    private mutating func status(_ st: JSONObject) {
        if case .string(let version)? = st["version"], case .string(let mode)? = st["mode"] {
            family("strapd_info", .gauge, "strapd's version and mode, as labels")
            sample("strapd_info", [("version", version), ("mode", mode)], 1)
        }
        if case .string(let started)? = st["startedAt"], let ms = try? RFC3339Timestamp.parse(started) {
            family("strapd_start_time_seconds", .gauge, "when strapd started, in seconds since the Unix epoch")
            sample("strapd_start_time_seconds", [], Double(ms) / 1000)
        }
        gauge(st, "connectedSensors", "strapd_sensors_connected", "sensors with a link now")
        gauge(st, "knownSensors", "strapd_sensors_known", "sensors strapd remembers")
        gauge(st, "sampleRate", "strapd_sample_rate_per_second", "samples per second over strapd's last status interval")
        gauge(st, "clients", "strapd_clients", "clients connected to strapd's socket")
        gauge(st, "liveSubscribers", "strapd_live_subscribers", "live.subscribe streams open on strapd's socket")
        gauge(st, "followers", "strapd_followers", "samples.anchored and statistics.collection streams following the store")
        if case .object(let p)? = st["pipeline"] {
            counter(p, "events", "strapd_pipeline_events_total", "sensor notifications the pipeline took in")
            counter(p, "samples", "strapd_pipeline_samples_total", "samples the pipeline decoded")
            counter(p, "rejected", "strapd_pipeline_rejected_total", "notifications refused as malformed")
            counter(p, "dropped", "strapd_pipeline_dropped_total", "notifications dropped at the pipeline's door under overload")
            if case .object(let byType)? = p["samplesByType"] {
                family("strapd_samples_total", .counter, "samples the pipeline decoded, by quantity type")
                for (type, value) in byType.entries {
                    if let n = Self.number(value) { sample("strapd_samples_total", [("type", type)], n) }
                }
            }
        }
        if case .object(let store)? = st["store"] {
            gauge(store, "oldestAnchor", "strapd_store_oldest_anchor", "the oldest anchor retention kept")
            gauge(store, "latestAnchor", "strapd_store_latest_anchor", "the latest anchor written")
            gauge(store, "segments", "strapd_store_segments", "store segment files")
            gauge(store, "bytes", "strapd_store_bytes", "bytes of records in the store's segments")
            let damaged = if case .array(let d)? = store["damage"] { d.count } else { 0 }
            family("strapd_store_damaged_segments", .gauge, "segments skipped as damaged")
            sample("strapd_store_damaged_segments", [], Double(damaged))
        }
        let degraded = if case .string? = st["degraded"] { 1.0 } else { 0.0 }
        family("strapd_degraded", .gauge, "1 while strapd reports itself degraded (see its status)")
        sample("strapd_degraded", [], degraded)
        if case .object(let mqtt)? = st["mqtt"] {
            if case .string(let state)? = mqtt["state"] {
                family("strapd_mqtt_state", .gauge, "the MQTT publisher's state: 1 for the current one")
                for s in ["connecting", "connected", "waiting", "stopped"] {
                    sample("strapd_mqtt_state", [("state", s)], s == state ? 1 : 0)
                }
            }
            gauge(mqtt, "lagItems", "strapd_mqtt_lag_items", "store items the broker has not acknowledged")
            gauge(mqtt, "lagSeconds", "strapd_mqtt_lag_seconds", "how long the publisher's cursor has been behind the store")
            counter(mqtt, "published", "strapd_mqtt_published_total", "messages published from the store")
            counter(mqtt, "acknowledged", "strapd_mqtt_acknowledged_total", "messages the broker acknowledged")
            counter(mqtt, "connects", "strapd_mqtt_connects_total", "connections the broker accepted")
        }
    }

    private mutating func devices(_ devices: [JSONObject], heartRates: [String: LiveRelay.HeartRate]) {
        var connected: [(labels: [(String, String)], value: Double)] = []
        var battery = connected, rssi = connected, heart = connected, notifications = connected
        for d in devices {
            guard case .string(let address)? = d["address"] else { continue }
            var name = ""
            if case .string(let n)? = d["name"] { name = n }
            let labels = [("address", address), ("name", name)]
            let isConnected = d["connected"] == .bool(true)
            connected.append((labels, isConnected ? 1 : 0))
            if let b = Self.number(d["battery"]) { battery.append((labels, b / 100)) }
            if let r = Self.number(d["rssi"]) { rssi.append((labels, r)) }
            if let n = Self.number(d["notifications"]) { notifications.append((labels, n)) }
            // A heart rate is current only while its sensor is connected.
            if isConnected, let hr = heartRates[address] { heart.append((labels, hr.beatsPerMinute)) }
        }
        family("strapd_device_connected", .gauge, "1 while the device has a link")
        for c in connected { sample("strapd_device_connected", c.labels, c.value) }
        family("strapd_device_battery_ratio", .gauge, "the device's battery level, 0 to 1")
        for b in battery { sample("strapd_device_battery_ratio", b.labels, b.value) }
        family("strapd_device_rssi_dbm", .gauge, "the link's received signal strength in dBm")
        for r in rssi { sample("strapd_device_rssi_dbm", r.labels, r.value) }
        // strapd counts per device, not per sample type: the per-sensor figure status lacks.
        family("strapd_device_notifications_total", .counter, "measurement notifications received from the device since strapd started")
        for n in notifications { sample("strapd_device_notifications_total", n.labels, n.value) }
        family("strapd_device_heart_rate_beats_per_minute", .gauge, "the device's latest live heart rate")
        for h in heart { sample("strapd_device_heart_rate_beats_per_minute", h.labels, h.value) }
    }

    private static func number(_ v: JSONValue?) -> Double? {
        switch v {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    private mutating func gauge(_ o: JSONObject, _ key: String, _ name: String, _ help: String) {
        guard let v = Self.number(o[key]) else { return }
        family(name, .gauge, help)
        sample(name, [], v)
    }

    private mutating func counter(_ o: JSONObject, _ key: String, _ name: String, _ help: String) {
        guard let v = Self.number(o[key]) else { return }
        family(name, .counter, help)
        sample(name, [], v)
    }

    private mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
    }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        out += name
        if !labels.isEmpty {
            out += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        out += " " + Self.format(value) + "\n"
    }

    /// A label value's escapes: backslash, double quote and line feed (a device name is
    /// whatever the sensor advertises).
    static func escape(_ s: String) -> String {
        var r = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\": r += "\\\\"
            case "\"": r += "\\\""
            case "\n": r += "\\n"
            default: r.unicodeScalars.append(c)
            }
        }
        return r
    }

    static func format(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }
}
