import FoundationEssentials
import StrapModel
import StrapWire

/// Which samples a query selects, as a value (HealthKit's `NSPredicate`s made by
/// `HKQuery.predicateForSamples(withStart:end:options:)` and friends). Every case maps to the
/// protocol's predicate object (docs/protocol.md *Shapes*) and the daemon evaluates it; a
/// condition the protocol has no operator for is refused with
/// ``StrapKitError/unsupportedPredicate(_:)`` when the query is sent, never filtered here.
public indirect enum QueryPredicate: Sendable, Hashable {
    /// Everything.
    case all
    /// Samples in `[start, end)`: by default any overlap; with `.strictStartDate` the sample
    /// starts inside, with `.strictEndDate` it ends inside. A nil bound is open.
    case time(start: Date?, end: Date?, options: TimeRangeOptions)
    /// Samples of these types.
    case types(Set<QuantityType>)
    /// Samples from the device whose `field` equals `value` (an address for `.id`, any case).
    case device(DeviceField, String)
    /// Samples of a saved workout: its devices, starting within its span.
    case workout(UUID)
    /// Samples whose value lies in `[min, max]` (a nil bound is open).
    case value(min: Double?, max: Double?)
    /// Readings only: a heart rate passes when every workout figure would count it (not 0,
    /// not a `noReading`, not sent without skin contact); other types pass. HealthKit has no
    /// such predicate (it stores no non-readings); with it a statistics collection averages
    /// what a workout's summary averages. Protocol 1.1.
    case readings
    /// Samples whose metadata holds `key` with `value`. The protocol has no metadata operator
    /// yet: a query with this predicate throws ``StrapKitError/unsupportedPredicate(_:)``.
    case metadata(key: String, value: String)
    /// Samples every predicate matches.
    case and([QueryPredicate])
    /// Samples some predicate matches.
    case or([QueryPredicate])
    /// Samples the predicate does not match.
    case not(QueryPredicate)

    /// HealthKit's `predicateForSamples(withStart:end:options:)`.
    public static func samples(start: Date?, end: Date?, options: TimeRangeOptions = []) -> QueryPredicate {
        .time(start: start, end: end, options: options)
    }

    /// Samples of the device with this address.
    public static func device(address: String) -> QueryPredicate { .device(.id, address) }

    /// The protocol's predicate object, or the reason it has none.
    public func wire() throws(StrapKitError) -> JSONValue {
        switch self {
        case .all: return .object(["all": .bool(true)])
        case let .time(start, end, options):
            var t = JSONObject()
            if let start { t["from"] = start.wire }
            if let end { t["to"] = end.wire }
            if options.contains(.strictStartDate) { t["strictStartDate"] = .bool(true) }
            if options.contains(.strictEndDate) { t["strictEndDate"] = .bool(true) }
            return .object(["time": .object(t)])
        case .types(let set):
            return .object(["types": .array(set.map(\.rawValue).sorted().map(JSONValue.string))])
        case let .device(field, value):
            return .object(["device": .object([field.rawValue: .string(value)])])
        case .workout(let id): return .object(["workout": .string(id.uuidString)])
        case let .value(min, max):
            var v = JSONObject()
            if let min { v["min"] = .double(min) }
            if let max { v["max"] = .double(max) }
            return .object(["value": .object(v)])
        case .readings: return .object(["reading": .bool(true)])
        case let .metadata(key, _):
            throw .unsupportedPredicate("metadata[\(key)]: strapd's predicates have no metadata operator "
                                        + "(time, types, device, workout, value, reading, and, or, not)")
        case .and(let ps): return .object(["and": .array(try ps.map { p throws(StrapKitError) in try p.wire() })])
        case .or(let ps): return .object(["or": .array(try ps.map { p throws(StrapKitError) in try p.wire() })])
        case .not(let p): return .object(["not": try p.wire()])
        }
    }
}
