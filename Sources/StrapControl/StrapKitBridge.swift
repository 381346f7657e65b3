import Glibc
import StrapKit
import StrapOS
import StrapWire
import Synchronization

/// strapctl is a synchronous command line over StrapKit's async client: each command's calls
/// and streams run as tasks on one thread of strapctl's own (`BridgeExecutor`), and what they
/// produce lands in a `Mailbox` the command reads, blocking, with a timeout, or `poll`s next to
/// the Ctrl-C descriptor. Replies and events keep the protocol's shape (`{"id":1,"ok":true,
/// "result":…}`, `{"id":1,"event":…,"data":…}`), so `--json` still prints what strapd said.
/// There is no socket code here: the connection is StrapKit's.
final class DaemonConnection {
    static let defaultSocket = StrapStore.defaultSocket

    let path: String
    private let store: StrapStore
    private let mailbox: Mailbox
    /// The open stream, for `cancelStream` (set by the task that opened it).
    private let stream = StreamSlot()
    /// How long a read waits before `timedOut`; nil waits as long as it takes.
    private var timeout: Double?

    /// Connects at once, so a missing daemon or a refused permission is reported before
    /// anything is sent.
    init(path: String, timeout: Double? = nil) throws(ClientError) {
        self.path = path
        self.timeout = timeout
        mailbox = try Mailbox()
        store = StrapStore(socket: path, reconnect: .never)
        do {
            try store.connect()
        } catch {
            if error.isPermissionDenied { throw .permissionDenied(path) }
            if error.isDaemonNotRunning { throw .notRunning(path) }
            throw .io(error.description)
        }
    }

    deinit { store.close() }

    func setTimeout(_ seconds: Double) { timeout = seconds }

    /// Sends a request and returns its first reply (`ok` and `result`, or `error`). With
    /// `stream`, the request opens a stream: its events follow through `readMessage`, which
    /// returns nil after the last.
    func call(_ request: JSONObject, stream: Bool = false) throws(ClientError) -> JSONObject {
        send(request, stream: stream)
        return try reply()
    }

    /// Sends a request (with `stream`, one that opens a stream); its reply, and the stream's
    /// events, come through `readMessage`.
    func send(_ request: JSONObject, stream opensStream: Bool = false) {
        let (id, op, params) = Self.split(request)
        let store = store
        let mailbox = mailbox
        let slot = stream
        BridgeExecutor.shared.start {
            if opensStream {
                await DaemonConnection.stream(store, mailbox, slot, id, op, params)
            } else {
                await DaemonConnection.request(store, mailbox, id, op, params)
            }
        }
    }

    private static func request(_ store: StrapStore, _ mailbox: Mailbox, _ id: JSONValue, _ op: String, _ params: JSONObject) async {
        do {
            let result = try await store.request(op, params)
            mailbox.post(.message(ok(id, result)))
        } catch {
            mailbox.post(failedReply(id, error))
        }
    }

    private static func stream(_ store: StrapStore, _ mailbox: Mailbox, _ slot: StreamSlot, _ id: JSONValue, _ op: String,
                               _ params: JSONObject) async {
        let events: RawEventStream
        do {
            let (result, opened) = try await store.rawStream(op, params)
            events = opened
            slot.set(opened)
            mailbox.post(.message(ok(id, result)))
        } catch {
            mailbox.post(failedReply(id, error))
            mailbox.post(.end)
            return
        }
        do {
            for try await event in events {
                mailbox.post(.message(["id": id, "event": .string(event.kind), "data": .object(event.data)]))
            }
        } catch let error as StrapKitError {
            // The stream's last words as strapd sent them: an `error` or `shutdown` event.
            if error == .shuttingDown {
                mailbox.post(.message(["id": id, "event": .string("shutdown"), "data": .object([:])]))
            } else if let data = errorObject(error) {
                mailbox.post(.message(["id": id, "event": .string("error"), "data": .object(data)]))
            }
        } catch {}
        mailbox.post(.end)
    }

    /// Asks strapd to end the open stream; its events go on up to `cancelled`.
    func cancelStream() {
        stream.get()?.cancel()
    }

    /// The next reply or event; nil once the connection or the stream has ended.
    func readMessage() throws(ClientError) -> JSONObject? {
        switch try mailbox.take(timeout: timeout) {
        case .message(let m): return m
        case .end: return nil
        case .failure(let e): throw e
        }
    }

    /// Whether a message is waiting: `readMessage` returns without waiting.
    var hasBufferedLine: Bool { mailbox.hasItems }

    /// Readable while a message waits, for `poll` (commands that watch several streams at once).
    var descriptor: Int32 { mailbox.descriptor }

    /// The descriptors among `fds` that are readable (or hung up) within `milliseconds`
    /// (-1: wait as long as it takes).
    static func readable(_ fds: [Int32], milliseconds: Int32) -> Set<Int32> {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let n = polled.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard n > 0 else { return [] }
        return Set(polled.filter { $0.revents != 0 }.map(\.fd))
    }

    private func reply() throws(ClientError) -> JSONObject {
        while true {
            guard let message = try readMessage() else { throw .closed }
            if message["ok"] != nil { return message }
        }
    }

