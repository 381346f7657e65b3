import CMosquittoLoader
import Dispatch
import Glibc
import StrapModel
import StrapMQTTProtocol
import StrapOS
import StrapStore
import Synchronization

/// The MQTT publisher (docs/mqtt.md): the store read as an anchored follower from a cursor
/// of its own, each item published at the configured QoS, the cursor advanced and persisted
/// only over what the broker acknowledged. Retained state (device states, discovery, workout
/// state) is kept by topic and published again after every reconnect. Everything runs on
/// `queue`, which also drives libmosquitto's socket (`MosquittoConnection`); only connecting
/// happens elsewhere. The store never waits for the broker: a slow or absent broker only
/// leaves the cursor behind.
///
/// While caught up, one wake-up a second does everything (`tick`): the retained state is
/// collected, new items and changed state go out in one burst. The store's commits are not
/// watched: a watch would add a wake-up per commit batch for nothing the tick does not do.
/// Catching up is paced by the broker's acknowledgements instead.
public final class MQTTPublisher: @unchecked Sendable {
    public enum LogLevel: Sendable { case notice, warning, error }

    public let settings: MQTTSettings
    let queue = DispatchQueue(label: "strapd.mqtt")
    let store: Store
    let log: @Sendable (LogLevel, String) -> Void
    private let random: @Sendable () -> Double

    // Confined to `queue`.
    var connection: MosquittoConnection?
    private var client: MosquittoClient? { connection?.client }
    private var generation = 0
    var connected = false
    var stopping = false
    var window: DeliveryWindow
    var backoff: ReconnectBackoff
    var persisted: UInt64
    private var retained: [String: [UInt8]] = [:]
    private var retainedOrder: [String] = []
    var topicCache: [TopicKey: String] = [:]
    var lag = DeliveryLag()
    /// Signalled by `stop`: ends the tick thread.
    private let tickerStop = DispatchSemaphore(value: 0)
    var stateSource: RetainedStateSource?
    var payload: [UInt8] = []
    private var unsentRetained: Set<String> = []
    private var backlog = DeliveryBacklog()
    var connectedAt: Double?
    var ticks = 0
    var lastAckAt = 0.0
    /// Seconds between cursor writes while delivering (and one at stop).
    static let persistEvery = 5

    private let acks = Mutex<[(mid: Int32, reason: Int32)]>([])
    let snapshot = Mutex(MQTTStatus())
    /// libmosquitto's last error or warning line: a TLS verification failure is named only
    /// there. Written from its callbacks (on the queue, or the connecting thread).
    private let libraryLog = Mutex<String?>(nil)
    private let refusal = Atomic<Int32>(0)

    struct TopicKey: Hashable {
        var address: String
        var type: QuantityType
    }

    /// Reads the cursor file; `start` connects.
    public init(store: Store, settings: MQTTSettings, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.store = store
        self.settings = settings
        self.log = log
        self.random = random
        var start: UInt64 = 0
        switch DeliveryCursor.load(settings.cursorPath) {
        case .none:
            log(.notice, "mqtt: no delivery cursor yet; publishing the store from its beginning")
        case .found(let c) where c.broker == settings.broker.description && c.prefix == settings.topics.prefix:
            start = c.anchor
        case .found(let c):
            log(.notice, "mqtt: the cursor at \(c.anchor) was for \(c.broker) under \(c.prefix); publishing the store from its beginning to \(settings.broker) under \(settings.topics.prefix)")
        case .damaged(let why):
            log(.error, "mqtt: delivery cursor \(settings.cursorPath) is damaged (\(why)); publishing the store from its beginning (consumers de-duplicate by uuid)")
        }
        window = DeliveryWindow(capacity: settings.maxInflight, cursor: start)
        backoff = settings.backoff
        persisted = start
        snapshot.withLock { $0.broker = settings.broker.description; $0.cursor = start }
    }

    public var status: MQTTStatus {
        var s = snapshot.withLock { $0 }
        let latest = store.latestAnchor
        s.lagItems = latest > s.cursor ? latest - s.cursor : 0
        return s
    }

