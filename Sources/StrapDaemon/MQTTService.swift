import Dispatch
import FoundationEssentials
import Glibc
import StrapConfig
import StrapIngest
import StrapModel
import StrapMQTT
import StrapMQTTProtocol
import StrapSystem
import StrapWire
import StrapWorkout
import Synchronization

/// `[mqtt]`: the publisher (samples, deletions and saved workouts from the store, at least
/// once) and the retained state it keeps on the broker (devices, workouts, Home Assistant
/// discovery), fed by `MQTTStateFeed`. Absent unless a broker is configured. Started after
/// the front end (it reads its device directory and live hub), stopped before it.
final class MQTTService: LifecycleService {
    let serviceName = "mqtt"
    private let configuration: Configuration
    private let frontEnd: FrontEndService
    private let logger: Logger
    private let environment: [String: String]
    private(set) var publisher: MQTTPublisher?
    private var feed: MQTTStateFeed?
    /// Resolved when the daemon is built, before any service starts; nil: nothing to publish.
    private let settings: MQTTSettings?

    init(configuration: Configuration, frontEnd: FrontEndService, logger: Logger, environment: [String: String]) throws(StartupError) {
        self.configuration = configuration
        self.frontEnd = frontEnd
        self.logger = logger
        self.environment = environment
        do throws(MQTTError) {
            settings = try MQTTSettings.resolve(configuration.mqtt, stateDirectory: configuration.daemon.stateDirectory,
                                                hostname: Self.hostname(), environment: environment)
            // Loaded only now that a broker is configured (CMosquittoLoader); missing, strapd
            // does not start rather than run without the publisher it was asked for.
            try MosquittoLibrary.load()
        } catch {
            throw .configuration(error.description)
        }
    }

    func start() throws(StartupError) {
        guard let frontEnd = frontEnd.frontEnd else { throw .source("mqtt: no front end") }
        guard let settings else { return }
        let log = logger
        let publisher = MQTTPublisher(store: frontEnd.store, settings: settings) { level, text in
            switch level {
            case .notice: log.notice(text)
            case .warning: log.warning(text)
            case .error: log.error(text)
            }
        }
        self.publisher = publisher
        let feed = MQTTStateFeed(context: frontEnd.context, settings: settings)
        self.feed = feed
        feed.start()
        publisher.start(stateSource: feed)
    }

    func stop() {
        feed?.stop()
        publisher?.stop()
    }

    static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(cString: buffer)
        // The short name: a prefix per box, not per DNS domain.
        return name.split(separator: ".").first.map(String.init) ?? name
    }
}

/// The retained state strapd keeps on the broker, at most once a second per topic and only
/// when it changed: each device's state (connected, battery, contact, RSSI, distance and
/// energy since strapd started), the workout it is in, each open session's state and live
/// statistics, and the Home Assistant discovery configs for what each device has shown it
/// measures. The live hub only marks what changed (it runs on the pipeline's queue); the
/// work happens when the publisher collects the state, once a second on its queue (its tick),
/// so that the state and that second's samples leave in one burst and one wake-up.
final class MQTTStateFeed: RetainedStateSource, @unchecked Sendable {
    private let context: DaemonContext
    private let discovery: HomeAssistantDiscovery?
    private let topics: MQTTTopics
    private var subscription: Int?

    private struct Observed {
        var dirty: Set<SensorAddress> = []
        /// Sample types seen per device: the entities it gets.
        var types: [SensorAddress: Set<QuantityType>] = [:]
        var distance: [SensorAddress: Double] = [:]
        var energy: [SensorAddress: Double] = [:]
    }
    private let observed = Mutex(Observed())

    // Confined to the publisher's queue (`collect`).
    private var sent: [String: [UInt8]] = [:]
    /// What this collection changed, handed to the publisher at its end.
    private var changed: [(topic: String, bytes: [UInt8])] = []
    private var announced: [SensorAddress: Set<String>] = [:]
    private struct Announced: Equatable {
        var identity: HomeAssistantDiscovery.Identity
        var types: Set<QuantityType>
        var battery, contact, rssi: Bool
    }
    private var lastAnnounced: [SensorAddress: Announced] = [:]
    /// Devices whose state is on the broker: cleared when strapd forgets them.
    private var present: Set<SensorAddress> = []
    /// The sample types published (`mqtt.types`); nil: all.
    private let types: Set<QuantityType>?
    private var sessionTopics: Set<String> = []

    init(context: DaemonContext, settings: MQTTSettings) {
        self.context = context
        topics = settings.topics
        types = settings.types
        discovery = settings.homeAssistant
            ? HomeAssistantDiscovery(topics: settings.topics, prefix: settings.homeAssistantPrefix, softwareVersion: Daemon.version)
            : nil
    }

    func start() {
        subscription = context.live.subscribe { [weak self] events in self?.observe(events) }
    }

    /// The publisher stops collecting when it stops.
    func stop() {
        if let subscription { context.live.unsubscribe(subscription) }
    }

    private func observe(_ events: [LiveEvent]) {
        observed.withLock { o in
            for event in events {
                switch event {
                case .samples(let samples):
                    for s in samples {
                        let a = s.device.address
                        switch s.type {
                        case .cyclingDistance, .runningDistance: o.distance[a, default: 0] += s.value
                        case .energyExpended: o.energy[a, default: 0] += s.value / 4.184
                        default: break
                        }
                        if o.types[a, default: []].insert(s.type).inserted || s.type.aggregation == .cumulative { o.dirty.insert(a) }
                    }
                case .change(let a, _), .link(let a, _, _, _), .linkQuality(let a, _, _):
                    o.dirty.insert(a)
                case .quietNotification:
                    break
                }
            }
        }
    }

