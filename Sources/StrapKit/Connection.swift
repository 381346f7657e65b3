import CShims
import Glibc
import StrapOS
import StrapWire
import Synchronization

/// One socket to strapd: requests written under a lock, and a reader thread that matches every
/// reply and stream event to its request by id (replies to pipelined requests come out of order,
/// docs/protocol.md *Replies*). The reader thread blocks in `read`, so an idle connection costs
/// no wake-up; it alone closes the descriptor, after taking the write lock, so a writer never
/// sends on a number the system has handed out again.
final class Connection: Sendable {
    typealias Events = AsyncThrowingStream<[WireEvent], any Error>

    /// Requests of one connection the daemon works on at once is 32 (more are `busy`); one is
    /// kept free for the `cancel` of a stream.
    static let window = 31

    struct Entry {
        /// The caller waiting for the `ok`/failure reply; nil once answered or given up.
        var reply: CheckedContinuation<Body, any Error>?
        /// Where a stream's events go; nil for one-shot requests and after the consumer left.
        var events: Events.Continuation?
        var holdsSlot = true
        var isStream = false
        /// Results and events are handed over as bytes, not parsed.
        var raw = false
    }

    struct State {
        var entries: [Int64: Entry] = [:]
        var failure: StrapKitError?
        var inFlight = 0
        var slotWaiters: [CheckedContinuation<Void, any Error>] = []
        /// A failure the daemon sent with id null (`busy` right after accept): why it closes.
        var unattributed: String?
    }

    let path: String
    private let fd: FileDescriptor
    private let state = Mutex(State())
    /// Whether `fd` is still open; held across each send.
    private let writer = Mutex(true)

    private init(path: String, fd: FileDescriptor) {
        self.path = path
        self.fd = fd
    }