    /// `stateSource` is asked for the retained state once a second, on the publisher's queue.
    public func start(stateSource: RetainedStateSource? = nil) {
        queue.async { [self] in
            self.stateSource = stateSource
            connect()
        }
        // The tick runs on the queue from a thread of its own (`queue.sync` runs it on the
        // calling thread when the queue is free): one wake-up a second, where a Dispatch timer
        // woke libdispatch's manager thread and then a worker.
        let stop = tickerStop
        let spawned = DetachedThread.spawn(name: "strapd-mqtt") { [weak self] in
            var deadline = DispatchTime.now() + 1
            while stop.wait(timeout: deadline) == .timedOut {
                guard let self else { return }
                queue.sync { self.tick() }
                let now = DispatchTime.now()
                deadline = deadline + 1
                if deadline < now { deadline = now + 1 }
            }
        }
        if !spawned { log(.error, "mqtt: no thread for the publisher's tick: nothing is published after the connection's first burst") }
    }

    /// Graceful: `offline` published, what is in flight given up to a second to be
    /// acknowledged, the cursor persisted, DISCONNECT sent (so the Last Will stays unused).
    public func stop() {
        tickerStop.signal()
        queue.sync { [self] in
            stopping = true
            stateSource = nil
            if let client, let connection, connected {
                _ = publishRaw(client, topic: settings.topics.status, bytes: Array("offline".utf8), qos: 1, retain: true)
                let deadline = Self.now() + 1
                while window.inFlight > 0 && Self.now() < deadline {
                    guard connection.poll() == MOSQ_ERR_SUCCESS.rawValue else { break }
                    drainAcknowledgements()
                    usleep(2_000)
                }
                connection.close(disconnect: true)
            }
            teardown()
            persist()
            update { $0.state = .stopped }
        }
    }

    /// Keeps `bytes` as the retained state of `topic` (from the state source, on the queue),
    /// published with the next burst and again after every reconnect. Empty `bytes` clears the
    /// topic on the broker; the clearing is kept and replayed too, so a broker that was away
    /// (or lost its retained messages) is cleared as well.
    func keepRetained(_ topic: String, _ bytes: [UInt8]) {
        if retained.updateValue(bytes, forKey: topic) == nil { retainedOrder.append(topic) }
        unsentRetained.insert(topic)
    }

    /// Retained topics changed since they were last published (all of them after a reconnect).
    /// They share the window with the samples (the broker's Receive Maximum counts both) and go
    /// first; what finds no room goes once acknowledgements open some.
    private func publishRetained() {
        guard let client, connected, !unsentRetained.isEmpty else { return }
        for topic in retainedOrder where unsentRetained.contains(topic) {
            guard window.hasRoom, connected, let bytes = retained[topic] else { break }
            guard publishRaw(client, topic: topic, bytes: bytes, qos: settings.qos == 0 ? 0 : 1, retain: true) else { break }
            unsentRetained.remove(topic)
        }
    }

    /// A clearing (an empty retained message) the broker acknowledged is done: it is not kept
    /// for later connections, so the retained set does not grow with every session and
    /// forgotten device. (A broker that loses its retained messages loses what it cleared too.)
    private func retainedAcknowledged(_ topic: String) {
        guard retained[topic]?.isEmpty == true, !unsentRetained.contains(topic) else { return }
        retained[topic] = nil
        retainedOrder.removeAll { $0 == topic }
    }

    /// Retained topics kept for the next reconnect (tests).
    public var retainedTopicCount: Int { queue.sync { retained.count } }

    /// Waits until what was queued before has run (tests).
    public func sync() { queue.sync {} }

    // MARK: connection

    private func connect() {
        guard !stopping else { return }
        generation += 1
        let gen = generation
        update { $0.state = .connecting; $0.retryIn = nil }
        let s = settings
        let options = MosquittoClient.Options(
            clientID: s.clientID, protocolVersion: s.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311,
            username: s.username, password: s.password, caFile: s.caFile, certFile: s.certFile, keyFile: s.keyFile,
            tls: s.tls, tlsVerify: s.tlsVerify, maxInflight: s.maxInflight, will: (s.topics.status, "offline"))
        let events = MosquittoClient.Events(
            connected: { [weak self] rc, receiveMaximum in
                // A refusal ends the read that brought it: recorded now, so that the failure
                // names it rather than the lost connection.
                if rc != 0 { self?.refusal.store(rc, ordering: .relaxed) }
                self?.onQueue(gen) { $0.connected(rc, receiveMaximum: receiveMaximum) }
            },
            disconnected: { [weak self] rc in self?.onQueue(gen) { $0.failed(.lost(rc)) } },
            acknowledged: { [weak self] mid, reason in self?.acknowledged(mid, reason) },
            logged: { [weak self] _, text in self?.libraryLog.withLock { $0 = text } })
        // Connecting blocks (DNS, TCP, TLS): off the queue, so acknowledgements, status and
        // stop are never stuck behind an unreachable broker.
        DispatchQueue.global().async { [weak self] in
            let result: Result<MosquittoClient, MQTTError>
            do throws(MQTTError) {
                let c = try MosquittoClient(options, events: events)
                let (host, port): (String, Int) = switch s.broker {
                case let .tcp(h, p): (h, p)
                case let .unix(path): (path, 0)
                }
                do throws(MQTTError) { try c.connect(host: host, port: port, keepAlive: s.keepAlive) } catch {
                    c.close()
                    throw error
                }
                result = .success(c)
            } catch {
                result = .failure(error)
            }
            guard let self else {
                if case .success(let c) = result { c.close() }
                return
            }
            queue.async { [self] in
                guard gen == generation, !stopping else {
                    if case .success(let c) = result { c.close() }
                    return
                }
                switch result {
                case .success(let c):
                    guard let watched = MosquittoConnection(client: c, queue: queue, readable: { [weak self] in self?.serviced() },
                                                            failed: { [weak self] rc in self?.failed(.lost(rc)) }) else {
                        c.close()
                        return failed(.lost(MOSQ_ERR_ERRNO.rawValue))
                    }
                    connection = watched
                    queue.asyncAfter(deadline: .now() + .seconds(Self.connackTimeout)) { [weak self] in self?.checkConnack(gen) }
                case .failure(let e): failed(e)
                }
            }
        }
    }

