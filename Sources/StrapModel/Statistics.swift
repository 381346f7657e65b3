import FoundationEssentials

public struct StatisticsOptions: OptionSet, Sendable, Codable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let average = StatisticsOptions(rawValue: 1)
    public static let minimum = StatisticsOptions(rawValue: 2)
    public static let maximum = StatisticsOptions(rawValue: 4)
    public static let mostRecent = StatisticsOptions(rawValue: 8)
    public static let sum = StatisticsOptions(rawValue: 16)
    public static let separateBySource = StatisticsOptions(rawValue: 32)

    static let discreteOnly: StatisticsOptions = [.average, .minimum, .maximum, .mostRecent]

    /// Throws `invalidOption` unless every option suits `type`'s aggregation style.
    public func validate(for type: QuantityType) throws(StrapError) {
        let core = subtracting(.separateBySource)
        if core.isEmpty { throw .invalidOption("no statistics option given") }
        switch type.aggregation {
        case .discrete where core.contains(.sum):
            throw .invalidOption("sum is for cumulative types; \(type.rawValue) is discrete")
        case .cumulative where !core.isDisjoint(with: Self.discreteOnly):
            throw .invalidOption("average/minimum/maximum/mostRecent are for discrete types; \(type.rawValue) is cumulative")
        case .none:
            throw .invalidOption("\(type.rawValue) has no statistics")
        default: break
        }
    }
}

/// Sort order of a sample query.
public struct SampleSort: Sendable, Codable, Hashable {
    public enum Key: String, Sendable, Codable { case start, end }
    public var key: Key
    public var ascending: Bool
    public init(_ key: Key, ascending: Bool = true) { self.key = key; self.ascending = ascending }
}

/// Running aggregate of values; mergeable so per-minute rollups and raw samples combine.
public struct Aggregate: Sendable, Hashable, Codable {
    public var count: Int = 0
    public var sum: Double = 0
    public var min: Double = .infinity
    public var max: Double = -.infinity
    /// Start time and anchor of the most recent sample (ties broken by anchor), and its value.
    public var lastStart: Millis = .min
    public var lastAnchor: UInt64 = 0
    public var lastValue: Double = 0

    public init() {}

    public mutating func add(_ v: Double, start: Millis, anchor: UInt64) {
        count += 1; sum += v
        if v < min { min = v }
        if v > max { max = v }
        if start > lastStart || (start == lastStart && anchor >= lastAnchor) {
            lastStart = start; lastAnchor = anchor; lastValue = v
        }
    }

    public mutating func merge(_ o: Aggregate) {
        guard o.count > 0 else { return }
        count += o.count; sum += o.sum
        if o.min < min { min = o.min }
        if o.max > max { max = o.max }
        if o.lastStart > lastStart || (o.lastStart == lastStart && o.lastAnchor >= lastAnchor) {
            lastStart = o.lastStart; lastAnchor = o.lastAnchor; lastValue = o.lastValue
        }
    }
}

/// One statistics answer: an interval's values (nil when empty or not asked for).
public struct Statistics: Sendable, Codable, Hashable {
    public var type: QuantityType
    public var start: Millis
    public var end: Millis
    public var count: Int
    public var average: Double?
    public var minimum: Double?
    public var maximum: Double?
    public var mostRecent: Double?
    public var mostRecentTime: Millis?
    public var sum: Double?
    /// Per device id, when `separateBySource` was asked.
    public var bySource: [String: Statistics]?

    public init(type: QuantityType, start: Millis, end: Millis, aggregate a: Aggregate,
                options: StatisticsOptions) {
        self.type = type; self.start = start; self.end = end
        count = a.count
        let has = a.count > 0
        average = has && options.contains(.average) ? a.sum / Double(a.count) : nil
        minimum = has && options.contains(.minimum) ? a.min : nil
        maximum = has && options.contains(.maximum) ? a.max : nil
        mostRecent = has && options.contains(.mostRecent) ? a.lastValue : nil
        mostRecentTime = has && options.contains(.mostRecent) ? a.lastStart : nil
        sum = has && options.contains(.sum) ? a.sum : nil
    }
}

