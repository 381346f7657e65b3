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
        var from = start
        while true {
            let page = try await store.request("statistics.collection", parameters(from: from))
            collection.timeZone = page.string("timeZone") ?? collection.timeZone
            if case .array(let items)? = page["statistics"] {
                for item in items {
                    guard case .object(let o) = item else { throw StrapKitError.malformedReply("an interval that is not an object") }
                    collection.statistics.append(try StatisticsQuery.statistics(o, type: type))
                }
            }
            guard page.bool("truncated") == true else { return collection }
            let next = try page.time("next")
            guard next > from.millis else { throw StrapKitError.malformedReply("a truncated collection that does not move on") }
            from = Date(millis: next)
        }
    }

    /// The collection kept up to date as samples arrive (HealthKit's `statisticsUpdateHandler`).
    /// It needs `statistics.collection` with `follow`, which this protocol version does not
    /// have: iterating throws ``StrapKitError/unsupported(_:)`` rather than polling in secret.
    public func results(for store: StrapStore) -> Results { Results() }

    /// The updates of ``results(for:)``.
    public struct Results: AsyncSequence, Sendable {
        /// Each element is the whole collection as it stands.
        public typealias Element = Collection
        /// Makes the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator() }
        /// Throws ``StrapKitError/unsupported(_:)`` at once.
        public struct Iterator: AsyncIteratorProtocol {
            /// Throws: a live collection needs a daemon whose `statistics.collection` follows.
            public mutating func next() async throws -> Collection? {
                throw StrapKitError.unsupported("live statistics collections need statistics.collection with follow, "
                                                + "which this protocol version lacks")
            }
        }
    }
}