    /// Runs `body` on the queue if attempt `gen` is still the current one.
    private func onQueue(_ gen: Int, _ body: @escaping @Sendable (MQTTPublisher) -> Void) {
        queue.async { [weak self] in
            guard let self, gen == generation, !stopping else { return }
            body(self)
        }
    }

    /// No CONNACK in time: the broker is not answering MQTT (a wrong port, a hung broker).
    private func checkConnack(_ gen: Int) {
        guard gen == generation, !connected, client != nil, !stopping else { return }
        failed(.configuration("no answer (CONNACK) from the broker within \(Self.connackTimeout) s"))
    }

    static let connackTimeout = 10

    private func connected(_ rc: Int32, receiveMaximum: Int) {
        guard rc == 0 else { return failed(.refused(rc)) }
        guard let client else { return }
        connected = true
        client.stopLogging()
        libraryLog.withLock { $0 = nil }
        lastAckAt = Self.now()
        // The backoff restarts only once this connection has delivered something (or stayed
        // up a while): a broker that accepts the connection and then refuses every publish
        // (an ACL) must not be retried in a tight loop.
        connectedAt = Self.now()
        window.reset()
        // MQTT 5: no more in flight than the broker takes (mosquitto: max_inflight_messages,
        // 20 by default). libmosquitto would queue the rest inside itself, out of this window's
        // sight. MQTT 3.1.1 has no such announcement: the configured window alone.
        if settings.protocolVersion == .v5 { window.limit(to: receiveMaximum) }
        let limit = window.limit
        update { $0.state = .connected; $0.connects += 1; $0.retryIn = nil; $0.inflightLimit = limit }
        log(.notice, "mqtt: connected to \(settings.broker) as \(settings.clientID), publishing under \(settings.topics.prefix)/ from anchor \(window.cursor)\(limit < settings.maxInflight ? " (the broker takes \(limit) messages in flight)" : "")")
        _ = publishRaw(client, topic: settings.topics.status, bytes: Array("online".utf8), qos: 1, retain: true)
        unsentRetained = Set(retainedOrder)
        burst()
    }