    private static func split(_ request: JSONObject) -> (JSONValue, String, JSONObject) {
        var params = JSONObject()
        for (key, value) in request.entries where key != "id" && key != "op" { params[key] = value }
        return (request["id"] ?? .int(1), request.string("op") ?? "", params)
    }

    private static func ok(_ id: JSONValue, _ result: JSONObject) -> JSONObject {
        ["id": id, "ok": .bool(true), "result": .object(result)]
    }

    /// A daemon error as the protocol's `error` object (code, message, and the anchors some carry).
    private static func errorObject(_ error: StrapKitError) -> JSONObject? {
        guard let code = error.code else { return nil }
        var object: JSONObject = ["code": .string(code.rawValue)]
        switch error {
        case .badRequest(let m), .unknownOp(let m), .notAuthorized(let m), .notFound(let m), .noData(let m),
             .invalidOption(let m), .invalidTransition(let m), .busy(let m), .unavailable(let m), .internal(let m):
            object["message"] = .string(m)
        case let .anchorExpired(oldest, m):
            object["message"] = .string(m)
            if let oldest { object["data"] = .object(["oldestAnchor": .int(Int64(oldest))]) }
        case let .anchorAhead(latest, m):
            object["message"] = .string(m)
            if let latest { object["data"] = .object(["latestAnchor": .int(Int64(latest))]) }
        default: break
        }
        return object
    }

    /// What a failed request leaves in the mailbox: the daemon's `ok: false` reply, the end of
    /// the connection, or this side's failure.
    private static func failedReply(_ id: JSONValue, _ error: any Error) -> Mailbox.Item {
        guard let error = error as? StrapKitError else { return .failure(.io("\(error)")) }
        if let object = errorObject(error) { return .message(["id": id, "ok": .bool(false), "error": .object(object)]) }
        switch error {
        case .connectionLost, .closed: return .end
        case .shuttingDown: return .failure(.shuttingDown)
        case .malformedReply(let m): return .failure(.malformed(m))
        default: return .failure(.io(error.description))
        }
    }
}

/// The open stream of a connection, set by the task that opened it.
final class StreamSlot: Sendable {
    private let value = Mutex<RawEventStream?>(nil)
    func set(_ stream: RawEventStream) { value.withLock { $0 = stream } }
    func get() -> RawEventStream? { value.withLock { $0 } }
}

/// Replies and events waiting for the command, with a pipe that is readable while any wait.
final class Mailbox: Sendable {
    enum Item: Sendable {
        case message(JSONObject)
        case end
        case failure(ClientError)
    }

    private let queue = Mutex<[Item]>([])
    private let readEnd: Int32
    private let writeEnd: Int32

    init() throws(ClientError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .io("pipe: \(Errno.current)") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        (readEnd, writeEnd) = (fds[0], fds[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    var descriptor: Int32 { readEnd }
    var hasItems: Bool { queue.withLock { !$0.isEmpty } }

    func post(_ item: Item) {
        queue.withLock { items in
            if items.isEmpty {
                var byte: UInt8 = 1
                _ = write(writeEnd, &byte, 1)
            }
            items.append(item)
        }
    }

    /// The next item, waiting up to `timeout` seconds (nil: as long as it takes).
    func take(timeout: Double?) throws(ClientError) -> Item {
        let deadline = timeout.map { monotonicSeconds() + $0 }
        while true {
            if let item = pop() { return item }
            var milliseconds: Int32 = -1
            if let deadline {
                let left = deadline - monotonicSeconds()
                if left <= 0 { throw .timedOut }
                milliseconds = Int32(min(left * 1000, Double(Int32.max)).rounded(.up))
            }
            var pfd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, milliseconds)
        }
    }

    private func pop() -> Item? {
        queue.withLock { items in
            guard !items.isEmpty else { return nil }
            let item = items.removeFirst()
            if items.isEmpty {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(readEnd, &drain, drain.count) > 0 {}
            }
            return item
        }
    }

    private func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The one thread strapctl's StrapKit tasks run on. A command blocks its own thread while it
/// waits for the daemon; were the tasks on Swift's shared pool (two threads on a 2-core box),
/// commands blocking from the pool's threads (tests run them so) could starve the very tasks
/// they wait for. The tasks only route replies, so one thread is plenty.
final class BridgeExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = BridgeExecutor()

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []

    private init() {
        pthread_mutex_init(lock, nil)
        pthread_cond_init(wake, nil)
        let started = DetachedThread.spawn(name: "strapctl-kit") { [unowned self] in run() }
        precondition(started, "strapctl: no thread for StrapKit")
    }

    /// Runs `work` as a task on this thread.
    func start(_ work: @escaping @Sendable () async -> Void) {
        Task(executorPreference: self, operation: work)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(lock)
        jobs.append(job)
        pthread_cond_signal(wake)
        pthread_mutex_unlock(lock)
    }

    private func run() {
        while true {
            pthread_mutex_lock(lock)
            while jobs.isEmpty { pthread_cond_wait(wake, lock) }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            pthread_mutex_unlock(lock)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
