import CSystemd
import Glibc
import StrapDBus

/// Encodes `DBusValue`s into and decodes them out of sd-bus messages with the
/// non-variadic primitives (docs/swift-on-linux.md#non-variadic-primitives).
enum MessageCodec {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(BusError) {
        for value in values { try append(value, to: message) }
    }

    static func append(_ value: DBusValue, to m: OpaquePointer) throws(BusError) {
        let code = CChar(UInt8(ascii: value.type.code.unicodeScalars.first!))
        var r: Int32
        switch value {
        case .byte(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .boolean(let b):
            // sd-bus represents D-Bus booleans as C int, not bool.
            var v: Int32 = b ? 1 : 0
            r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .int16(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .uint16(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .int32(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .uint32(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .int64(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .uint64(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .double(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .unixFD(var v): r = withUnsafeMutablePointer(to: &v) { sd_bus_message_append_basic(m, code, $0) }
        case .string(let s): r = s.withCString { sd_bus_message_append_basic(m, code, $0) }
        case .objectPath(let p): r = p.rawValue.withCString { sd_bus_message_append_basic(m, code, $0) }
        case .signature(let g): r = g.description.withCString { sd_bus_message_append_basic(m, code, $0) }
        case .variant(let inner):
            r = try container(m, "v", inner.signature) { () throws(BusError) in try append(inner, to: m) }
        case .array(let element, let items):
            for item in items where item.type != element {
                throw .encoding("array of \(element.signature) holds \(item.signature)")
            }
            r = try container(m, "a", element.signature) { () throws(BusError) in try append(items, to: m) }
        case .dictEntry(let key, let v):
            guard key.type.isBasic else { throw .encoding("dict key \(key.signature) is not basic") }
            r = try container(m, "e", key.signature + v.signature) { () throws(BusError) in
                try append(key, to: m)
                try append(v, to: m)
            }
        case .structure(let fields):
            r = try container(m, "r", fields.map(\.signature).joined()) { () throws(BusError) in try append(fields, to: m) }
        }
        if r < 0 { throw .errno("append \(value.signature)", -r) }
    }

    private static func container(_ m: OpaquePointer, _ kind: Character, _ contents: String,
                                  _ body: () throws(BusError) -> Void) throws(BusError) -> Int32 {
        let code = CChar(UInt8(ascii: kind.unicodeScalars.first!))
        let r = contents.withCString { sd_bus_message_open_container(m, code, $0) }
        if r < 0 { return r }
        try body()
        return sd_bus_message_close_container(m)
    }

    /// Reads every remaining value at the current level. Unix fds are duplicated, so the
    /// caller owns them after the message is released.
    static func readAll(_ m: OpaquePointer) throws(BusError) -> [DBusValue] {
        var out: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>? = nil
            let r = sd_bus_message_peek_type(m, &type, &contents)
            if r < 0 { throw .errno("peek type", -r) }
            if r == 0 { return out }
            out.append(try readOne(m, type: type, contents: contents))
        }
    }

    /// Each BlueZ notification is a message to decode (StartNotify's PropertiesChanged), so
    /// the common shapes take no detour: the type code is compared as a byte, a byte array is
    /// read in one call, and the element types BlueZ's signals use are known without parsing
    /// a signature.
    private static func readOne(_ m: OpaquePointer, type: CChar, contents: UnsafePointer<CChar>?) throws(BusError) -> DBusValue {
        let code = UInt8(bitPattern: type)
        func basic<T>(_ initial: T) throws(BusError) -> T {
            var v = initial
            let r = withUnsafeMutablePointer(to: &v) { sd_bus_message_read_basic(m, type, $0) }
            if r < 0 { throw .errno("read \(Self.name(code))", -r) }
            return v
        }
        func text() throws(BusError) -> String {
            var p: UnsafePointer<CChar>? = nil
            let r = sd_bus_message_read_basic(m, type, &p)
            if r < 0 { throw .errno("read \(Self.name(code))", -r) }
            return p.map { String(cString: $0) } ?? ""
        }
        switch code {
        case UInt8(ascii: "y"): return .byte(try basic(UInt8(0)))
        case UInt8(ascii: "b"): return .boolean(try basic(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try basic(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(Double(0)))
        case UInt8(ascii: "h"):
            let fd = try basic(Int32(-1))
            let owned = fcntl(fd, F_DUPFD_CLOEXEC, 3)
            if owned < 0 { throw .errno("dup fd", errno) }
            return .unixFD(owned)
        case UInt8(ascii: "s"): return .string(try text())
        case UInt8(ascii: "o"):
            let s = try text()
            do { return .objectPath(try ObjectPath(s)) } catch { throw .decoding("bad object path \(s)") }
        case UInt8(ascii: "g"):
            let s = try text()
            do { return .signature(try DBusSignature(parsing: s)) } catch { throw .decoding("bad signature \(s)") }
        case UInt8(ascii: "a") where contents.map({ strcmp($0, "y") == 0 }) ?? false:
            var p: UnsafeRawPointer? = nil
            var size = 0
            let r = sd_bus_message_read_array(m, CChar(UInt8(ascii: "y")), &p, &size)
            // Read as any other array below when sd-bus will not hand the array out whole.
            if r > 0 {
                let bytes = p.map { UnsafeRawBufferPointer(start: $0, count: size) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
                return .array(element: .byte, bytes.map { .byte($0) })
            }
            return try container(m, code: code, contents: "y")
        case UInt8(ascii: "a"), UInt8(ascii: "v"), UInt8(ascii: "r"), UInt8(ascii: "e"):
            return try container(m, code: code, contents: contents.map { String(cString: $0) } ?? "")
        default:
            throw .decoding("unknown type code \(Self.name(code))")
        }
    }

    private static func name(_ code: UInt8) -> Character { Character(Unicode.Scalar(code)) }

    private static func container(_ m: OpaquePointer, code: UInt8, contents: String) throws(BusError) -> DBusValue {
        let type = CChar(bitPattern: code)
        let r = contents.withCString { sd_bus_message_enter_container(m, type, $0) }
        if r < 0 { throw .errno("enter \(name(code))\(contents)", -r) }
        let inner = try readAll(m)
        let x = sd_bus_message_exit_container(m)
        if x < 0 { throw .errno("exit \(name(code))", -x) }
        switch code {
        case UInt8(ascii: "a"):
            return .array(element: try elementType(contents), inner)
        case UInt8(ascii: "v"):
            guard inner.count == 1 else { throw .decoding("variant holds \(inner.count) values") }
            return .variant(inner[0])
        case UInt8(ascii: "e"):
            guard inner.count == 2 else { throw .decoding("dict entry holds \(inner.count) values") }
            return .dictEntry(key: inner[0], value: inner[1])
        default:
            return .structure(inner)
        }
    }

    /// BlueZ's signals use a few element types over and over; the rest are parsed.
    private static func elementType(_ contents: String) throws(BusError) -> DBusType {
        switch contents {
        case "y": return .byte
        case "s": return .string
        case "o": return .objectPath
        case "{sv}": return .dictEntry(key: .string, value: .variant)
        default:
            do {
                // Parsed as the array itself: a dict entry is only legal inside one.
                guard case .array(let t)? = try DBusSignature(parsing: "a" + contents).types.first else {
                    throw BusError.decoding("array element \(contents)")
                }
                return t
            } catch let e as BusError { throw e } catch { throw .decoding("array element \(contents)") }
        }
    }
}
