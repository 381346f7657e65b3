public enum ObjectPathError: Error, Sendable, Equatable {
    case invalid(String)
}

/// A validated D-Bus object path such as `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public var description: String { rawValue }

    public static let root = ObjectPath(unchecked: "/")

    public init(_ text: String) throws(ObjectPathError) {
        guard ObjectPath.isValid(text) else { throw .invalid(text) }
        rawValue = text
    }

    /// For literals known to be valid; checked in debug builds.
    public init(unchecked text: String) {
        assert(ObjectPath.isValid(text), "invalid object path \(text)")
        rawValue = text
    }

    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = false
        for b in bytes {
            let slash = b == UInt8(ascii: "/")
            if slash && previousSlash { return false }
            previousSlash = slash
            if slash { continue }
            let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
            if !ok { return false }
        }
        return true
    }

    public func appending(_ element: String) -> ObjectPath {
        ObjectPath(unchecked: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// True when `self` lies strictly below `ancestor` (BlueZ nests characteristics under
    /// services under devices under adapters, so removal of a parent implies its children).
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        if ancestor.rawValue == "/" { return rawValue != "/" }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    public var lastElement: Substring {
        rawValue.split(separator: "/").last ?? ""
    }

    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }
}
