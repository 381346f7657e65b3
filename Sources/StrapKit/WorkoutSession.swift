import FoundationEssentials
import StrapModel
import StrapWire
import Synchronization

/// A workout session run by strapd (HealthKit's `HKWorkoutSession`, docs/protocol-workouts.md):
/// a proxy that sends the session's commands and follows it. The daemon creates the session at
/// ``prepare()`` or ``start()``; until then ``id`` is nil. Any number of proxies, in any number
/// of processes, may drive and follow one session: ``init(mirroring:store:)`` attaches to one
/// by id (HealthKit's mirroring).
public final class WorkoutSession: Sendable {
    /// A session's state (HealthKit's `HKWorkoutSessionState`).
    public enum State: String, Sendable, CaseIterable {
        /// Created, not prepared or started.
        case notStarted
        /// Devices claimed, nothing counted yet.
        case prepared
        /// Counting.
        case running
        /// Not counting; resumable.
        case paused
        /// Stopped; only `end` or `discard` remain.
        case stopped
        /// Ended and saved.
        case ended
    }

    /// One state change of a ``states()`` sequence.
    public struct StateChange: Sendable, Equatable {
        /// The state before.
        public var from: State
        /// The state after.
        public var to: State
        /// When the change happened.
        public var date: Date
    }

    /// A lap or marker of an ``events()`` sequence (HealthKit's `HKWorkoutEvent`).
    public struct Event: Sendable, Equatable {
        /// `lap` or `marker`.
        public var kind: String
        /// When it happened.
        public var date: Date
        /// Its metadata.
        public var metadata: [String: String]
    }

    /// Another participant's ``send(_:)`` (HealthKit's `didReceiveDataFromRemoteWorkoutSession`).
    public struct Message: Sendable, Equatable {
        /// The JSON value sent.
        public var payload: JSONValue
        /// When strapd relayed it.
        public var date: Date
    }

    /// The store the session's commands go through.
    public let store: StrapStore
    /// The configuration a new session is created with; nil for a mirror.
    public let configuration: WorkoutConfiguration?
    private let sessionID: Mutex<UUID?>

    /// A session to be created with `configuration` at its ``prepare()`` or ``start()``.
    public init(store: StrapStore, configuration: WorkoutConfiguration) {
        self.store = store
        self.configuration = configuration
        sessionID = Mutex(nil)
    }

    /// A proxy of the existing session `id` (started by another proxy or process).
    public init(mirroring id: UUID, store: StrapStore) {
        self.store = store
        self.configuration = nil
        sessionID = Mutex(id)
    }

    /// The daemon's id of the session; nil until it is created.
    public var id: UUID? { sessionID.withLock { $0 } }

    /// The live builder: the session's figures as strapd counts them.
    public var builder: WorkoutBuilder { WorkoutBuilder(session: self) }

    // MARK: commands

    /// Claims the devices (`workout.prepare`): notStarted → prepared; creates the session first
    /// when it has no id yet.
    public func prepare() async throws { try await createOrMove("workout.prepare") }

    /// Starts counting (`workout.start`): notStarted or prepared → running; creates the session
    /// first when it has no id yet.
    public func start() async throws { try await createOrMove("workout.start") }

    /// running → paused.
    public func pause() async throws { _ = try await command("workout.pause") }
    /// paused → running.
    public func resume() async throws { _ = try await command("workout.resume") }
    /// running or paused → stopped (HealthKit's `stopActivity`).
    public func stop() async throws { _ = try await command("workout.stop") }

    /// Starts a new lap, with optional metadata.
    public func lap(metadata: [String: String] = [:]) async throws {
        _ = try await command("workout.lap", metadata.isEmpty ? [:] : ["metadata": Self.wire(metadata)])
    }

    /// Marks a moment, with optional metadata.
    public func marker(metadata: [String: String] = [:]) async throws {
        _ = try await command("workout.marker", metadata.isEmpty ? [:] : ["metadata": Self.wire(metadata)])
    }

    /// Ends the session and returns the saved workout (HealthKit's `end()` and the builder's
    /// `finishWorkout()` in one: strapd saves as it ends).
    public func end() async throws -> Workout {
        let reply = try await command("workout.end")
        guard let workout = reply.object("workout") else { throw StrapKitError.malformedReply("workout.end without workout") }
        return try WireDecoder.decode(Workout.self, from: workout)
    }

