import FoundationEssentials
import StrapModel
import StrapWire

/// HealthKit's `HKStatisticsQueryDescriptor`: one statistic of a type over a range or a saved
/// workout (`statistics.query`). No sample in the range throws ``StrapKitError/noData(_:)``;
/// strapd never answers made-up zeros.
public struct StatisticsQuery: Sendable {
    /// The sample type.
    public var type: QuantityType
    /// What to compute: `.average`, `.minimum`, `.maximum`, `.mostRecent` (discrete types) or
    /// `.sum` (cumulative types); others are ``StrapKitError/invalidOption(_:)``.
    public var options: StatisticsOptions
    /// The range `[start, end)`; nil with a ``workout`` takes the workout's span.
    public var start: Date?
    /// The end of the range (exclusive).
    public var end: Date?
    /// A saved workout (or its session) whose devices' samples count.
    public var workout: UUID?
    /// A further restriction, evaluated by the daemon.
    public var predicate: QueryPredicate?

    /// Statistics of `type` over `[start, end)`.
    public init(type: QuantityType, options: StatisticsOptions, start: Date, end: Date, predicate: QueryPredicate? = nil) {
        self.type = type
        self.options = options
        self.start = start
        self.end = end
        self.predicate = predicate
    }

    /// Statistics of `type` over a saved workout, from its devices.
    public init(type: QuantityType, options: StatisticsOptions, workout: UUID, predicate: QueryPredicate? = nil) {
        self.type = type
        self.options = options
        self.workout = workout
        self.predicate = predicate
    }

    /// The statistic.
    public func result(for store: StrapStore) async throws -> Statistics {
        var p: JSONObject = ["type": .string(type.rawValue), "options": Self.wire(options)]
        if let start { p["from"] = start.wire }
        if let end { p["to"] = end.wire }
        if let workout { p["workout"] = .string(workout.uuidString) }
        if let predicate { p["predicate"] = try predicate.wire() }
        return try Self.statistics(try await store.request("statistics.query", p), type: type)
    }

    static func wire(_ options: StatisticsOptions) -> JSONValue {
        let names: [(StatisticsOptions, String)] = [(.average, "average"), (.minimum, "minimum"), (.maximum, "maximum"),
                                                    (.mostRecent, "mostRecent"), (.sum, "sum")]
        return .array(names.filter { options.contains($0.0) }.map { .string($0.1) })
    }

    /// One statistics object of a reply (the type is the query's when the object omits it).
    static func statistics(_ o: JSONObject, type: QuantityType) throws(StrapKitError) -> Statistics {
        var s = Statistics(type: type, start: try o.time("start"), end: try o.time("end"), aggregate: Aggregate(), options: [])
        s.count = Int(o.int("count") ?? 0)
        s.average = o.number("average")
        s.minimum = o.number("minimum")
        s.maximum = o.number("maximum")
        s.mostRecent = o.number("mostRecent")
        s.mostRecentTime = o["mostRecentTime"] == nil || o["mostRecentTime"] == .null ? nil : try o.time("mostRecentTime")
        s.sum = o.number("sum")
        if let sources = o.object("bySource") {
            var bySource: [String: Statistics] = [:]
            for (device, value) in sources.entries {
                guard case .object(var part) = value else { continue }
                // A source's figures carry no span: it is the interval's.
                if part["start"] == nil { part["start"] = o["start"]; part["end"] = o["end"] }
                bySource[device] = try statistics(part, type: type)
            }
            s.bySource = bySource
        }
        return s
    }
}

/// HealthKit's `HKStatisticsCollectionQueryDescriptor`: statistics per calendar interval
/// (`statistics.collection`). Long collections, which the daemon cuts, are read page after
/// page: ``result(for:)`` returns them whole.
public struct StatisticsCollectionQuery: Sendable {
    /// The sample type.
    public var type: QuantityType
    /// What to compute; `.separateBySource` adds each interval's figures per device.
    public var options: StatisticsOptions
    /// Every interval overlapping `[start, end)` is returned, whole.
    public var start: Date
    /// The end of the range (exclusive).
    public var end: Date
    /// Intervals start at `anchorDate + k·interval` (nil: at `start`).
    public var anchorDate: Date?
    /// The interval: minutes, hours, days, weeks or months.
    public var interval: StatisticsInterval
    /// The IANA time zone the calendar intervals are in (nil: the daemon's).
    public var timeZone: String?
    /// A further restriction, evaluated by the daemon.
    public var predicate: QueryPredicate?

    /// Statistics of `type` per `interval` over `[start, end)`.
    public init(type: QuantityType, options: StatisticsOptions, start: Date, end: Date, interval: StatisticsInterval,
                anchorDate: Date? = nil, timeZone: String? = nil, predicate: QueryPredicate? = nil) {
        self.type = type
        self.options = options
        self.start = start
        self.end = end
        self.interval = interval
        self.anchorDate = anchorDate
        self.timeZone = timeZone
        self.predicate = predicate
    }

    /// A collection's intervals, in order.
    public struct Collection: Sendable {
        /// One ``Statistics`` per interval, empty ones with nil figures and a count of 0.
        public var statistics: [Statistics]
        /// The time zone the intervals were computed in.
        public var timeZone: String
        /// The interval containing `date`, if it is in the collection.
        public func statistics(for date: Date) -> Statistics? {
            let ms = date.millis
            return statistics.first { $0.start <= ms && ms < $0.end }
        }
    }

