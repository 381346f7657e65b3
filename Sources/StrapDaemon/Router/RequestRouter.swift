import Dispatch
import Glibc
import StrapModel
import StrapOS
import StrapSystem
import StrapWire
import Synchronization

/// The socket protocol (docs/protocol.md) over a `DaemonContext`: parses each line,
/// authorises it against the connection's grants, dispatches to the operation's handler and
/// writes replies and stream events.
///
/// Threading: everything here except `worker` runs on the server's queue (the queue of every
/// `Connection`), where the sessions live. Store calls and other blocking work hop to
/// `worker` and their replies hop back to `connection.queue`.
public final class RequestRouter: ConnectionHandler, @unchecked Sendable {
    public struct Configuration: Sendable {
        /// A reply larger than this is cut (queries say `truncated`, anchored pages end early
        /// with an anchor to continue from), so it always fits the client's output buffer.
        public var maximumReplyBytes: Int
        /// Page size of the follow phase of `samples.anchored`.
        public var followPageLimit: Int
        public var defaultScanTimeout: Double
        public var maximumScanTimeout: Double
        /// Requests of one connection being worked on at once; more are answered `busy`, so a
        /// client pipelining thousands of queries cannot queue unbounded work and replies.
        public var maximumPendingRequests: Int
        /// How often a followed `statistics.collection` may send an update (and the clock and
        /// timer it waits on: tests drive them).
        public var statisticsPacing: UpdatePacing = .live

        public init(maximumReplyBytes: Int = 2 << 20, followPageLimit: Int = 256,
                    defaultScanTimeout: Double = 10, maximumScanTimeout: Double = 300,
                    maximumPendingRequests: Int = 32) {
            self.maximumReplyBytes = maximumReplyBytes
            self.followPageLimit = followPageLimit
            self.maximumPendingRequests = maximumPendingRequests
            self.defaultScanTimeout = defaultScanTimeout
            self.maximumScanTimeout = maximumScanTimeout
        }
    }

    let context: DaemonContext
    let configuration: Configuration
    let logger: Logger?
    /// Requests, follow pages and exports. Default QoS, like every queue of the daemon (see
    /// `HeavyScheduler` for why); heavy requests are bounded by `heavyScheduler` instead.
    let worker = DispatchQueue(label: "strapd.router.worker", attributes: .concurrent)
    /// Confined to the server queue.
    private var heavyScheduler: HeavyScheduler?
    let fanout: LiveFanout
    let follow: FollowEngine
    /// One discovery at a time, across all clients: BlueZ has one adapter-wide discovery.
    let scanning = Atomic<Bool>(false)
    /// Confined to the server queue.
    private var sessions: [UInt64: ClientSession] = [:]

    public init(context: DaemonContext, configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.context = context
        self.configuration = configuration
        self.logger = logger
        self.fanout = LiveFanout(hub: context.live)
        self.follow = FollowEngine(store: context.store)
    }

    /// Daemon shutdown (SIGTERM): stops live delivery, gives every open stream a final
    /// `shutdown` event, and lets each connection close once its output is written.
    /// `queue` is the server's queue, where the sessions live.
    public func shutdown(on queue: DispatchQueue) {
        fanout.detach()
        queue.sync {
            for session in sessions.values {
                for (id, stream) in session.streams {
                    stream.cancel(notify: false)
                    session.connection.write(Reply.event(id: id, kind: "shutdown", data: [:]))
                }
                session.streams.removeAll()
                session.inputEnded = true
                finishIfIdle(session)
            }
        }
        follow.stop()
    }

    /// Open connections and live subscriptions, for `status` (on the server queue).
    var clientCount: Int { sessions.count }
    /// Open `samples.anchored` and `statistics.collection` streams with `follow` (on the
    /// server queue, like `sessions`).
    var followerCount: Int {
        sessions.values.reduce(0) { n, session in
            n + session.streams.values.count { $0 is FollowStream || $0 is StatisticsFollowStream }
        }
    }

    public var liveSubscriberCount: Int { fanout.count }

    /// Heavy requests waiting behind their connection's running one (on the server queue).
    var queuedHeavyRequests: Int { sessions.values.reduce(0) { $0 + $1.heavyWaiting.count } }

    /// Bytes queued per open connection (on the server queue): the bound slow clients are held to.
    var bufferedOutput: [UInt64: Int] { sessions.mapValues { $0.connection.bufferedOutputCount } }

