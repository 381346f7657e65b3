import StrapWire

/// One event of a stream as the daemon sent it (`{"id":N,"event":kind,"data":{…}}`).
public struct RawEvent: Sendable, Equatable {
    /// The event's kind: `added`, `found`, `chunk`, `finished`, `cancelled`, …
    public let kind: String
    /// Its `data` object.
    public let data: JSONObject
    /// The `data` object's JSON text exactly as the daemon wrote it, for a stream opened with
    /// `keepingJSON` (nil otherwise): a relay hands it on as it came, without writing the
    /// parsed object out again.
    public let dataJSON: ArraySlice<UInt8>?

    public init(kind: String, data: JSONObject, dataJSON: ArraySlice<UInt8>? = nil) {
        self.kind = kind
        self.data = data
        self.dataJSON = dataJSON
    }
}

/// The events of a stream opened with ``StrapStore/rawStream(_:_:)``, one at a time.
public struct RawEventStream: AsyncSequence, Sendable {
    public typealias Element = RawEvent

    private let events: Connection.Events
    private let cancelStream: @Sendable () -> Void

    init(events: Connection.Events, cancel: @escaping @Sendable () -> Void) {
        self.events = events
        self.cancelStream = cancel
    }

    /// Asks the daemon to end the stream (`cancel`); the sequence goes on with what the daemon
    /// still sends and ends after its `cancelled` event.
    public func cancel() { cancelStream() }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Connection.Events.AsyncIterator
        var batch: [WireEvent] = []
        var index = 0

        public mutating func next() async throws -> RawEvent? {
            while index == batch.count {
                guard let next = try await base.next() else { return nil }
                batch = next
                index = 0
            }
            defer { index += 1 }
            let event = batch[index]
            if case let .bytes(line, range) = event.body {
                return RawEvent(kind: event.kind, data: event.data, dataJSON: line[range])
            }
            return RawEvent(kind: event.kind, data: event.data)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: events.makeAsyncIterator()) }
}