    /// Connects (blocking; a unix socket connects at once or fails) and starts the reader.
    /// `onClose` runs once, on the reader thread, with why the connection ended.
    static func open(path: String, executor: ReaderExecutor? = nil, onClose: @escaping @Sendable (Connection, StrapKitError) -> Void) throws(StrapKitError) -> Connection {
        let raw = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw .cannotConnect(path: path, reason: "socket: \(Errno.current)") }
        var result: CInt
        repeat { result = cshims_unix_connect(raw, path) } while result != 0 && Errno.current == .interrupted
        if result != 0 {
            let error = Errno.current
            Glibc.close(raw)
            let reason = switch error {
            case .noSuchFile, .connectionRefused, .notDirectory: "strapd is not running (\(error.text))"
            case .permissionDenied, .notPermitted: "permission denied (\(error.text))"
            default: error.description
            }
            throw .cannotConnect(path: path, reason: reason)
        }
        let connection = Connection(path: path, fd: FileDescriptor(rawValue: raw))
        guard DetachedThread.spawn(name: "strapkit-read", { connection.readLoop(executor: executor, onClose: onClose) }) else {
            Glibc.close(raw)
            throw .cannotConnect(path: path, reason: "no thread for the reader")
        }
        return connection
    }

    var isOpen: Bool { state.withLock { $0.failure == nil } }

    /// Why the connection ended; nil while it is open.
    var failure: StrapKitError? { state.withLock { $0.failure } }

    /// Requests and streams still waiting for something (tests check that none are left).
    var outstanding: Int { state.withLock { $0.entries.count + $0.slotWaiters.count } }

    // MARK: requests

    /// Sends one request and returns its `result`; a failure reply throws its ``StrapKitError``.
    /// A cancelled caller stops waiting; the reply is then read and dropped.
    func call(id: Int64, op: String, params: JSONObject, raw: Bool = false) async throws -> Body {
        // A task cancelled already sends nothing (its cancellation handler would run before
        // the request is registered, and it would wait for the reply after all).
        try Task.checkCancellation()
        try await acquireSlot()
        let line = Self.line(id: id, op: op, params: params)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reply: CheckedContinuation<Body, any Error>) in
                register(id: id, Entry(reply: reply, raw: raw), line: line)
            }
        } onCancel: {
            let waiting = state.withLock { s in
                defer { s.entries[id]?.reply = nil }
                return s.entries[id]?.reply
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Opens a stream: its first reply's `result` and its events, in batches as they were read.
    /// Ending the iteration of the events (or cancelling the task iterating them) sends `cancel`.
    func openStream(id: Int64, op: String, params: JSONObject, raw: Bool = false) async throws -> (Body, Events) {
        try await acquireSlot()
        let (events, continuation) = Events.makeStream()
        continuation.onTermination = { [weak self] termination in
            if case .cancelled = termination { self?.cancelStream(id) }
        }
        let line = Self.line(id: id, op: op, params: params)
        let first = try await withCheckedThrowingContinuation { (reply: CheckedContinuation<Body, any Error>) in
            register(id: id, Entry(reply: reply, events: continuation, isStream: true, raw: raw), line: line)
        }
        return (first, events)
    }

    private func register(id: Int64, _ entry: Entry, line: [UInt8]) {
        let failure = state.withLock { s -> StrapKitError? in
            if let f = s.failure { return f }
            s.entries[id] = entry
            return nil
        }
        if let failure {
            releaseSlot()
            entry.events?.finish(throwing: failure)
            entry.reply?.resume(throwing: failure)
            return
        }
        do {
            try write(line)
        } catch {
            // The reader sees the broken socket too and fails every entry, this one included.
            shutdownSocket()
        }
    }

    /// Ends a stream on the daemon's side; its entry stays until the `cancelled` event (or the
    /// stream's own end), so the daemon's last words are still read and dropped — or, with
    /// `keepEvents`, still delivered, ending with the `cancelled` event.
    func cancelStream(_ id: Int64, keepEvents: Bool = false) {
        let send = state.withLock { s -> Bool in
            guard s.failure == nil, s.entries[id] != nil else { return false }
            if !keepEvents { s.entries[id]!.events = nil }
            return true
        }
        if send { try? write(Self.line(id: id, op: "cancel", params: [:])) }
    }

    /// Ends the connection; everything outstanding fails with `reason`.
    func close(reason: StrapKitError = .closed) {
        state.withLock { s in if s.failure == nil { s.failure = reason } }
        shutdownSocket()
    }

    private func shutdownSocket() {
        writer.withLock { open in if open { _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR)) } }
    }

    private func write(_ bytes: [UInt8]) throws(StrapKitError) {
        let failure = writer.withLock { open -> StrapKitError? in
            guard open else { return .connectionLost("the connection is closed") }
            return bytes.withUnsafeBytes { buffer -> StrapKitError? in
                var done = 0
                while done < buffer.count {
                    do {
                        switch try Syscalls.live.send(fd, from: UnsafeRawBufferPointer(rebasing: buffer[done...])) {
                        case .processed(let n): done += n
                        case .wouldBlock: continue
                        }
                    } catch {
                        return .connectionLost("\(error)")
                    }
                }
                return nil
            }
        }
        if let failure { throw failure }
    }

    static func line(id: Int64, op: String, params: JSONObject) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        out.append(contentsOf: #"{"id":"#.utf8)
        out.append(contentsOf: String(id).utf8)
        out.append(contentsOf: #","op":"#.utf8)
        JSONWriter.writeString(op, into: &out)
        for (key, value) in params.entries {
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    // MARK: the window

    private func acquireSlot() async throws {
        try await withCheckedThrowingContinuation { (go: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { s -> Result<Bool, StrapKitError> in
                if let f = s.failure { return .failure(f) }
                if s.inFlight < Self.window { s.inFlight += 1; return .success(true) }
                s.slotWaiters.append(go)
                return .success(false)
            }
            switch outcome {
            case .failure(let f): go.resume(throwing: f)
            case .success(true): go.resume()
            case .success(false): break
            }
        }
    }

    private func releaseSlot() {
        let next = state.withLock { s -> CheckedContinuation<Void, any Error>? in
            guard !s.slotWaiters.isEmpty else { s.inFlight -= 1; return nil }
            return s.slotWaiters.removeFirst()
        }
        next?.resume()
    }

    // MARK: the reader

    private func readLoop(executor: ReaderExecutor?, onClose: @Sendable (Connection, StrapKitError) -> Void) {
        // Server lines stay below 2 MiB (docs/protocol.md *Size*); the margin costs nothing.
        var decoder = LineDecoder(maximumLineLength: 4 << 20)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        // Driving the store's executor, the thread sleeps in poll (the socket and the
        // executor's wake-up pipe) instead of read, and runs the jobs its reads resumed right away.
        let driving = executor?.adopt() == true ? executor : nil
        let polled = UnsafeMutablePointer<pollfd>.allocate(capacity: 2)
        defer { polled.deallocate() }
        var reason: StrapKitError?
        var batches: [Int64: [WireEvent]] = [:]
        while reason == nil {
            if let driving {
                polled[0] = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
                polled[1] = pollfd(fd: driving.wake, events: Int16(POLLIN), revents: 0)
                if poll(polled, 2, -1) < 0 {
                    if Errno.current == .interrupted { continue }
                    reason = .connectionLost("poll: \(Errno.current)")
                    break
                }
                if polled[1].revents != 0 { driving.runJobs(woken: true) }
                if polled[0].revents == 0 { continue }
            }
            let n = Glibc.read(fd.rawValue, chunk.baseAddress, chunk.count)
            if n < 0 {
                if Errno.current == .interrupted { continue }
                reason = .connectionLost("read: \(Errno.current)")
                break
            }
            if n == 0 {
                reason = .connectionLost(state.withLock { $0.unattributed } ?? "strapd closed the connection")
                break
            }
            decoder.feed(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            while let output = decoder.next() {
                guard case .line(let line) = output else {
                    reason = .malformedReply("a line longer than \(decoder.maximumLineLength) bytes")
                    break
                }
                do {
                    try dispatch(line, batches: &batches)
                } catch {
                    reason = error
                    break
                }
            }
            flush(&batches)
            driving?.runJobs(woken: false)
        }
        writer.withLock { open in
            open = false
            Glibc.close(fd.rawValue)
        }
        let final = state.withLock { s -> StrapKitError in
            if s.failure == nil { s.failure = reason }
            return s.failure!
        }
        failEverything(with: final)
        driving?.runJobs(woken: false)
        driving?.resign()
        onClose(self, final)
    }

    private func failEverything(with error: StrapKitError) {
        let (entries, waiters) = state.withLock { s in
            defer { s.entries = [:]; s.slotWaiters = [] }
            return (Array(s.entries.values), s.slotWaiters)
        }
        for entry in entries {
            entry.reply?.resume(throwing: error)
            entry.events?.finish(throwing: error)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    private func dispatch(_ line: [UInt8], batches: inout [Int64: [WireEvent]]) throws(StrapKitError) {
        // strapd writes `{"id":N,"ok":true,"result":…}` and `{"id":N,"event":"kind","data":…}`
        // with the members in that order (StrapWire's Reply): those are routed on the prefix,
        // and only the value is parsed (or not at all, for a raw entry). Anything else
        // (failures, ids as strings) goes through the whole parse.
        if let prefix = LinePrefix(line) {
            let raw = state.withLock { $0.entries[prefix.id]?.raw ?? false }
            let range = prefix.valueStart..<(line.count - 1)
            let body: Body
            if raw {
                body = .bytes(line, range)
            } else {
                guard case .object(let o)? = try? JSONParser.parse(line[range]) else {
                    throw .malformedReply(String(decoding: line.prefix(200), as: UTF8.self))
                }
                body = .object(o)
            }
            if let kind = prefix.eventKind {
                event(prefix.id, kind: kind, body: body, batches: &batches)
            } else {
                answer(prefix.id, .success(body))
            }
            return
        }
        let message: JSONObject
        do {
            guard case .object(let o) = try JSONParser.parse(line) else { throw StrapKitError.malformedReply("not an object") }
            message = o
        } catch {
            throw .malformedReply("\(error): \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
        guard case .int(let id)? = message["id"] else {
            if case .object(let e)? = message["error"] {
                state.withLock { $0.unattributed = StrapKitError(wire: e).description }
            }
            return
        }
        if case .string(let kind)? = message["event"] {
            event(id, kind: kind, body: .object(message.object("data") ?? [:]), batches: &batches)
            return
        }
        switch message["ok"] {
        case .bool(true)?: answer(id, .success(.object(message.object("result") ?? [:])))
        case .bool(false)?:
            answer(id, .failure(message.object("error").map(StrapKitError.init(wire:)) ?? .malformedReply("a failure without error")))
        default: throw .malformedReply("a message that is neither a reply nor an event")
        }
    }

    private func event(_ id: Int64, kind: String, body: Body, batches: inout [Int64: [WireEvent]]) {
        switch kind {
        case "error", "shutdown":
            flush(&batches, only: id)
            let data = (try? body.object()) ?? [:]
            end(stream: id, throwing: kind == "shutdown" ? .shuttingDown : StrapKitError(wire: data))
        case "cancelled", "finished":
            batches[id, default: []].append(WireEvent(kind: kind, body: body))
            flush(&batches, only: id)
            end(stream: id, throwing: nil)
        default:
            batches[id, default: []].append(WireEvent(kind: kind, body: body))
        }
    }

    private func answer(_ id: Int64, _ outcome: Result<Body, StrapKitError>) {
        let (entry, release) = state.withLock { s -> (Entry?, Bool) in
            guard var e = s.entries[id] else { return (nil, false) }
            let release = e.holdsSlot
            e.holdsSlot = false
            let reply = e.reply
            e.reply = nil
            if !e.isStream || outcome.isFailure { s.entries[id] = nil } else { s.entries[id] = e }
            var answered = e
            answered.reply = reply
            return (answered, release)
        }
        if release { releaseSlot() }
        guard let entry else { return }
        switch outcome {
        case .success(let result): entry.reply?.resume(returning: result)
        case .failure(let error):
            entry.reply?.resume(throwing: error)
            entry.events?.finish(throwing: error)
        }
    }

    private func end(stream id: Int64, throwing error: StrapKitError?) {
        let entry = state.withLock { s in
            defer { s.entries[id] = nil }
            return s.entries[id]
        }
        if let error { entry?.events?.finish(throwing: error) } else { entry?.events?.finish() }
    }

    private func flush(_ batches: inout [Int64: [WireEvent]], only id: Int64? = nil) {
        guard !batches.isEmpty else { return }
        let ids = id.map { [$0] } ?? Array(batches.keys)
        for id in ids {
            guard let batch = batches.removeValue(forKey: id) else { continue }
            let sink = state.withLock { $0.entries[id]?.events }
            sink?.yield(batch)
        }
    }
}

extension Result {
    var isFailure: Bool { if case .failure = self { true } else { false } }
}
