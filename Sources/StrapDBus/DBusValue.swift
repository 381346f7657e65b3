/// A D-Bus value with its full type, so that containers (including empty arrays) can be
/// re-encoded exactly. Encoding and decoding against sd-bus lives in StrapBlueZ; this
/// module stays free of I/O.
///
/// Only the cases that hold a `DBusValue` themselves are `indirect`: an indirect case is a
/// heap box per value, and a whole-enum `indirect` boxed every byte of every notification's
/// `ay` (BlueZ's PropertiesChanged "Value"), one allocation each, on the hot path.
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(DBusSignature)
    /// A file descriptor index as seen in a message; the owner of the message owns the fd.
    case unixFD(Int32)
    indirect case variant(DBusValue)
    /// Elements must all have type `element`; dictionaries are arrays of `.dictEntry`.
    case array(element: DBusType, [DBusValue])
    indirect case dictEntry(key: DBusValue, value: DBusValue)
    case structure([DBusValue])

    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .variant: .variant
        case .array(let element, _): .array(element)
        case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }

    public var signature: String { type.signature }

    // MARK: Convenience constructors for the shapes BlueZ uses

    /// `a{sv}`, the shape of every BlueZ property and option dictionary.
    public static func vardict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(element: .dictEntry(key: .string, value: .variant),
               entries.map { .dictEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    /// `ay`
    public static func bytes<C: Collection>(_ bytes: C) -> DBusValue where C.Element == UInt8 {
        .array(element: .byte, bytes.map { .byte($0) })
    }

    /// `as`
    public static func strings(_ strings: [String]) -> DBusValue {
        .array(element: .string, strings.map { .string($0) })
    }

    // MARK: Typed accessors; nil means "not this type", which callers log as bad input

    /// Strips any number of variant wrappers.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var string: String? {
        if case .string(let s) = unwrapped { return s }
        return nil
    }

    public var bool: Bool? {
        if case .boolean(let b) = unwrapped { return b }
        return nil
    }

    public var objectPath: ObjectPath? {
        if case .objectPath(let p) = unwrapped { return p }
        return nil
    }

    /// Any integer type widened, for properties whose width BlueZ has changed across releases.
    public var integer: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): v <= UInt64(Int64.max) ? Int64(v) : nil
        default: nil
        }
    }

    public var elements: [DBusValue]? {
        if case .array(_, let items) = unwrapped { return items }
        return nil
    }

    /// `ay` as bytes.
    public var bytes: [UInt8]? {
        guard case .array(.byte, let items) = unwrapped else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard case .byte(let b) = item else { return nil }
            out.append(b)
        }
        return out
    }

    public var stringArray: [String]? {
        guard case .array(.string, let items) = unwrapped else { return nil }
        return items.compactMap(\.string)
    }

    /// A dictionary with string keys (`a{sv}`, `a{sa{sv}}`, …); values are left as is.
    public var stringDictionary: [String: DBusValue]? {
        guard case .array(.dictEntry(.string, _), let items) = unwrapped else { return nil }
        var out: [String: DBusValue] = [:]
        for item in items {
            guard case .dictEntry(.string(let key), let value) = item else { return nil }
            out[key] = value
        }
        return out
    }

    /// A dictionary with object path keys (`a{oa{sa{sv}}}` from GetManagedObjects).
    public var objectPathDictionary: [ObjectPath: DBusValue]? {
        guard case .array(.dictEntry(.objectPath, _), let items) = unwrapped else { return nil }
        var out: [ObjectPath: DBusValue] = [:]
        for item in items {
            guard case .dictEntry(.objectPath(let key), let value) = item else { return nil }
            out[key] = value
        }
        return out
    }
}

extension DBusValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .byte(let v): "y \(v)"
        case .boolean(let v): "b \(v)"
        case .int16(let v): "n \(v)"
        case .uint16(let v): "q \(v)"
        case .int32(let v): "i \(v)"
        case .uint32(let v): "u \(v)"
        case .int64(let v): "x \(v)"
        case .uint64(let v): "t \(v)"
        case .double(let v): "d \(v)"
        case .string(let v): "s \"\(v)\""
        case .objectPath(let v): "o \(v)"
        case .signature(let v): "g \(v)"
        case .unixFD(let v): "h \(v)"
        case .variant(let v): "v(\(v))"
        case .array(let element, let items): "a\(element.signature)[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictEntry(let k, let v): "{\(k): \(v)}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        }
    }
}
