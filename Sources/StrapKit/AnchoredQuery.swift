import StrapModel
import StrapWire

/// HealthKit's `HKAnchoredObjectQueryDescriptor`: what was added and deleted after an anchor
/// (`samples.anchored`, docs/protocol.md). Keep the ``Update/newAnchor`` of each answer and start
/// the next query from it: nothing is skipped or repeated, across daemon restarts too.
public struct AnchoredQuery: Sendable {
    /// The types to read: sample types and/or `.workout`; nil reads every readable type.
    public var types: Set<ObjectType>?
    /// A further restriction, evaluated by the daemon.
    public var predicate: QueryPredicate?
    /// Where to start: 0 reads from the beginning.
    public var anchor: UInt64
    /// At most this many items for ``result(for:)`` (HealthKit's limit); nil reads everything
    /// up to the store's end, page after page.
    public var limit: Int?

    /// One answer: items in anchor order and the anchor to continue from.
    public struct Update: Sendable {
        /// Samples and workouts stored after the previous anchor.
        public var added: [StoredObject]
        /// Deleted objects (their tombstones' anchors).
        public var deleted: [DeletedObject]
        /// Continue from here.
        public var newAnchor: UInt64
        /// The added samples alone (workouts left out).
        public var addedSamples: [Sample] { added.compactMap(\.sample) }
    }

    /// A query of `types` (nil: every readable type) after `anchor`.
    public init(types: Set<ObjectType>? = nil, predicate: QueryPredicate? = nil, anchor: UInt64 = 0, limit: Int? = nil) {
        self.types = types
        self.predicate = predicate
        self.anchor = anchor
        self.limit = limit
    }

    /// The largest page the protocol allows.
    static let pageLimit = 100_000

    func parameters(from anchor: UInt64, limit: Int, follow: Bool) throws(StrapKitError) -> JSONObject {
        var p = JSONObject()
        if let types {
            p["types"] = .array(types.map { t in
                switch t {
                case .workout: JSONValue.string("workout")
                case .quantity(let q): JSONValue.string(q.rawValue)
                }
            }.sorted { JSONWriter.string($0) < JSONWriter.string($1) })
        }
        if let predicate { p["predicate"] = try predicate.wire() }
        p["anchor"] = .int(Int64(anchor))
        p["limit"] = .int(Int64(limit))
        if follow { p["follow"] = .bool(true) }
        return p
    }

    /// Everything after ``anchor`` up to the store's end (or ``limit`` items), read in pages.
    public func result(for store: StrapStore) async throws -> Update {
        var decoder = WireDecoder()
        var update = Update(added: [], deleted: [], newAnchor: anchor)
        while true {
            let want = limit.map { $0 - update.added.count - update.deleted.count } ?? Self.pageLimit
            if want <= 0 { return update }
            let page = try await store.requestBytes("samples.anchored", parameters(from: update.newAnchor, limit: min(want, Self.pageLimit), follow: false))
            let before = update.added.count + update.deleted.count
            try Self.read(page: page, into: &update, decoder: &decoder)
            if update.added.count + update.deleted.count == before { return update }
        }
    }

    /// A page's items into `update`: scanned from the bytes, or (when the scanner leaves the
    /// page to it) parsed; both read the same items.
    static func read(page: Body, into update: inout Update, decoder: inout WireDecoder) throws(StrapKitError) {
        if case let .bytes(line, range) = page {
            let (added, deleted) = (update.added.count, update.deleted.count)
            let scanned = line.withUnsafeBufferPointer { buffer in
                var scanner = SampleScanner(UnsafeBufferPointer(rebasing: buffer[..<range.upperBound]), at: range.lowerBound)
                do {
                    try scanner.page(into: &update, decoder: &decoder)
                    return true
                } catch {
                    return false
                }
            }
            if scanned { return }
            update.added.removeSubrange(added...)
            update.deleted.removeSubrange(deleted...)
        }
        try read(page: try page.object(), into: &update, decoder: &decoder)
    }

    /// One follow event's item (`added` or `deleted` data).
    static func item(_ body: Body, decoder: inout WireDecoder) throws(StrapKitError) -> StoredObject {
        if case let .bytes(line, range) = body {
            let scanned = line.withUnsafeBufferPointer { buffer -> StoredObject? in
                var scanner = SampleScanner(UnsafeBufferPointer(rebasing: buffer[..<range.upperBound]), at: range.lowerBound)
                return try? scanner.item(decoder: &decoder)
            }
            if let scanned { return scanned }
        }
        return try decoder.object(.object(try body.object()))
    }

    static func read(page: JSONObject, into update: inout Update, decoder: inout WireDecoder) throws(StrapKitError) {
        if case .array(let added)? = page["added"] {
            update.added.reserveCapacity(update.added.count + added.count)
            for item in added { update.added.append(try decoder.object(item)) }
        }
        if case .array(let deleted)? = page["deleted"] {
            for item in deleted { update.deleted.append(try WireDecoder.deleted(item)) }
        }
        update.newAnchor = try page.anchor("anchor")
    }