    // MARK: - ConnectionHandler

    public func connectionOpened(_ connection: Connection) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        sessions[connection.id] = ClientSession(connection: connection, grants: context.access.grants(for: connection.peer))
    }

    public func connection(_ connection: Connection, received line: [UInt8]) {
        guard let session = sessions[connection.id] else { return }
        let request: Request
        do {
            request = try Request.parse(line: line)
        } catch {
            connection.write(Reply.failure(error))
            return
        }
        handle(request, in: session)
    }

    /// The client shut down its write side. Its streams end now (with `cancelled`): reading
    /// has stopped, so a peer that closed completely would otherwise only be noticed at the
    /// next write, and a quiet stream might never write. Pending replies are still sent.
    public func connectionInputEnded(_ connection: Connection) {
        guard let session = sessions[connection.id] else { return connection.finish() }
        session.inputEnded = true
        let streams = session.streams
        session.streams.removeAll()
        for stream in streams.values { stream.cancel(notify: true) }
        finishIfIdle(session)
    }

    public func connectionOutputDrained(_ connection: Connection) {
        guard let session = sessions[connection.id] else { return }
        for stream in Array(session.streams.values) { stream.outputDrained() }
    }

    public func connectionClosed(_ connection: Connection, reason: CloseReason) {
        guard let session = sessions.removeValue(forKey: connection.id) else { return }
        session.closed = true
        // Nobody will read their replies: heavy requests not yet started are dropped.
        session.heavyWaiting.removeAll()
        let streams = session.streams
        session.streams.removeAll()
        for stream in streams.values { stream.cancel(notify: false) }
    }

    public func serverAcceptFailed(_ error: SystemCallError) {
        logger?.warning("accept failed: \(error); new clients wait, retried every 100 ms (logged once until accepting works again)")
    }

    public func serverAcceptRecovered(from error: SystemCallError, failures: Int, seconds: Double) {
        logger?.notice("accepting clients again after \(failures) failed accepts over \((seconds * 10).rounded() / 10) s (\(error.errno.text))")
    }

    // MARK: - Dispatch

    func handle(_ request: Request, in session: ClientSession) {
        guard let operation = Operation.table[request.op] else {
            session.connection.write(Reply.failure(id: request.id, error: WireError(.unknownOp,
                "unknown operation \"\(request.op)\"")))
            return
        }
        if let refusal = operation.refusal(request.op, for: session.grants) {
            session.connection.write(Reply.failure(id: request.id, error: refusal))
            return
        }
        if session.pendingReplies >= configuration.maximumPendingRequests {
            session.connection.write(Reply.failure(id: request.id, error: WireError(.busy,
                "\(session.pendingReplies) requests of this connection are still being answered; wait for their replies")))
            return
        }
        if request.op != "cancel", session.streams[request.id] != nil {
            session.connection.write(Reply.failure(id: request.id, error: .bad("id \(request.id) is in use by an open stream")))
            return
        }
        do {
            try operation.run(self, request, session)
        } catch {
            session.connection.write(Reply.failure(id: request.id, error: error))
        }
    }

    /// Runs `work` on the worker queue and writes what it returns (or its error) back on the
    /// connection's queue. The request counts as pending until then, so a half-closed client
    /// still gets every reply before the connection finishes.
    func respond(_ request: Request, _ session: ClientSession, _ work: @escaping @Sendable () throws(WireError) -> [UInt8]) {
        session.pendingReplies += 1
        let id = request.id
        run(request.op, in: session) { [self] in
            let bytes: [UInt8]
            do throws(WireError) { bytes = try work() } catch { bytes = Reply.failure(id: id, error: error) }
            return { [self] in
                session.pendingReplies -= 1
                write(bytes, id: id, to: session)
                finishIfIdle(session)
            }
        }
    }

    /// Operations that scan the store: one such request may take tens of milliseconds of CPU.
    static let heavyOperations: Set<String> = ["samples.query", "samples.anchored", "samples.delete", "statistics.query",
                                               "statistics.collection", "workout.hrv", "workout.list", "workout.export"]

    /// Runs `work` off the server queue and its completion back on it. Requests that scan the
    /// store go through `heavy` (one per connection, connections in turn, fewer at once than
    /// cores); the rest run at once.
    func run(_ op: String, in session: ClientSession, _ work: @escaping @Sendable () -> @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(session.connection.queue))
        guard Self.heavyOperations.contains(op) else {
            worker.async { let done = work(); session.connection.queue.async(execute: done) }
            return
        }
        heavy(on: session.connection.queue).submit(work, for: session)
    }

    /// Created on first use: the server queue is known only once a connection exists.
    private func heavy(on queue: DispatchQueue) -> HeavyScheduler {
        if let heavyScheduler { return heavyScheduler }
        let s = HeavyScheduler(worker: worker, serverQueue: queue, limit: sysconf(Int32(_SC_NPROCESSORS_ONLN)) - 1)
        heavyScheduler = s
        return s
    }

    /// Like `respond`, for completion-based work (device operations).
    func respondLater(_ request: Request, _ session: ClientSession) -> @Sendable ([UInt8]) -> Void {
        session.pendingReplies += 1
        let id = request.id
        return { [self] bytes in
            session.connection.queue.async { [self] in
                session.pendingReplies -= 1
                write(bytes, id: id, to: session)
                finishIfIdle(session)
            }
        }
    }

    /// Bytes one line (reply or stream event) may take on this connection: the configured cut,
    /// or less when the client buffer is small (strapd.conf allows 64K).
    func lineBudget(_ session: ClientSession) -> Int {
        min(configuration.maximumReplyBytes, session.connection.guaranteedWrite)
    }

    /// Bytes the `result` object of a reply to `id` may take: the line budget less the
    /// envelope, the echoed id (up to 256 bytes) and room for the result's closing members.
    func resultBudget(_ id: RequestID, _ session: ClientSession) -> Int {
        lineBudget(session) - Reply.success(id: id, resultJSON: []).count - Self.closingReserve
    }

    /// What a cut result appends after its last item (`],"count":N,"truncated":true,…}`).
    static let closingReserve = 128

    /// Writes one reply; one that does not fit the buffer right now becomes `busy`.
    func write(_ bytes: [UInt8], id: RequestID, to session: ClientSession) {
        if session.connection.write(bytes) == .rejected {
            session.connection.write(Reply.failure(id: id, error: WireError(.busy,
                "the reply (\(bytes.count) bytes) does not fit the connection's output buffer now; read what is queued or ask for less")))
        }
    }

    /// Registers a stream with its connection; false (and the stream cancelled) when the
    /// connection is already gone. A client that sends a request and closes at once is
    /// closed by the very write of its `ok` (EPIPE), before the stream exists: a stream
    /// registered then would never be cancelled and would stay subscribed for good.
    @discardableResult
    func streamStarted(_ stream: RouterStream, id: RequestID, in session: ClientSession) -> Bool {
        dispatchPrecondition(condition: .onQueue(session.connection.queue))
        guard !session.closed else {
            stream.cancel(notify: false)
            return false
        }
        session.streams[id] = stream
        return true
    }

    /// A stream ended by itself (scan finished, follow failed); on the server queue.
    func streamEnded(id: RequestID, in session: ClientSession, stream: RouterStream) {
        dispatchPrecondition(condition: .onQueue(session.connection.queue))
        if session.streams[id] === stream { session.streams[id] = nil }
        finishIfIdle(session)
    }

    /// After a half-close: close once every request read is answered.
    func finishIfIdle(_ session: ClientSession) {
        if session.inputEnded, session.pendingReplies == 0, session.streams.isEmpty {
            session.connection.finish()
        }
    }
}

/// What a stream-starting request leaves behind; the router ends it on `cancel` or disconnect.
protocol RouterStream: AnyObject {
    /// On the server queue. `notify`: write the final `cancelled` event (a `cancel` request);
    /// false when the connection is gone.
    func cancel(notify: Bool)
    /// The connection's output fell back below the low-water mark.
    func outputDrained()
}

/// One connection's protocol state. Confined to the server queue.
final class ClientSession: @unchecked Sendable {
    let connection: Connection
    let grants: Grants
    var streams: [RequestID: RouterStream] = [:]
    var pendingReplies = 0
    var inputEnded = false
    /// The connection closed; its streams were cancelled and no new one may start.
    var closed = false
    /// Heavy requests of this connection (see `RequestRouter.run`).
    var heavyRunning = false
    var heavyWaiting: [@Sendable () -> @Sendable () -> Void] = []

    init(connection: Connection, grants: Grants) {
        self.connection = connection
        self.grants = grants
    }
}