    func collect(_ retain: (_ topic: String, _ bytes: [UInt8]) -> Void) {
        update()
        for c in changed { retain(c.topic, c.bytes) }
        changed.removeAll(keepingCapacity: true)
    }

    private func update() {
        let (dirty, types, distance, energy) = observed.withLock { o in
            let d = o.dirty
            o.dirty.removeAll()
            return (d, o.types, o.distance, o.energy)
        }
        let devices = context.directory.list(service: context.devices)
        let sessions = context.workouts?.list() ?? []
        var deviceWorkout: [String: WorkoutSessionInfo] = [:]
        for s in sessions where s.session.holdsDevices {
            for id in s.session.deviceIDs { deviceWorkout[id] = s }
        }
        for d in devices {
            let tracked = d.known || d.connected
            if !tracked {
                if present.contains(d.address) { forget(d.address) }
                continue
            }
            present.insert(d.address)
            if dirty.contains(d.address) || sent[topics.deviceState(address: d.address)] == nil {
                send(topics.deviceState(address: d.address), state(d, distance: distance[d.address], energy: energy[d.address]))
            }
            var w: JSONObject = ["state": .string(deviceWorkout[d.address]?.session.state.rawValue ?? "idle")]
            if let s = deviceWorkout[d.address] {
                w["session"] = .string(s.session.id.uuidString.lowercased())
                w["activity"] = .string(s.session.configuration.activityType.rawValue)
                w["athlete"] = .string(s.session.configuration.athlete)
            }
            send(topics.deviceWorkout(address: d.address), bytes(.object(w)))
            announce(d, types: types[d.address] ?? [])
        }
        // Open sessions' state and statistics; a session over (ended, discarded) is cleared:
        // what remains of it is the saved workout on `workouts/saved`.
        var open: Set<String> = []
        for s in sessions where s.session.state != .ended {
            let topic = topics.workout(id: s.session.id.uuidString)
            open.insert(topic)
            // The shape `workout.get` answers with (docs/protocol-workouts.md).
            if let text = try? RequestRouter.encode(s) { send(topic, Array(text.utf8)) }
        }
        for topic in sessionTopics.subtracting(open) { send(topic, []) ; sent[topic] = nil }
        sessionTopics = open
    }

    private func send(_ topic: String, _ payload: [UInt8]) {
        guard sent[topic] != payload else { return }
        sent[topic] = payload
        changed.append((topic, payload))
    }

    private func state(_ d: DeviceInfo, distance: Double?, energy: Double?) -> [UInt8] {
        var o = DaemonJSON.device(d)
        // What changes with every notification stays on the socket (`devices.list`): a
        // retained state is republished only when something a consumer shows changed.
        o["lastSeen"] = nil
        o["notifications"] = nil
        o["distance"] = distance.map { .double(($0 * 10).rounded() / 10) } ?? .null
        o["energy"] = energy.map { .double(($0 * 10).rounded() / 10) } ?? .null
        return bytes(.object(o))
    }

    private func bytes(_ v: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.write(v, into: &out)
        return out
    }

    private func announce(_ d: DeviceInfo, types: Set<QuantityType>) {
        guard let discovery else { return }
        let identity = HomeAssistantDiscovery.Identity(address: d.address, name: d.name, manufacturer: d.manufacturer,
                                                       model: d.model, firmware: d.firmware, serial: d.serial)
        // The configs change only with the identity or what the device measures: built once per change.
        let key = Announced(identity: identity, types: types, battery: d.battery != nil, contact: d.contact != nil, rssi: d.rssi != nil)
        guard lastAnnounced[d.address] != key else { return }
        lastAnnounced[d.address] = key
        var entities: [(HomeAssistantDiscovery.Entity, QuantityType?)] = [(.connected, nil), (.workout, nil)]
        for t in types.sorted(by: { $0.code < $1.code }) {
            guard let e = HomeAssistantDiscovery.entity(for: t) else { continue }
            // A sample-fed entity only for a type that is published (`mqtt.types`).
            let sampleFed = e == .heartRate || e == .speed || e == .cadence
            if sampleFed, let published = self.types, !published.contains(t) { continue }
            entities.append((e, t))
        }
        if d.battery != nil && !types.contains(.batteryLevel) { entities.append((.battery, nil)) }
        if d.contact != nil && !types.contains(.sensorContact) { entities.append((.contact, nil)) }
        if d.rssi != nil { entities.append((.rssi, nil)) }
        for (entity, source) in entities {
            let topic = discovery.configTopic(entity, address: d.address)
            announced[d.address, default: []].insert(topic)
            send(topic, discovery.config(entity, device: identity, source: source))
        }
    }

    /// The device left strapd (`devices forget`): its entities and retained state go too. Every
    /// entity kind's config is cleared, not only those this process announced: an earlier strapd
    /// may have announced types this one has not seen the device measure.
    private func forget(_ address: SensorAddress) {
        present.remove(address)
        lastAnnounced[address] = nil
        var configs = announced.removeValue(forKey: address) ?? []
        if let discovery {
            for entity in HomeAssistantDiscovery.Entity.allCases { configs.insert(discovery.configTopic(entity, address: address)) }
        }
        for topic in configs.sorted() { send(topic, []); sent[topic] = nil }
        for topic in [topics.deviceState(address: address), topics.deviceWorkout(address: address)] {
            send(topic, [])
            sent[topic] = nil
        }
    }
}
