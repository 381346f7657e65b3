/// One complete D-Bus type, parsed from a signature string.
///
/// sd-bus wants signature strings for containers (`open_container("a", "{sv}")`), and the
/// decoder has to know each element's type even for an empty array, so the tree is kept.
/// Indirect only where a case holds a `DBusType` itself (a box per value; DBusValue says why).
public enum DBusType: Sendable, Hashable {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    indirect case array(DBusType)
    indirect case dictEntry(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The type code sd-bus uses for basic types and container openers.
    public var code: Character {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array: "a"
        case .dictEntry: "e"
        case .structure: "r"
        }
    }

    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictEntry, .structure: false
        default: true
        }
    }

    /// The signature text of this single complete type.
    public var signature: String {
        switch self {
        case .array(let element): "a" + element.signature
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        default: String(code)
        }
    }

    /// The contents signature sd-bus expects when opening this container.
    public var containedSignature: String {
        switch self {
        case .array(let element): element.signature
        case .dictEntry(let key, let value): key.signature + value.signature
        case .structure(let fields): fields.map(\.signature).joined()
        default: ""
        }
    }
}

public enum DBusSignatureError: Error, Sendable, Equatable {
    case unexpectedEnd(signature: String)
    case unknownTypeCode(Character, signature: String)
    case dictEntryOutsideArray(signature: String)
    case dictKeyNotBasic(signature: String)
    case unbalanced(signature: String)
    case tooLong(signature: String)
}

/// A validated D-Bus signature: zero or more complete types.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible {
    public let types: [DBusType]
    public var description: String { types.map(\.signature).joined() }

    public init(_ types: [DBusType]) { self.types = types }

    public init(parsing text: String) throws(DBusSignatureError) {
        // The spec caps signatures at 255 bytes; a longer one is malformed input, not a type.
        guard text.utf8.count <= 255 else { throw .tooLong(signature: text) }
        var parser = Parser(text: Array(text), source: text)
        var result: [DBusType] = []
        while !parser.atEnd { result.append(try parser.completeType(inArray: false)) }
        types = result
    }

    private struct Parser {
        let text: [Character]
        let source: String
        var index = 0
        var atEnd: Bool { index >= text.count }

        mutating func completeType(inArray: Bool) throws(DBusSignatureError) -> DBusType {
            guard !atEnd else { throw .unexpectedEnd(signature: source) }
            let c = text[index]
            index += 1
            switch c {
            case "y": return .byte
            case "b": return .boolean
            case "n": return .int16
            case "q": return .uint16
            case "i": return .int32
            case "u": return .uint32
            case "x": return .int64
            case "t": return .uint64
            case "d": return .double
            case "s": return .string
            case "o": return .objectPath
            case "g": return .signature
            case "h": return .unixFD
            case "v": return .variant
            case "a": return .array(try completeType(inArray: true))
            case "(":
                var fields: [DBusType] = []
                while true {
                    guard !atEnd else { throw .unbalanced(signature: source) }
                    if text[index] == ")" { index += 1; break }
                    fields.append(try completeType(inArray: false))
                }
                guard !fields.isEmpty else { throw .unbalanced(signature: source) }
                return .structure(fields)
            case "{":
                guard inArray else { throw .dictEntryOutsideArray(signature: source) }
                let key = try completeType(inArray: false)
                guard key.isBasic else { throw .dictKeyNotBasic(signature: source) }
                let value = try completeType(inArray: false)
                guard !atEnd, text[index] == "}" else { throw .unbalanced(signature: source) }
                index += 1
                return .dictEntry(key: key, value: value)
            case ")", "}": throw .unbalanced(signature: source)
            default: throw .unknownTypeCode(c, signature: source)
            }
        }
    }
}
