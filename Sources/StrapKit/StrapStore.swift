@_exported import StrapModel
@_exported import StrapWire
import Synchronization

/// What a ``StrapStore`` does when its connection to strapd breaks. There is no silent
/// reconnect: every loss and every new connection is a ``StrapStore/ConnectionEvent``, and a
/// request that was in flight fails with ``StrapKitError/connectionLost(_:)`` whatever the policy
/// (whether a command in flight took effect is unknown, so it is never sent twice).
public enum ReconnectPolicy: Sendable, Equatable {
    /// The store stays disconnected: every later call throws the loss. Make a new store to
    /// connect again.
    case never
    /// The next call after a loss connects again, waiting `initial` seconds before the first
    /// attempt and doubling up to `maximum` between attempts; after `attempts` failed attempts
    /// (nil: no limit) the call throws ``StrapKitError/cannotConnect(path:reason:)``. Anchored
    /// follows resume from their last anchor on the new connection, without a gap or a duplicate.
    case backoff(initial: Double = 0.1, maximum: Double = 5, attempts: Int? = nil)
}

/// A connection to strapd's socket: HealthKit's `HKHealthStore`, over the protocol of
/// docs/protocol.md. One connection carries every query, command and stream of the store,
/// pipelined and matched by id; queries (``SampleQuery``, ``AnchoredQuery``, ``StatisticsQuery``,
/// ``StatisticsCollectionQuery``) and ``WorkoutSession`` run against it.
///
/// The connection is made at the first call, so creating a store never fails.
public final class StrapStore: Sendable {
    /// The socket strapd listens on by default.
    public static let defaultSocket = "/run/strapd/strapd.sock"

    /// What happened to the connection, in order.
    public enum ConnectionEvent: Sendable, Equatable {
        /// A connection was made; `reconnect` is false for the first one.
        case connected(reconnect: Bool)
        /// The connection ended (the daemon stopped, the socket broke).
        case lost(StrapKitError)
        /// Attempt `attempt` to connect again comes after `delay` seconds.
        case reconnecting(attempt: Int, delay: Double)
    }

    /// This library's semantic version (docs/client.md, *Stability*).
    public static let libraryVersion = "0.1.0"

    /// The thread that reads this store's socket, as a task executor: a consumer that runs
    /// with `withTaskExecutorPreference(store.executor) { … }` gets each event on the thread
    /// that read it, without a wake-up of the cooperative pool in between (the lowest latency
    /// of a followed sample). Its work then holds up the connection's reading: keep it short,
    /// never block the thread. Between connections its jobs run on Dispatch's global queue.
    public var executor: any TaskExecutor { link.executor }

    /// The socket's path.
    public let socket: String
    /// What happens after a loss.
    public let reconnect: ReconnectPolicy
    /// Every connection change, as it happens (the newest 256 are kept for a slow reader).
    public let connectionEvents: AsyncStream<ConnectionEvent>

    private let eventSink: AsyncStream<ConnectionEvent>.Continuation
    private let link: Link
    private let nextID = Atomic<Int64>(1)