    /// Drops the session; nothing is saved.
    public func discard() async throws { _ = try await command("workout.discard") }

    /// Relays `payload` (at most 4096 bytes as JSON) to every other follower of the session
    /// (HealthKit's `sendToRemoteWorkoutSession`); it is not stored.
    public func send(_ payload: JSONValue) async throws { _ = try await command("workout.send", ["payload": payload]) }

    /// The session's state as strapd has it now (`workout.get`).
    public func state() async throws -> State {
        let reply = try await command("workout.get")
        if reply.object("workout") != nil && reply.object("session") == nil { return .ended }
        guard let name = reply.object("session")?.string("state"), let state = State(rawValue: name) else {
            throw StrapKitError.malformedReply("workout.get without a session state")
        }
        return state
    }

    // MARK: following

    /// The state changes from now on, until the session is saved or discarded. The stream is
    /// open when this returns: no change after it is missed.
    public func states() async throws -> WorkoutFeed<StateChange> {
        try await follow { kind, data throws(StrapKitError) in
            guard kind == "state" else { return nil }
            guard let from = data.string("from").flatMap(State.init(rawValue:)),
                  let to = data.string("to").flatMap(State.init(rawValue:)) else {
                throw .malformedReply("a state event without from/to")
            }
            return StateChange(from: from, to: to, date: Date(millis: try data.time("time")))
        }
    }

    /// Laps and markers from now on, from any participant.
    public func events() async throws -> WorkoutFeed<Event> {
        try await follow { kind, data throws(StrapKitError) in
            guard kind == "event" else { return nil }
            var metadata: [String: String] = [:]
            for (k, v) in data.object("metadata")?.entries ?? [] { if case .string(let s) = v { metadata[k] = s } }
            return Event(kind: data.string("kind") ?? "", date: Date(millis: try data.time("time")), metadata: metadata)
        }
    }

    /// Other participants' messages from now on (not this store's own: strapd does not echo a
    /// message to its sender's connection).
    public func messages() async throws -> WorkoutFeed<Message> {
        try await follow { kind, data throws(StrapKitError) in
            guard kind == "message" else { return nil }
            return Message(payload: data["payload"] ?? .null, date: Date(millis: try data.time("time")))
        }
    }

    func follow<Element: Sendable>(_ transform: @escaping WorkoutFeed<Element>.Transform) async throws -> WorkoutFeed<Element> {
        let (_, events, cancel) = try await store.cancellableStream("workout.live", ["session": .string(try requireID().uuidString)])
        return WorkoutFeed(events: events, cancel: cancel, transform: transform)
    }

    // MARK: plumbing

    func requireID() throws(StrapKitError) -> UUID {
        guard let id else { throw .invalidTransition("the session has not been created yet: prepare or start it first") }
        return id
    }

    func command(_ op: String, _ extra: JSONObject = [:]) async throws -> JSONObject {
        var p: JSONObject = ["session": .string(try requireID().uuidString)]
        for (k, v) in extra.entries { p[k] = v }
        return try await store.request(op, p)
    }

    private func createOrMove(_ op: String) async throws {
        if id != nil {
            _ = try await command(op)
            return
        }
        guard let configuration else { throw StrapKitError.invalidTransition("a mirror has no configuration to create a session from") }
        var p: JSONObject = ["activityType": .string(configuration.activityType.rawValue),
                             "locationType": .string(configuration.locationType.rawValue),
                             "athlete": .string(configuration.athlete)]
        if !configuration.deviceIDs.isEmpty { p["devices"] = .array(configuration.deviceIDs.map(JSONValue.string)) }
        if !configuration.metadata.isEmpty { p["metadata"] = Self.wire(configuration.metadata) }
        let reply = try await store.request(op, p)
        guard let text = reply.object("session")?.string("session"), let id = UUID(uuidString: text) else {
            throw StrapKitError.malformedReply("\(op) without a session id")
        }
        sessionID.withLock { $0 = id }
    }

    static func wire(_ metadata: [String: String]) -> JSONValue {
        var o = JSONObject()
        for key in metadata.keys.sorted() { o[key] = .string(metadata[key]!) }
        return .object(o)
    }
}