/// A calendar-aware statistics interval (docs/protocol.md#statisticscollection).
public struct StatisticsInterval: Sendable, Codable, Hashable {
    public enum Unit: String, Sendable, Codable { case minutes, hours, days, weeks, months }
    public var unit: Unit
    public var count: Int
    public init(_ unit: Unit, _ count: Int = 1) { self.unit = unit; self.count = count }

    var component: Calendar.Component {
        switch unit {
        case .minutes: .minute
        case .hours: .hour
        case .days: .day
        case .weeks: .weekOfYear
        case .months: .month
        }
    }

    var approxMillis: Double {
        let base: Double = switch unit {
        case .minutes: 60e3
        case .hours: 3600e3
        case .days: 86400e3
        case .weeks: 7 * 86400e3
        case .months: 30.44 * 86400e3
        }
        return base * Double(count)
    }

    /// Interval boundaries covering [from, to): k-th interval starts at anchor + k·interval,
    /// computed from the anchor each time so month ends and DST never drift.
    public func boundaries(anchor: Millis, from: Millis, to: Millis,
                           timeZone: TimeZone) throws(StrapError) -> [Millis] {
        guard count > 0 else { throw .badRequest("interval count must be positive") }
        guard from < to else { return [] }
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone
        let anchorDate = Date(millis: anchor)
        // Minutes and hours are absolute durations in Calendar arithmetic too (adding an hour
        // across a DST change moves one real hour), so they need no calendar call per interval.
        let fixed: Millis? = unit == .minutes ? 60_000 * Millis(count) : unit == .hours ? 3_600_000 * Millis(count) : nil
        func start(_ k: Int) -> Millis {
            if let fixed { return anchor + Millis(k) * fixed }
            return cal.date(byAdding: component, value: k * count, to: anchorDate)!.millis
        }
        var k = Int((Double(from - anchor) / approxMillis).rounded(.down))
        while start(k) > from { k -= 1 }
        while start(k + 1) <= from { k += 1 }
        var out = [start(k)]
        while out.last! < to {
            k += 1
            out.append(start(k))
            if out.count > 10_000_000 { throw .badRequest("too many intervals") }
        }
        return out
    }
}

extension Statistics {
    enum CodingKeys: String, CodingKey {
        case type, unit, start, end, count, average, minimum, maximum, mostRecent, mostRecentTime, sum, bySource
    }

    /// Times as RFC 3339 with milliseconds (docs/protocol.md#times); empty values as null.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(type.unit, forKey: .unit)
        try c.encode(RFC3339.string(start), forKey: .start)
        try c.encode(RFC3339.string(end), forKey: .end)
        try c.encode(count, forKey: .count)
        try c.encode(average, forKey: .average)
        try c.encode(minimum, forKey: .minimum)
        try c.encode(maximum, forKey: .maximum)
        try c.encode(mostRecent, forKey: .mostRecent)
        try c.encode(mostRecentTime.map(RFC3339.string), forKey: .mostRecentTime)
        try c.encode(sum, forKey: .sum)
        try c.encodeIfPresent(bySource, forKey: .bySource)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(QuantityType.self, forKey: .type)
        start = try c.decodeTime(.start)
        end = try c.decodeTime(.end)
        count = try c.decodeIfPresent(Int.self, forKey: .count) ?? 0
        average = try c.decodeIfPresent(Double.self, forKey: .average)
        minimum = try c.decodeIfPresent(Double.self, forKey: .minimum)
        maximum = try c.decodeIfPresent(Double.self, forKey: .maximum)
        mostRecent = try c.decodeIfPresent(Double.self, forKey: .mostRecent)
        mostRecentTime = try c.decodeIfPresent(String.self, forKey: .mostRecentTime).flatMap(RFC3339.parse)
        sum = try c.decodeIfPresent(Double.self, forKey: .sum)
        bySource = try c.decodeIfPresent([String: Statistics].self, forKey: .bySource)
    }
}