    /// A store on `socket`; nothing is connected until the first call.
    public init(socket: String = StrapStore.defaultSocket, reconnect: ReconnectPolicy = .never) {
        self.socket = socket
        self.reconnect = reconnect
        (connectionEvents, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        link = Link(path: socket, policy: reconnect, events: eventSink)
    }

    deinit {
        link.closeNow()
        eventSink.finish()
    }

    /// Ends the connection: outstanding requests and streams throw ``StrapKitError/closed``,
    /// and so does every later call.
    public func close() {
        link.closeNow()
        eventSink.finish()
    }

    /// Connects now, if no connection is open: a unix `connect` answers at once, so this blocks
    /// no longer than that. A command-line tool calls it first to report a missing daemon or a
    /// refused permission (``StrapKitError/isDaemonNotRunning``, ``StrapKitError/isPermissionDenied``)
    /// before it does anything else; other programs need not, the first call connects.
    public func connect() throws(StrapKitError) {
        try link.connectIfNeeded()
    }

    /// Requests and streams still waiting for the daemon on the current connection.
    public var outstandingRequests: Int { link.current?.outstanding ?? 0 }

    /// The connected strapd's version, its `status` `version`: the protocol's version.
    public func daemonVersion() async throws -> String {
        guard case .string(let version)? = try await request("status")["version"] else {
            throw StrapKitError.malformedReply("status without version")
        }
        return version
    }

    // MARK: the protocol

    /// Sends one request of the protocol and returns its `result` object: the escape hatch for
    /// an operation this library has no type for. `params` are the request's members besides
    /// `id` and `op`.
    public func request(_ op: String, _ params: JSONObject = [:]) async throws -> JSONObject {
        let connection = try await link.connection()
        return try await connection.call(id: nextID.add(1, ordering: .relaxed).oldValue, op: op, params: params).object()
    }

    /// `request` with the result handed over as the line's bytes (anchored pages: decoded in
    /// one pass, without the parsed tree).
    func requestBytes(_ op: String, _ params: JSONObject) async throws -> Body {
        let connection = try await link.connection()
        return try await connection.call(id: nextID.add(1, ordering: .relaxed).oldValue, op: op, params: params, raw: true)
    }

    /// Opens a stream of the protocol and returns its first reply's `result` and its events as
    /// the daemon sent them: the escape hatch beside ``request(_:_:)`` for a stream this library
    /// has no type for (`devices.scan`, `live.subscribe`, `workout.export`, …). The sequence ends
    /// after the stream's `finished` or `cancelled` event; an `error` event throws its
    /// ``StrapKitError``, a `shutdown` ``StrapKitError/shuttingDown``. Ending the iteration early
    /// cancels the stream; ``RawEventStream/cancel()`` cancels it and still delivers what the
    /// daemon sends up to its `cancelled` event. `keepingJSON`: each event also carries its
    /// data's text as the daemon wrote it (``RawEvent/dataJSON``).
    public func rawStream(_ op: String, _ params: JSONObject = [:], keepingJSON: Bool = false) async throws
        -> (result: JSONObject, events: RawEventStream) {
        let connection = try await link.connection()
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let (first, events) = try await connection.openStream(id: id, op: op, params: params, raw: keepingJSON)
        return (try first.object(), RawEventStream(events: events, cancel: { [weak connection] in
            connection?.cancelStream(id, keepEvents: true)
        }))
    }

    /// Opens a stream (`samples.anchored` with `follow`, `workout.live`, `live.subscribe`, …):
    /// the first reply's `result`, then the events in batches as they were read.
    func stream(_ op: String, _ params: JSONObject, raw: Bool = false) async throws -> (Body, Connection.Events) {
        let (first, events, _) = try await cancellableStream(op, params, raw: raw)
        return (first, events)
    }

    /// `stream`, with what ends it on the daemon's side (for a sequence that outlives its
    /// iterators, such as a feed kept in a variable).
    func cancellableStream(_ op: String, _ params: JSONObject, raw: Bool = false) async throws
        -> (Body, Connection.Events, @Sendable () -> Void) {
        let connection = try await link.connection()
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let (first, events) = try await connection.openStream(id: id, op: op, params: params, raw: raw)
        return (first, events, { [weak connection] in connection?.cancelStream(id) })
    }

    /// Whether a stream that ended with `error` may open again on a new connection.
    func mayResume(after error: any Error) -> Bool {
        guard reconnect != .never, !link.isClosed, let error = error as? StrapKitError else { return false }
        switch error {
        case .connectionLost, .shuttingDown: return true
        default: return false  // cannotConnect: the policy's attempts are spent
        }
    }
}

/// The store's current connection and the reconnect policy around it. Connecting blocks for
/// no longer than a unix `connect`, so it runs under the lock; the backoff's sleeps do not.
final class Link: Sendable {
    private struct State {
        var connection: Connection?
        var connectedBefore = false
        var closed = false
        /// The loss that ends a `.never` store.
        var lost: StrapKitError?
    }

