/// A JSON document as a value. Integers written without fraction or exponent stay
/// `.int` so request ids and anchors (uint64 in practice, Int64 on the wire) round-trip
/// exactly; everything else numeric is `.double`.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Keys in document order; duplicate keys are rejected by the parser.
    case object(JSONObject)

    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// An ordered JSON object: replies keep the field order the caller chose, which makes
/// the wire output stable and readable.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public private(set) var entries: [(key: String, value: JSONValue)]

    public init() { entries = [] }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        entries = []
        for (k, v) in elements { self[k] = v }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public var keys: [String] { entries.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            let index = entries.firstIndex(where: { $0.key == key })
            switch (index, newValue) {
            case let (i?, v?): entries[i].value = v
            case let (i?, nil): entries.remove(at: i)
            case let (nil, v?): entries.append((key, v))
            case (nil, nil): break
            }
        }
    }

    /// Appends a member the caller knows is not there yet (the parser, which has just checked).
    mutating func appendAbsent(_ key: String, _ value: JSONValue) {
        // Room for a sample's members at once rather than growing 1, 2, 4, 8.
        if entries.isEmpty { entries.reserveCapacity(8) }
        entries.append((key, value))
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        // Equality is by content; order matters only for output.
        for (k, v) in lhs.entries where rhs[k] != v { return false }
        return true
    }
}
