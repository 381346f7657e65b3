import FoundationEssentials

/// How a time-range predicate matches a sample's [start, end] (HealthKit's query options).
public struct TimeRangeOptions: OptionSet, Sendable, Codable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The sample must start inside the range (default: any overlap).
    public static let strictStartDate = TimeRangeOptions(rawValue: 1)
    /// The sample must end inside the range.
    public static let strictEndDate = TimeRangeOptions(rawValue: 2)
}

public enum DeviceField: String, Sendable, Codable, Hashable {
    case id, name, model, manufacturer
}

/// A sample predicate (docs/product.md §4.2). Time ranges are half-open [from, to) in milliseconds;
/// nil bounds are open.
public indirect enum SamplePredicate: Sendable, Hashable {
    case all
    case time(from: Millis?, to: Millis?, options: TimeRangeOptions)
    case types(Set<QuantityType>)
    case device(DeviceField, String)
    /// Samples of the workout's devices within its time span; resolved by the store.
    case workout(UUID)
    /// Resolved form of `.workout`, produced by the store.
    case workoutSpan(from: Millis, to: Millis, deviceIDs: Set<String>)
    case value(min: Double?, max: Double?)
    /// Readings only: a heart rate passes when it is one (`Sample.isHeartRateReading`: not 0,
    /// not `quality=noReading`, not sent without skin contact), as every workout figure counts
    /// it; samples of other types always pass. Lets a statistics collection (a long workout's
    /// chart) average what the summary averages.
    case reading
    case and([SamplePredicate])
    case or([SamplePredicate])
    case not(SamplePredicate)

    /// Whether `s` matches. `.workout` must have been resolved (it matches nothing here).
    public func matches(_ s: Sample) -> Bool {
        switch self {
        case .all: return true
        case let .time(from, to, options):
            if options.contains(.strictStartDate) {
                if let from, s.start < from { return false }
                if let to, s.start >= to { return false }
            }
            if options.contains(.strictEndDate) {
                if let from, s.end < from { return false }
                if let to, s.end > to { return false }
            }
            if !options.contains(.strictStartDate) && !options.contains(.strictEndDate) {
                // Overlap; a zero-length sample overlaps when its instant lies in [from, to).
                if let to, s.start >= to { return false }
                if let from, s.end < from || (s.end == from && s.start < s.end) { return false }
            }
            return true
        case .types(let set): return set.contains(s.type)
        case let .device(field, wanted):
            switch field {
            case .id: return s.device.id == wanted
            case .name: return s.device.name == wanted
            case .model: return s.device.model == wanted
            case .manufacturer: return s.device.manufacturer == wanted
            }
        case .workout: return false
        case let .workoutSpan(from, to, ids):
            return ids.contains(s.device.id) && s.start >= from && s.start < to
        case let .value(lo, hi):
            if let lo, s.value < lo { return false }
            if let hi, s.value > hi { return false }
            return true
        case .reading: return s.type != .heartRate || s.isHeartRateReading
        case .and(let ps): return ps.allSatisfy { $0.matches(s) }
        case .or(let ps): return ps.contains { $0.matches(s) }
        case .not(let p): return !p.matches(s)
        }
    }

    /// A conservative start-time window outside which no sample can match, widened by
    /// `slack` (the longest sample) on the left for overlap semantics. Used to skip segments.
    public var timeBounds: (from: Millis?, to: Millis?) {
        switch self {
        case let .time(from, to, _): return (from, to)
        case let .workoutSpan(from, to, _): return (from, to)
        case .and(let ps):
            var lo: Millis? = nil, hi: Millis? = nil
            for p in ps {
                let b = p.timeBounds
                if let f = b.from { lo = max(lo ?? f, f) }
                if let t = b.to { hi = min(hi ?? t, t) }
            }
            return (lo, hi)
        case .or(let ps):
            guard !ps.isEmpty else { return (nil, nil) }
            var lo: Millis? = Millis.max, hi: Millis? = Millis.min
            for p in ps {
                let b = p.timeBounds
                lo = (lo == nil || b.from == nil) ? nil : min(lo!, b.from!)
                hi = (hi == nil || b.to == nil) ? nil : max(hi!, b.to!)
            }
            return (lo, hi)
        default: return (nil, nil)
        }
    }

    /// The types this predicate can match; nil means any.
    public var typeBounds: Set<QuantityType>? {
        switch self {
        case .types(let s): return s
        case .and(let ps):
            var r: Set<QuantityType>? = nil
            for p in ps { if let t = p.typeBounds { r = r.map { $0.intersection(t) } ?? t } }
            return r
        case .or(let ps):
            var r = Set<QuantityType>()
            for p in ps { guard let t = p.typeBounds else { return nil }; r.formUnion(t) }
            return r
        default: return nil
        }
    }

    /// Replaces `.workout(uuid)` using `resolve`; throws what `resolve` throws (notFound).
    public func resolvingWorkouts(_ resolve: (UUID) throws -> SamplePredicate) rethrows -> SamplePredicate {
        switch self {
        case .workout(let id): return try resolve(id)
        case .and(let ps): return .and(try ps.map { try $0.resolvingWorkouts(resolve) })
        case .or(let ps): return .or(try ps.map { try $0.resolvingWorkouts(resolve) })
        case .not(let p): return .not(try p.resolvingWorkouts(resolve))
        default: return self
        }
    }

    /// Whether only type/device/time conditions occur, i.e. per-source minute rollups can answer.
    public var isRollupFriendly: Bool {
        switch self {
        case .all, .types, .device: return true
        case .time: return false
        case .and(let ps), .or(let ps): return ps.allSatisfy(\.isRollupFriendly)
        case .not(let p): return p.isRollupFriendly
        default: return false
        }
    }

    /// Evaluates the device/type part against a source (valid when `isRollupFriendly`).
    public func matches(type: QuantityType, device: Device) -> Bool {
        matches(Sample(type: type, value: 0, start: 0, device: device))
    }
}