    let path: String
    let policy: ReconnectPolicy
    /// Driven by each connection's reader thread in turn.
    let executor = ReaderExecutor()
    let events: AsyncStream<StrapStore.ConnectionEvent>.Continuation
    private let state = Mutex(State())
    /// One caller reconnects at a time; the others wait for its outcome.
    private let reconnecting = Mutex<Task<Connection, any Error>?>(nil)

    init(path: String, policy: ReconnectPolicy, events: AsyncStream<StrapStore.ConnectionEvent>.Continuation) {
        self.path = path
        self.policy = policy
        self.events = events
    }

    var current: Connection? { state.withLock { $0.connection } }
    var isClosed: Bool { state.withLock { $0.closed } }

    func closeNow() {
        let connection = state.withLock { s in
            s.closed = true
            return s.connection
        }
        connection?.close()
    }

    func connection() async throws -> Connection {
        let (live, failure, first) = state.withLock { s -> (Connection?, StrapKitError?, Bool) in
            if s.closed { return (nil, .closed, false) }
            if let c = s.connection, let reason = c.failure {
                // `.never`: lost for good, also in the instant before the reader reported it.
                if policy == .never { return (nil, s.lost ?? reason, false) }
            } else if let c = s.connection {
                return (c, nil, false)
            }
            if let lost = s.lost { return (nil, lost, false) }
            return (nil, nil, !s.connectedBefore)
        }
        if let live { return live }
        if let failure { throw failure }
        // One caller connects; the others (a burst of first calls) wait for its connection.
        let task = reconnecting.withLock { running in
            if let running { return running }
            let task = Task { try await self.connectWithBackoff(first: first) }
            running = task
            return task
        }
        defer { reconnecting.withLock { if $0 == task { $0 = nil } } }
        return try await task.value
    }

    /// The synchronous first connect behind ``StrapStore/connect()``.
    func connectIfNeeded() throws(StrapKitError) {
        let (open, failure) = state.withLock { s -> (Bool, StrapKitError?) in
            if s.closed { return (false, .closed) }
            if let c = s.connection {
                if c.isOpen { return (true, nil) }
                if policy == .never { return (false, s.lost ?? c.failure) }
            }
            if let lost = s.lost { return (false, lost) }
            return (false, nil)
        }
        if let failure { throw failure }
        if !open { _ = try connectNow() }
    }

    private func connectNow() throws(StrapKitError) -> Connection {
        if let open = state.withLock({ s in s.connection.flatMap { $0.isOpen ? $0 : nil } }) { return open }
        let connection = try Connection.open(path: path, executor: executor) { [weak self] closed, reason in self?.lost(closed, reason) }
        enum Outcome { case closed, existing(Connection), installed(reconnect: Bool) }
        let outcome = state.withLock { s -> Outcome in
            if s.closed { return .closed }
            // A caller that raced past the single flight connected meanwhile: keep one.
            if let c = s.connection, c.isOpen { return .existing(c) }
            defer { s.connection = connection; s.connectedBefore = true }
            return .installed(reconnect: s.connectedBefore)
        }
        switch outcome {
        case .closed:
            connection.close()
            throw .closed
        case .existing(let c):
            connection.close()
            return c
        case .installed(let reconnect):
            events.yield(.connected(reconnect: reconnect))
            return connection
        }
    }

    private func connectWithBackoff(first: Bool) async throws -> Connection {
        guard case let .backoff(initial, maximum, attempts) = policy else { return try connectNow() }
        var delay = first ? 0 : initial
        var attempt = 1
        while true {
            if delay > 0 {
                events.yield(.reconnecting(attempt: attempt, delay: delay))
                try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            }
            do {
                return try connectNow()
            } catch .closed {
                throw StrapKitError.closed
            } catch {
                if let attempts, attempt >= attempts { throw error }
                attempt += 1
                delay = min(max(delay * 2, initial), maximum)
            }
        }
    }

    private func lost(_ connection: Connection, _ reason: StrapKitError) {
        let report = state.withLock { s -> Bool in
            // A duplicate closed by connectNow was never the store's connection.
            guard s.connection === connection, !s.closed else { return false }
            if policy == .never { s.lost = reason }
            return true
        }
        if report { events.yield(.lost(reason)) }
    }
}
