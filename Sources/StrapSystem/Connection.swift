import Dispatch
import Glibc
import StrapOS
import StrapWire

/// One accepted client. Confined to the server's serial queue: every method must be
/// called there (checked with `dispatchPrecondition`), which is what makes the
/// `@unchecked Sendable` sound.
public final class Connection: @unchecked Sendable {
    public enum WriteOutcome: Sendable, Equatable {
        case queued
        /// The bytes would push the buffer past `OutputLimits.hardLimit`; nothing was queued.
        case rejected
        /// The connection is finishing or closed; nothing was queued.
        case closed
    }

    private enum State { case open, finishing, closed }

    public let id: UInt64
    public let peer: PeerIdentity
    public let queue: DispatchQueue

    private let fd: FileDescriptor
    private let syscalls: Syscalls
    private let limits: OutputLimits
    private weak var server: UnixServer?
    private var decoder: LineDecoder
    private var output = OutputBuffer()
    /// Bytes a `WriteBatch` holds for this connection until its `send()`: set only while
    /// `output` is empty, so nothing can overtake them.
    private var held: [UInt8]?
    private var state = State.open
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var readSuspended = false
    private var writeSuspended = true
    /// The peer shut down its write side; reading never resumes after this.
    private var eofSeen = false
    private var inputEndReported = false
    private var aboveHighWater = false
    private var pendingCancels = 0