    /// The query's answer and then every later change, as they become durable: HealthKit's
    /// `results(for:)` of an anchored query with updates. The first element is the catch-up page
    /// (possibly empty); later elements hold what arrived together. With a reconnecting store
    /// the sequence resumes from its last anchor after a daemon restart, without gap or
    /// duplicate; with ``ReconnectPolicy/never`` it throws the loss. Ending the iteration (or
    /// cancelling its task) ends the stream on the daemon's side.
    public func results(for store: StrapStore) -> Results { Results(query: self, store: store) }

    /// The updates of ``results(for:)``.
    public struct Results: AsyncSequence, Sendable {
        /// Each element is one ``Update``.
        public typealias Element = Update
        let query: AnchoredQuery
        let store: StrapStore

        /// Makes the iterator; the stream opens at its first `next()`.
        public func makeAsyncIterator() -> Iterator { Iterator(query: query, store: store, anchor: query.anchor) }

        /// Iterates the updates; one stream on the socket, re-opened after a reconnect.
        public struct Iterator: AsyncIteratorProtocol {
            let query: AnchoredQuery
            let store: StrapStore
            var anchor: UInt64
            var events: Connection.Events.AsyncIterator?
            var decoder = WireDecoder()

            /// The next update; nil once the iteration was cancelled.
            public mutating func next() async throws -> Update? {
                while !Task.isCancelled {
                    guard events != nil else {
                        do {
                            let params = try query.parameters(from: anchor, limit: query.limit ?? AnchoredQuery.pageLimit, follow: true)
                            let (first, stream) = try await store.stream("samples.anchored", params, raw: true)
                            events = stream.makeAsyncIterator()
                            var update = Update(added: [], deleted: [], newAnchor: anchor)
                            try AnchoredQuery.read(page: first, into: &update, decoder: &decoder)
                            anchor = update.newAnchor
                            return update
                        } catch where store.mayResume(after: error) {
                            continue
                        }
                    }
                    do {
                        guard let batch = try await events!.next() else { return nil }
                        var update = Update(added: [], deleted: [], newAnchor: anchor)
                        for event in batch {
                            switch event.kind {
                            case "added":
                                let item = try AnchoredQuery.item(event.body, decoder: &decoder)
                                update.added.append(item)
                                update.newAnchor = item.anchor
                            case "deleted":
                                let deleted = try WireDecoder.deleted(.object(try event.body.object()))
                                update.deleted.append(deleted)
                                update.newAnchor = deleted.anchor
                            default: continue
                            }
                        }
                        if update.added.isEmpty && update.deleted.isEmpty { continue }
                        anchor = update.newAnchor
                        return update
                    } catch where store.mayResume(after: error) {
                        events = nil
                    }
                }
                return nil
            }
        }
    }
}

/// HealthKit's `HKSampleQueryDescriptor`: samples matching a predicate, sorted and limited
/// (`samples.query`).
public struct SampleQuery: Sendable {
    /// The sample types; nil means every readable type.
    public var types: Set<QuantityType>?
    /// A further restriction, evaluated by the daemon.
    public var predicate: QueryPredicate?
    /// Sort by the samples' end instead of their start.
    public var sortByEnd: Bool
    /// Newest first.
    public var descending: Bool
    /// At most this many samples (1…1 000 000).
    public var limit: Int?

    /// A query of `types` matching `predicate`, by start time, oldest first unless `descending`.
    public init(types: Set<QuantityType>? = nil, predicate: QueryPredicate? = nil, sortByEnd: Bool = false,
                descending: Bool = false, limit: Int? = nil) {
        self.types = types
        self.predicate = predicate
        self.sortByEnd = sortByEnd
        self.descending = descending
        self.limit = limit
    }

    /// The matching samples. A reply the daemon had to cut (more than about 2 MiB) throws
    /// ``StrapKitError/truncated(returned:)``: set a ``limit``, narrow the predicate or read with
    /// an ``AnchoredQuery``.
    public func result(for store: StrapStore) async throws -> [Sample] {
        var p = JSONObject()
        if let types { p["types"] = .array(types.map(\.rawValue).sorted().map(JSONValue.string)) }
        if let predicate { p["predicate"] = try predicate.wire() }
        if sortByEnd { p["sort"] = .string("end") }
        if descending { p["descending"] = .bool(true) }
        if let limit { p["limit"] = .int(Int64(limit)) }
        let reply = try await store.request("samples.query", p)
        var decoder = WireDecoder()
        var samples: [Sample] = []
        if case .array(let items)? = reply["samples"] {
            samples.reserveCapacity(items.count)
            for item in items {
                guard case .object(let o) = item else { throw StrapKitError.malformedReply("a sample that is not an object") }
                samples.append(try decoder.sample(o))
            }
        }
        if reply.bool("truncated") == true { throw StrapKitError.truncated(returned: samples.count) }
        return samples
    }
}
