import FoundationEssentials
import StrapBluetooth
import StrapModel
import StrapWire

/// Typed access to a request's parameters. Every failure is `badRequest` naming the member,
/// and members an operation does not know are refused, so a typo never silently widens a query.
struct Params {
    let object: JSONObject

    init(_ request: Request, allowed: Set<String>) throws(WireError) {
        object = request.params
        for key in object.keys where !allowed.contains(key) {
            throw .bad("unknown parameter \"\(key)\" for \(request.op)" +
                       (allowed.isEmpty ? "" : " (known: \(allowed.sorted().joined(separator: ", ")))"))
        }
    }

    func has(_ key: String) -> Bool { object[key] != nil && object[key] != .null }

    func string(_ key: String) throws(WireError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case let other?: throw .bad("\"\(key)\" must be a string, not \(other.typeName)")
        }
    }

    func requiredString(_ key: String) throws(WireError) -> String {
        guard let s = try string(key), !s.isEmpty else { throw .bad("missing \"\(key)\"") }
        return s
    }

    func bool(_ key: String) throws(WireError) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        case let other?: throw .bad("\"\(key)\" must be a boolean, not \(other.typeName)")
        }
    }

    func int(_ key: String, in range: ClosedRange<Int64>) throws(WireError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let i)?:
            guard range.contains(i) else { throw .bad("\"\(key)\" must be in \(range.lowerBound)...\(range.upperBound)") }
            return i
        case .double(let d)? where d == d.rounded(.towardZero) || !d.isFinite:
            // A whole number too large for 64 bits (or `1e400`) is out of range, not a type error.
            throw .bad("\"\(key)\" must be in \(range.lowerBound)...\(range.upperBound); \(d.isFinite ? String(d) : "the number") is too large")
        case let other?: throw .bad("\"\(key)\" must be an integer, not \(other.typeName)")
        }
    }

    func number(_ key: String) throws(WireError) -> Double? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let i)?: return Double(i)
        case .double(let d)?:
            guard d.isFinite else { throw .bad("\"\(key)\" is out of range (too large for a double)") }
            return d
        case let other?: throw .bad("\"\(key)\" must be a number, not \(other.typeName)")
        }
    }

    func time(_ key: String) throws(WireError) -> Millis? {
        guard let s = try string(key) else { return nil }
        do throws(RFC3339Timestamp.ParseError) { return try RFC3339Timestamp.parse(s) } catch { throw .bad("\"\(key)\": \(error)") }
    }

    func requiredTime(_ key: String) throws(WireError) -> Millis {
        guard let t = try time(key) else { throw .bad("missing \"\(key)\"") }
        return t
    }

    func anchor(_ key: String) throws(WireError) -> UInt64 {
        UInt64(try int(key, in: 0...Int64.max) ?? 0)
    }

    func strings(_ key: String) throws(WireError) -> [String]? {
        switch object[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            var out: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw .bad("\"\(key)\" must be an array of strings") }
                out.append(s)
            }
            return out
        case let other?: throw .bad("\"\(key)\" must be an array, not \(other.typeName)")
        }
    }

    /// A Bluetooth address in any case, as strapd spells it (`AA:BB:CC:DD:EE:FF`).
    func address(_ key: String) throws(WireError) -> String? {
        guard let s = try string(key) else { return nil }
        return try Self.address(s, key)
    }

    func requiredAddress(_ key: String) throws(WireError) -> String {
        guard let a = try address(key) else { throw .bad("missing \"\(key)\"") }
        return a
    }

    func addresses(_ key: String) throws(WireError) -> [String]? {
        guard let list = try strings(key) else { return nil }
        var out: [String] = []
        for s in list { out.append(try Self.address(s, key)) }
        return out
    }

    /// strapd's one spelling of an address (KnownDevices.normalise, as strapd.conf uses).
    static func address(_ s: String, _ key: String) throws(WireError) -> String {
        guard let address = KnownDevices.normalise(s) else {
            throw .bad("\"\(key)\" must be a Bluetooth address like AA:BB:CC:DD:EE:FF, not \"\(WireError.echo(s, limit: 32))\"")
        }
        return address
    }

    func quantityTypes(_ key: String) throws(WireError) -> Set<QuantityType>? {
        guard let names = try strings(key) else { return nil }
        var out = Set<QuantityType>()
        for n in names {
            guard let t = QuantityType(rawValue: n) else { throw Self.unknownType(key, n) }
            out.insert(t)
        }
        return out
    }

    func quantityType(_ key: String) throws(WireError) -> QuantityType {
        let name = try requiredString(key)
        guard let t = QuantityType(rawValue: name) else { throw Self.unknownType(key, name) }
        return t
    }

    /// An enum-valued parameter with a value outside its set: names the parameter and lists
    /// what it accepts (the value is echoed only as a short prefix).
    static func notOneOf(_ key: String, _ value: String, _ accepted: [String], what: String = "value") -> WireError {
        .bad("\"\(key)\": unknown \(what) \"\(WireError.echo(value))\"; one of: \(accepted.joined(separator: ", "))")
    }

    static func unknownType(_ key: String, _ value: String) -> WireError {
        notOneOf(key, value, QuantityType.allCases.map(\.rawValue), what: "sample type")
    }

    /// The predicate in the JSON shape of `PredicateCoding.swift`.
    func predicate(_ key: String) throws(WireError) -> SamplePredicate? {
        guard let value = object[key], value != .null else { return nil }
        guard case .object = value else { throw .bad("\"\(key)\" must be an object") }
        do {
            return try JSONDecoder().decode(SamplePredicate.self, from: Data(JSONWriter.bytes(value)))
        } catch let DecodingError.dataCorrupted(context) {
            throw .bad("\"\(key)\": \(context.debugDescription)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw .bad("\"\(key)\": wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw .bad("\"\(key)\": invalid predicate")
        }
    }

    /// Statistics options from `"options": ["average", ...]` (or one string).
    func statisticsOptions(_ key: String) throws(WireError) -> StatisticsOptions {
        let names: [String]
        if case .string(let s)? = object[key] { names = [s] } else { names = try strings(key) ?? [] }
        var options: StatisticsOptions = []
        for n in names {
            switch n {
            case "average": options.insert(.average)
            case "minimum": options.insert(.minimum)
            case "maximum": options.insert(.maximum)
            case "mostRecent": options.insert(.mostRecent)
            case "sum": options.insert(.sum)
            default: throw Self.notOneOf(key, n, ["average", "minimum", "maximum", "mostRecent", "sum"], what: "statistics option")
            }
        }
        if options.isEmpty { throw .bad("missing \"\(key)\"") }
        return options
    }
}
