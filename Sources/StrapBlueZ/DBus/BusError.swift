import StrapDBus
import StrapOS

/// Everything that can go wrong talking to the bus, with enough context to log.
public enum BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An sd-bus call returned a negative errno.
    case errno(String, Int32)
    /// The peer answered with an error reply (BlueZ's names live here).
    case reply(DBusErrorReply)
    /// A reply or signal did not have the shape we expected.
    case decoding(String)
    case encoding(String)
    /// The connection to the bus is gone.
    case closed

    public var description: String {
        switch self {
        case .errno(let op, let code): "\(op): \(Errno(rawValue: code))"
        case .reply(let reply): reply.description
        case .decoding(let what): "unexpected D-Bus data: \(what)"
        case .encoding(let what): "cannot encode: \(what)"
        case .closed: "bus connection closed"
        }
    }

    /// The error name when this is an error reply.
    public var errorName: String? {
        if case .reply(let r) = self { return r.name }
        return nil
    }
}