    func parameters(from: Date) throws(StrapKitError) -> JSONObject {
        var p: JSONObject = ["type": .string(type.rawValue), "options": StatisticsQuery.wire(options),
                             "interval": .object([interval.unit.rawValue: .int(Int64(interval.count))]),
                             "from": from.wire, "to": end.wire, "anchorDate": (anchorDate ?? start).wire]
        if let timeZone { p["timeZone"] = .string(timeZone) }
        if options.contains(.separateBySource) { p["separateBySource"] = .bool(true) }
        if let predicate { p["predicate"] = try predicate.wire() }
        return p
    }

    /// Every interval, the daemon's pages joined (each continues at the previous page's `next`
    /// with the same anchor, interval and time zone, so no interval is lost or repeated).
    public func result(for store: StrapStore) async throws -> Collection {
        var collection = Collection(statistics: [], timeZone: timeZone ?? "")
        try await read(try await store.request("statistics.collection", parameters(from: start)), into: &collection, from: start, store: store)
        return collection
    }

    /// A page into `collection`, then the pages after it while the daemon says `truncated`.
    func read(_ first: JSONObject, into collection: inout Collection, from: Date, store: StrapStore) async throws {
        var page = first, from = from
        while true {
            collection.timeZone = page.string("timeZone") ?? collection.timeZone
            if case .array(let items)? = page["statistics"] {
                for item in items {
                    guard case .object(let o) = item else { throw StrapKitError.malformedReply("an interval that is not an object") }
                    collection.statistics.append(try StatisticsQuery.statistics(o, type: type))
                }
            }
            guard page.bool("truncated") == true else { return }
            let next = try page.time("next")
            guard next > from.millis else { throw StrapKitError.malformedReply("a truncated collection that does not move on") }
            from = Date(millis: next)
            page = try await store.request("statistics.collection", parameters(from: from))
        }
    }

    /// The collection, then the whole collection again each time strapd sends intervals whose
    /// figures changed (HealthKit's `statisticsUpdateHandler`; `statistics.collection` with
    /// `follow`, at most one update a second). A followed collection holds at most 10 000
    /// intervals (``StrapKitError/badRequest(_:)`` beyond). With a reconnecting store it opens
    /// again after a daemon restart and starts over with the whole collection; a daemon whose
    /// protocol predates `follow` (before 1.1) makes it throw ``StrapKitError/unsupported(_:)``.
    /// Ending the iteration ends the stream on the daemon's side.
    public func results(for store: StrapStore) -> Results { Results(query: self, store: store) }

    /// The updates of ``results(for:)``.
    public struct Results: AsyncSequence, Sendable {
        /// Each element is the whole collection as it stands.
        public typealias Element = Collection
        let query: StatisticsCollectionQuery
        let store: StrapStore

        /// Makes the iterator; the stream opens at its first `next()`.
        public func makeAsyncIterator() -> Iterator { Iterator(query: query, store: store) }

        /// Iterates the collection's updates over one `statistics.collection` stream.
        public struct Iterator: AsyncIteratorProtocol {
            let query: StatisticsCollectionQuery
            let store: StrapStore
            var collection = Collection(statistics: [], timeZone: "")
            var byStart: [Millis: Int] = [:]
            var events: Connection.Events.AsyncIterator?

            /// The collection as it stands after the next change; nil once cancelled.
            public mutating func next() async throws -> Collection? {
                while !Task.isCancelled {
                    guard events != nil else {
                        do {
                            var p = try query.parameters(from: query.start)
                            p["follow"] = .bool(true)
                            let (first, stream) = try await store.stream("statistics.collection", p)
                            events = stream.makeAsyncIterator()
                            collection = Collection(statistics: [], timeZone: query.timeZone ?? "")
                            try await query.read(try first.object(), into: &collection, from: query.start, store: store)
                            byStart = Dictionary(collection.statistics.enumerated().map { ($1.start, $0) }, uniquingKeysWith: { a, _ in a })
                            return collection
                        } catch StrapKitError.badRequest(let message) where message.contains("follow") {
                            throw StrapKitError.unsupported("this strapd cannot follow a statistics collection (protocol 1.1): \(message)")
                        } catch where store.mayResume(after: error) {
                            events = nil
                            continue
                        }
                    }
                    do {
                        guard let batch = try await events!.next() else { return nil }
                        var changed = false
                        for event in batch where event.kind == "statistics" {
                            guard case .array(let items)? = event.data["statistics"] else { continue }
                            for item in items {
                                guard case .object(let o) = item else { throw StrapKitError.malformedReply("an interval that is not an object") }
                                let interval = try StatisticsQuery.statistics(o, type: query.type)
                                if let at = byStart[interval.start] {
                                    collection.statistics[at] = interval
                                } else {
                                    collection.statistics.append(interval)
                                    collection.statistics.sort { $0.start < $1.start }
                                    byStart = Dictionary(collection.statistics.enumerated().map { ($1.start, $0) }, uniquingKeysWith: { a, _ in a })
                                }
                                changed = true
                            }
                        }
                        if changed { return collection }
                    } catch where store.mayResume(after: error) {
                        events = nil
                    }
                }
                return nil
            }
        }
    }
}