/// One kind of a session's events (states, laps and markers, messages, statistics) as an
/// `AsyncSequence`, over a `workout.live` stream of its own. It ends when the session is saved
/// or discarded. A feed is iterated once: when its iterator goes away (the loop ended, its task
/// was cancelled) the stream ends on the daemon's side, even while the feed value lives on. A
/// lost connection throws (events of the gap cannot be recovered; read the session with
/// ``WorkoutSession/state()``).
public struct WorkoutFeed<Element: Sendable>: AsyncSequence, Sendable {
    typealias Transform = @Sendable (String, JSONObject) throws(StrapKitError) -> Element?
    let events: Connection.Events
    let cancel: @Sendable () -> Void
    let transform: Transform

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(events: events.makeAsyncIterator(), lease: Lease(cancel), transform: transform)
    }

    /// Ends the stream when the last copy of an iterator is gone.
    final class Lease: Sendable {
        let cancel: @Sendable () -> Void
        init(_ cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }
        deinit { cancel() }
    }

    /// Iterates the feed's elements.
    public struct Iterator: AsyncIteratorProtocol {
        var events: Connection.Events.AsyncIterator
        let lease: Lease
        let transform: Transform
        var pending: [Element] = []
        var index = 0

        /// The next element; nil once the session is saved or discarded, or the task cancelled.
        public mutating func next() async throws -> Element? {
            while index == pending.count {
                guard let batch = try await events.next() else { return nil }
                pending = []
                index = 0
                for event in batch { if let e = try transform(event.kind, event.data) { pending.append(e) } }
            }
            defer { index += 1 }
            return pending[index]
        }
    }
}

/// The live builder of a session (HealthKit's `HKLiveWorkoutBuilder`): the figures strapd
/// counts while it runs (docs/workouts.md *LiveStatistics*).
public struct WorkoutBuilder: Sendable {
    /// The session counted.
    public let session: WorkoutSession

    /// The seconds counted so far, pauses excluded.
    public func elapsedTime() async throws -> Double {
        try await current().number("elapsedTime") ?? 0
    }

    /// The session's statistics of `type` so far; nil when the session counts none of that type.
    /// Heart rate has average, minimum, maximum and most recent; speed and cadence average,
    /// maximum and most recent; distance and active energy a sum.
    public func statistics(for type: QuantityType) async throws -> Statistics? {
        Self.statistics(for: type, in: try await current())
    }

    /// Every figure update from now on (at most one a second while samples arrive).
    public func updates() async throws -> WorkoutFeed<JSONObject> {
        try await session.follow { kind, data throws(StrapKitError) in kind == "statistics" ? data : nil }
    }

    private func current() async throws -> JSONObject {
        guard let stats = try await session.command("workout.get").object("statistics") else {
            throw StrapKitError.noData("the session has no statistics")
        }
        return stats
    }

    /// A type's figures out of a LiveStatistics object.
    public static func statistics(for type: QuantityType, in live: JSONObject) -> Statistics? {
        let prefix: String
        switch type {
        case .heartRate: prefix = "heartRate"
        case .cyclingSpeed, .runningSpeed: prefix = "speed"
        case .cyclingCadence, .runningCadence: prefix = "cadence"
        case .cyclingDistance, .runningDistance, .activeEnergy:
            let key = type == .activeEnergy ? "activeEnergy" : "distance"
            guard let sum = live.number(key) else { return nil }
            var s = empty(type, live)
            s.sum = sum
            return s
        default: return nil
        }
        var s = empty(type, live)
        s.average = live.number(prefix + "Average")
        s.minimum = live.number(prefix + "Minimum")
        s.maximum = live.number(prefix + "Maximum")
        s.mostRecent = live.number(prefix + "MostRecent")
        s.count = Int(live.int(prefix + "Samples") ?? 0)
        guard s.average != nil || s.mostRecent != nil else { return nil }
        return s
    }

    private static func empty(_ type: QuantityType, _ live: JSONObject) -> Statistics {
        let start = (try? live.time("start")) ?? 0
        let end = (try? live.time("time")) ?? start
        return Statistics(type: type, start: start, end: end, aggregate: Aggregate(), options: [])
    }
}
