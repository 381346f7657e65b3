import StrapModel
import StrapWire

/// What `workout.live` and `workout.watch` streams share. Events reach a stream on any queue
/// and are written on the connection's; until the `ok` is written they wait, so the reply
/// always comes first. An event the stream promises not to drop that does not fit the
/// connection's buffer (a reader that stopped reading) ends the stream: its last event is an
/// `error` (`busy`), written as soon as there is room for it, never a silent gap.
///
/// A subclass says how an event is written (`encode`), which it may drop when behind
/// (`admit`) and which one ends the stream (`isLast`).
class WorkoutEventStream<Event: Sendable>: RouterStream, @unchecked Sendable {
    /// Weak: a stream's last hop may run after the router is gone (a daemon stopped).
    private weak var router: RequestRouter?
    let session: ClientSession
    let id: RequestID
    /// Who reads this stream, and how to start over, for the `error` of an overflow.
    private let reader: String
    private let startOver: String
    /// Confined to the connection's queue.
    private var unregister: (() -> Void)?
    private var waiting: [Event] = []
    private var isStarted = false
    private(set) var ended = false
    /// The `error` that ends an overflowed stream, until the connection has room for it.
    private var pendingError: [UInt8]?

    init(router: RequestRouter, session: ClientSession, id: RequestID, reader: String, startOver: String) {
        self.router = router
        self.session = session
        self.id = id
        self.reader = reader
        self.startOver = startOver
    }

    /// The event's kind and its `data` as JSON.
    func encode(_ event: Event) -> (kind: String, data: [UInt8]) { fatalError("WorkoutEventStream.encode is a subclass's") }

    /// Whether to write the event now; false when it is one the stream may drop (and count).
    func admit(_ event: Event) -> Bool { true }

    /// Whether the stream ends once the event is written.
    func isLast(_ event: Event) -> Bool { false }

    /// Any queue.
    final func enqueue(_ event: Event) {
        session.connection.queue.async { [self] in
            if isStarted { write(event) } else { waiting.append(event) }
        }
    }

    /// Registered with the service: `unregister` undoes it (at the end, or at once when the
    /// stream was cancelled meanwhile).
    final func started(reply: [UInt8], unregister: @escaping () -> Void) {
        guard !ended else { unregister(); return }
        self.unregister = unregister
        session.connection.write(reply)
        isStarted = true
        let pending = waiting
        waiting = []
        for e in pending { write(e) }
    }

    final func failedToStart(_ reply: [UInt8]) {
        ended = true
        session.connection.write(reply)
    }

    private func write(_ event: Event) {
        guard !ended, admit(event) else { return }
        let (kind, data) = encode(event)
        switch session.connection.write(Reply.event(id: id, kind: kind, dataJSON: data)) {
        case .queued:
            guard isLast(event) else { return }
            end()
            router?.streamEnded(id: id, in: session, stream: self)
        case .rejected:
            overflowed(by: kind)
        case .closed:
            break
        }
    }

    private func overflowed(by kind: String) {
        end()
        pendingError = Reply.event(id: id, kind: "error", data: [
            "code": .string(ErrorCode.busy.rawValue),
            "message": .string("this \(reader) fell behind: a \(kind) event did not fit its connection's output buffer " +
                               "(client_buffer), so the stream ends here; \(startOver)"),
        ])
        flushPendingError()
    }

    private func flushPendingError() {
        guard let error = pendingError else { return }
        if session.connection.write(error) == .rejected { return }
        pendingError = nil
        router?.streamEnded(id: id, in: session, stream: self)
    }

    /// An overflowed stream's `error` waits for room.
    final var owesError: Bool { pendingError != nil }

    func outputDrained() { flushPendingError() }

    final func cancel(notify: Bool) {
        if let error = pendingError {
            // Ended by the overflow already: the reader learns that, not a plain `cancelled`.
            pendingError = nil
            if notify { session.connection.write(error) }
            return
        }
        guard !ended else { return }
        end()
        if notify { session.connection.write(Reply.event(id: id, kind: "cancelled", data: [:])) }
    }

    private func end() {
        ended = true
        unregister?()
        unregister = nil
    }
}
