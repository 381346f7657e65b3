import FoundationEssentials
import StrapWire

/// JSON shape of predicates for the socket protocol, e.g.
/// `{"and": [{"time": {"from": "...", "to": "...", "strictStartDate": true}},
///           {"types": ["heartRate"]}, {"device": {"name": "H10"}}, {"value": {"min": 100}},
///           {"reading": true}, {"not": {"workout": "UUID"}}]}`.
extension SamplePredicate: Codable {
    enum Key: String, CodingKey { case all, time, types, device, workout, value, reading, and, or, not }
    enum TimeKey: String, CodingKey { case from, to, strictStartDate, strictEndDate }
    enum ValueKey: String, CodingKey { case min, max }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        guard let key = c.allKeys.first, c.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "a predicate has exactly one key"))
        }
        switch key {
        case .all: self = .all
        case .time:
            let t = try c.nestedContainer(keyedBy: TimeKey.self, forKey: .time)
            var o: TimeRangeOptions = []
            if try t.decodeIfPresent(Bool.self, forKey: .strictStartDate) == true { o.insert(.strictStartDate) }
            if try t.decodeIfPresent(Bool.self, forKey: .strictEndDate) == true { o.insert(.strictEndDate) }
            self = .time(from: t.contains(.from) ? try t.decodeTime(.from) : nil,
                         to: t.contains(.to) ? try t.decodeTime(.to) : nil, options: o)
        case .types:
            var types = Set<QuantityType>()
            for name in try c.decode([String].self, forKey: .types) {
                guard let t = QuantityType(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(forKey: .types, in: c, debugDescription:
                        "types: unknown sample type \"\(name.prefix(64))\"; one of: \(QuantityType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                types.insert(t)
            }
            self = .types(types)
        case .device:
            let d = try c.decode([String: String].self, forKey: .device)
            guard d.count == 1, let (k, v) = d.first, let f = DeviceField(rawValue: k) else {
                throw DecodingError.dataCorruptedError(forKey: .device, in: c,
                    debugDescription: "device takes one of id, name, model, manufacturer")
            }
            // Device ids are Bluetooth addresses, which strapd spells in upper case.
            self = .device(f, f == .id ? v.uppercased() : v)
        case .workout: self = .workout(try c.decode(UUID.self, forKey: .workout))
        case .value:
            let v = try c.nestedContainer(keyedBy: ValueKey.self, forKey: .value)
            self = .value(min: try v.decodeIfPresent(Double.self, forKey: .min),
                          max: try v.decodeIfPresent(Double.self, forKey: .max))
        case .reading:
            guard try c.decode(Bool.self, forKey: .reading) else {
                throw DecodingError.dataCorruptedError(forKey: .reading, in: c, debugDescription: "reading takes true (use not for the opposite)")
            }
            self = .reading
        case .and: self = .and(try c.decode([SamplePredicate].self, forKey: .and))
        case .or: self = .or(try c.decode([SamplePredicate].self, forKey: .or))
        case .not: self = .not(try c.decode(SamplePredicate.self, forKey: .not))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        switch self {
        case .all: try c.encode(true, forKey: .all)
        case let .time(from, to, o):
            var t = c.nestedContainer(keyedBy: TimeKey.self, forKey: .time)
            if let from { try t.encode(RFC3339Timestamp.format(millisecondsSinceEpoch: from), forKey: .from) }
            if let to { try t.encode(RFC3339Timestamp.format(millisecondsSinceEpoch: to), forKey: .to) }
            if o.contains(.strictStartDate) { try t.encode(true, forKey: .strictStartDate) }
            if o.contains(.strictEndDate) { try t.encode(true, forKey: .strictEndDate) }
        case .types(let s): try c.encode(s.map(\.rawValue).sorted(), forKey: .types)
        case let .device(f, v): try c.encode([f.rawValue: v], forKey: .device)
        case .workout(let id): try c.encode(id, forKey: .workout)
        case let .workoutSpan(from, to, _):
            // Internal form; encodes as the time part (never sent by the daemon).
            try SamplePredicate.time(from: from, to: to, options: .strictStartDate).encode(to: encoder)
        case let .value(lo, hi):
            var v = c.nestedContainer(keyedBy: ValueKey.self, forKey: .value)
            try v.encodeIfPresent(lo, forKey: .min)
            try v.encodeIfPresent(hi, forKey: .max)
        case .reading: try c.encode(true, forKey: .reading)
        case .and(let ps): try c.encode(ps, forKey: .and)
        case .or(let ps): try c.encode(ps, forKey: .or)
        case .not(let p): try c.encode(p, forKey: .not)
        }
    }
}