    init(id: UInt64, fd: FileDescriptor, peer: PeerIdentity, server: UnixServer, configuration: ServerConfiguration) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.queue = server.queue
        self.server = server
        self.syscalls = server.syscalls
        self.limits = configuration.outputLimits
        self.decoder = LineDecoder(maximumLineLength: configuration.maximumLineLength)
    }

    /// Bytes queued and not yet accepted by the kernel.
    public var bufferedOutputCount: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return output.count + (held?.count ?? 0)
    }

    /// True between the high-water and drained callbacks.
    public var isAboveHighWater: Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return aboveHighWater
    }

    /// The largest write that always fits while the connection is below its high-water mark
    /// (and so is reading requests): replies, pages and chunks are sized to this, so none can
    /// be refused for a size no amount of draining would make room for.
    public var guaranteedWrite: Int { limits.hardLimit - limits.highWater }

    public var isClosed: Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return state == .closed
    }

    /// Internal state for test failure messages.
    var diagnostics: String {
        "state=\(state) readSuspended=\(readSuspended) writeSuspended=\(writeSuspended) eof=\(eofSeen) " +
            "endReported=\(inputEndReported) above=\(aboveHighWater) out=\(output.count) in=\(decoder.bufferedByteCount)"
    }

    /// Queues one or more complete lines. Tries to send at once when nothing is queued.
    /// If the peer turns out to be gone, the connection closes right here and the
    /// handler's `connectionClosed` runs before this returns `.closed`.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> WriteOutcome {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state == .open else { return .closed }
        guard output.count + (held?.count ?? 0) + bytes.count <= limits.hardLimit else { return .rejected }
        if held != nil {
            // Behind bytes a batch has not sent yet: they go out with them, in order.
            held!.append(contentsOf: bytes)
            return .queued
        }
        output.append(bytes)
        flush(fromWrite: true)
        if state != .closed { checkHighWater() }
        return state == .closed ? .closed : .queued
    }

    /// As `write(_:)`, but when nothing is queued the bytes wait in `batch` and leave with
    /// the batch's other writes, from several threads (`WriteBatch`). `.queued` means the
    /// same as for `write(_:)`: accepted; a failure to send closes the connection later.
    @discardableResult
    public func write(_ bytes: [UInt8], in batch: inout WriteBatch) -> WriteOutcome {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state == .open, held == nil, output.isEmpty, !bytes.isEmpty else { return write(bytes) }
        guard bytes.count <= limits.hardLimit else { return .rejected }
        held = bytes
        batch.hold(self)
        return .queued
    }

    /// On the queue, as the batch starts sending: the held bytes and how to send them.
    func takeHeldForSend() -> HeldWrite? {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state != .closed, let bytes = held else { return nil }
        return HeldWrite(connection: self, fd: fd, syscalls: syscalls, bytes: bytes)
    }

    /// On the queue: the held bytes sent from this thread and settled, as `takeHeldForSend`
    /// and `finishHeld` would (a batch too small to share among threads).
    func sendHeldHere() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state != .closed, let bytes = held else { return }
        finishHeld(bytes, HeldWrite.send(bytes, fd: fd, syscalls: syscalls))
    }

    /// On the queue, after the batch's sends: what the kernel did not take is queued as
    /// `write(_:)` would have queued it.
    func finishHeld(_ bytes: [UInt8], _ outcome: SendOutcome) {
        dispatchPrecondition(condition: .onQueue(queue))
        held = nil
        guard state != .closed else { return }
        switch outcome {
        case .failed(let error):
            teardown(.failed(error))
        case .sent(let n) where n == bytes.count:
            if state == .finishing, output.isEmpty { teardown(.finished) }
        case .sent(let n):
            output.append(Array(bytes[n...]))
            armWriteSource()
            checkHighWater()
        }
    }

    /// Output just grew: at the high-water mark, stop reading requests and tell the handler.
    private func checkHighWater() {
        guard !aboveHighWater, output.count >= limits.highWater else { return }
        aboveHighWater = true
        pauseReading()
        server?.handler?.connectionOutputHighWater(self)
    }

    /// Sends what is queued, then closes. Further writes are refused.
    public func finish() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state == .open else { return }
        state = .finishing
        pauseReading()
        if output.isEmpty, held == nil { teardown(.finished) }
    }

    /// Closes now, discarding queued output.
    public func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        teardown(.closedByHandler)
    }

    // MARK: - Server side

    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        let source = DispatchSource.makeReadSource(fileDescriptor: fd.rawValue, queue: queue)
        source.setEventHandler { @Sendable [weak self] in self?.readable() }
        source.setCancelHandler { @Sendable in self.sourceCancelled() }
        readSource = source
        pendingCancels += 1
        source.resume()
    }

    func stop() { teardown(.serverStopped) }

    private func readable() {
        guard state == .open, !readSuspended, let server else { return }
        // A few reads per event, then yield so one busy client cannot starve the others;
        // the level-triggered source fires again while data is pending.
        for _ in 0..<4 {
            let outcome = server.scratch.withUnsafeMutableBytes { buf in
                Result { () throws(SystemCallError) -> IOResult in
                    let r = try syscalls.read(fd, into: buf)
                    if case .processed(let n) = r, n > 0 { decoder.feed(UnsafeRawBufferPointer(rebasing: buf[0..<n])) }
                    return r
                }
            }
            let result: IOResult
            switch outcome {
            case .success(let r): result = r
            case .failure(let error): teardown(.failed(error)); return
            }
            switch result {
            case .wouldBlock:
                return
            case .processed(0):
                eofSeen = true
                decoder.finish()
                // EOF keeps the source firing; stop watching input for good.
                pauseReading()
                deliverLines()
                return
            case .processed:
                deliverLines()
                if readSuspended || state != .open { return }
            }
        }
    }

    /// Hands decoded lines to the handler until the decoder is empty or output backs up.
    private func deliverLines() {
        while state == .open, !aboveHighWater, let item = decoder.next() {
            switch item {
            case .line(let line):
                server?.handler?.connection(self, received: line)
            case .oversized:
                let limit = decoder.maximumLineLength
                write(Reply.failure(id: nil, error: WireError(.badRequest, "request line longer than \(limit) bytes; skipped to the next newline")))
            }
        }
        if eofSeen, !inputEndReported, state == .open, !aboveHighWater, decoder.bufferedByteCount == 0 {
            inputEndReported = true
            server?.handler?.connectionInputEnded(self)
        }
    }

    /// Sends queued bytes until done or EAGAIN. From inside `write` (the handler's own
    /// call) the drained callback and the line delivery it triggers are deferred to a
    /// later turn of the queue, so the handler is never re-entered with the next request
    /// while it is still producing output for the current one.
    private func flush(fromWrite: Bool = false) {
        while !output.isEmpty {
            let outcome = output.withFirstChunk { chunk in
                Result { () throws(SystemCallError) -> IOResult in try syscalls.send(fd, from: chunk) }
            }
            switch outcome {
            case .success(.processed(let n))?:
                output.consume(n)
            case .success(.wouldBlock)?:
                armWriteSource()
                drained(deferred: fromWrite)  // may have crossed low water on the way
                return
            case .failure(let error)?:
                teardown(.failed(error))
                return
            case nil:
                return
            }
        }
        disarmWriteSource()
        drained(deferred: fromWrite)
    }

    private func drained(deferred: Bool) {
        if deferred {
            if aboveHighWater, output.count <= limits.lowWater {
                queue.async { [self] in if state != .closed { drained(deferred: false) } }
            }
            return
        }
        if aboveHighWater, output.count <= limits.lowWater {
            aboveHighWater = false
            server?.handler?.connectionOutputDrained(self)
            if state == .open {
                deliverLines()
                if !eofSeen, state == .open, !aboveHighWater { resumeReading() }
            }
        }
        if state == .finishing, output.isEmpty { teardown(.finished) }
    }

    private func armWriteSource() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd.rawValue, queue: queue)
            source.setEventHandler { @Sendable [weak self] in self?.flush(fromWrite: false) }
            source.setCancelHandler { @Sendable in self.sourceCancelled() }
            writeSource = source
            pendingCancels += 1
        }
        if writeSuspended {
            writeSuspended = false
            writeSource?.resume()
        }
    }

    private func disarmWriteSource() {
        if let writeSource, !writeSuspended {
            writeSuspended = true
            writeSource.suspend()
        }
    }

    private func pauseReading() {
        if let readSource, !readSuspended {
            readSuspended = true
            readSource.suspend()
        }
    }

    private func resumeReading() {
        if let readSource, readSuspended {
            readSuspended = false
            readSource.resume()
        }
    }

    private func teardown(_ reason: CloseReason) {
        guard state != .closed else { return }
        state = .closed
        output.removeAll()
        held = nil
        // A suspended source delivers its cancel handler only once resumed.
        resumeReading()
        if let writeSource, writeSuspended { writeSuspended = false; writeSource.resume() }
        readSource?.cancel()
        writeSource?.cancel()
        if pendingCancels == 0 { closeDescriptor() }
        server?.connectionDidClose(self, reason: reason)
    }

    /// The fd is closed only after every source on it is cancelled, so the epoll
    /// registration can never outlive it and hit a reused descriptor number.
    private func sourceCancelled() {
        pendingCancels -= 1
        if pendingCancels == 0 { closeDescriptor() }
    }

    private func closeDescriptor() {
        readSource = nil
        writeSource = nil
        try? syscalls.close(fd)
    }
}