    func failed(_ reported: MQTTError) {
        var error = reported
        let refused = refusal.exchange(0, ordering: .relaxed)
        if refused != 0, case .lost = error { error = .refused(refused) }
        var text = error.description
        if let detail = libraryLog.withLock({ l in defer { l = nil }; return l }) {
            switch error {
            case .lost(let rc) where rc == MOSQ_ERR_TLS.rawValue: text = "TLS: \(detail)"
            case .lost, .library, .system: text += " (\(detail))"
            default: break
            }
        }
        teardown()
        guard !stopping else { return }
        let delay = backoff.next(unit: random())
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        log(backoff.attempts == 1 ? .warning : .error, "mqtt: \(settings.broker): \(text); retrying in \((seconds * 10).rounded() / 10) s")
        update {
            $0.state = .waiting
            $0.inflightLimit = nil
            $0.lastError = text
            $0.lastErrorAt = Int64(Self.wall() * 1000)
            $0.retryIn = seconds
        }
        generation += 1
        let gen = generation
        queue.asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self, gen == generation, !stopping else { return }
            connect()
        }
    }

    private func teardown() {
        connected = false
        backlog.clear()
        connectedAt = nil
        window.reset()
        connection?.close(disconnect: false)
        connection = nil
    }

    // MARK: delivery

    /// The tick's burst (and a new connection's): changed retained state and the items committed
    /// since, in one TCP segment, one wake-up of the broker and of this queue for the
    /// acknowledgements. Catching up is not slowed: there the acknowledgements drive the pump.
    func burst() {
        guard let connection, connected else { return }
        connection.corked {
            publishRetained()
            pump()
        }
        connection.flush()
        watchReplies()
    }

    /// While anything is in flight or waits to be published, the broker's replies are read as
    /// they come: the acknowledgements pace the pump and advance the cursor. With nothing
    /// outstanding they wait for the next tick (`tick` reads them first), so an idle
    /// connection costs no wake-up of its own.
    private func watchReplies() {
        guard let connection, connected else { return }
        let outstanding = window.inFlight > 0 || !unsentRetained.isEmpty || !backlog.isEmpty || store.latestAnchor != window.published
        connection.watchReads(outstanding)
    }

    /// Inside `strap_mosquitto_loop_read`, on the queue: only noted here (acting now could end the
    /// connection under libmosquitto's feet); `serviced` or a stop's poll drains them.
    private func acknowledged(_ mid: Int32, _ reason: Int32) {
        acks.withLock { $0.append((mid, reason)) }
    }

    /// The socket had something: libmosquitto read it and ran its callbacks here, on the queue.
    private func serviced() {
        drainAcknowledgements()
        publishRetained()
        pump()
        watchReplies()
    }

    /// The tick's read of what the broker sent while the socket was not watched.
    func readReplies() {
        guard let connection, connected, !connection.watchingReads else { return }
        let rc = connection.readNow()
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failed(.lost(rc)) }
        drainAcknowledgements()
    }

    private func drainAcknowledgements() {
        let batch = acks.withLock { a in
            let b = a
            a.removeAll(keepingCapacity: true)
            return b
        }
        guard connected else { return }
        var counted: UInt64 = 0
        for (mid, reason) in batch {
            if reason >= 0x80 {
                // MQTT 5 reason: the broker did not take it (an ACL, a quota). Not delivered:
                // the connection is dropped and the message published again after the backoff.
                return failed(.rejected(topic: "a strapd topic (message \(mid))", reason: reason))
            }
            if let topic = window.acknowledgedOutside(mid: mid) {
                retainedAcknowledged(topic)
            } else if window.acknowledged(mid: mid) {
                counted += 1
            }
        }
        if counted > 0 {
            backoff.reset()
            lastAckAt = Self.now()
        }
        noteProgress(acknowledged: counted)
    }

    /// Publishes from the backlog while the window has room, refilling it from the store.
    private func pump() {
        guard connected, let client, !stopping else { return }
        var sent: UInt64 = 0
        defer { noteProgress(published: sent) }
        while window.hasRoom {
            guard let item = backlog.take() else {
                window.skipped(upTo: backlog.end)
                guard store.latestAnchor != window.published else { return }
                do throws(StrapError) {
                    backlog.load(try store.anchored(types: readTypes, anchor: window.published, limit: DeliveryBacklog.pageSize))
                } catch {
                    if case .anchorExpired(let oldest) = error {
                        log(.warning, "mqtt: items \(window.published + 1)…\(oldest) expired from the store before they were delivered")
                        window.jump(to: oldest)
                        backlog.clear()
                        continue
                    }
                    if case .anchorAhead(let latest) = error {
                        log(.error, "mqtt: the cursor (\(window.published)) is ahead of the store, which ends at \(latest): items published before were lost from the store (an unclean stop with sync = none); continuing from \(latest), whose next anchors name new items")
                        window.rewind(to: latest)
                        backlog.clear()
                        continue
                    }
                    log(.error, "mqtt: reading the store: \(error)")
                    return
                }
                if backlog.isEmpty {
                    window.skipped(upTo: backlog.end)
                    return
                }
                continue
            }
            let ok: Bool = switch item {
            case .object(let o): send(client, object: o)
            case .tombstones(let t): send(client, tombstones: t)
            }
            guard ok else {
                // Still connected: not sent yet, the next pump retries it. (A failure that
                // ended the connection has cleared the backlog already.)
                if connected { backlog.putBack() }
                return
            }
            sent += 1
        }
    }

    private var readTypes: Set<ObjectType>? {
        guard let types = settings.types else { return nil }
        return Set(types.map { ObjectType.quantity($0) } + [.workout])
    }
}
