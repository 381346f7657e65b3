/// strapctl's exit codes (strapctl(1)); 0, 1 and 2 keep their `decode` meanings.
public enum ExitCode {
    public static let success: Int32 = 0
    /// The daemon answered with an error (or `decode` got an invalid packet).
    public static let daemonError: Int32 = 1
    public static let usage: Int32 = 2
    /// No daemon to talk to: no socket, nobody listening, connection lost.
    public static let unreachable: Int32 = 3
    /// EACCES on the socket or a `notAuthorized` reply.
    public static let notAuthorized: Int32 = 4
    /// `scan --until ADDR`: the scan ended without ADDR showing up.
    public static let notFound: Int32 = 5
    /// The daemon answered `noData`: the value asked for was never set (an athlete without a
    /// profile, an unset profile field).
    public static let noData: Int32 = 6
    /// Ctrl-C ended a command that had something to finish (`workout export`: nothing written).
    public static let interrupted: Int32 = 130
}

/// Why talking to strapd failed, each with the message and exit code strapctl(1) documents.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No socket at the path, or nobody listening on it.
    case notRunning(String)
    /// EACCES on connect: the socket is 0660, group strapd.
    case permissionDenied(String)
    case io(String)
    /// The daemon closed the connection before answering.
    case closed
    /// The daemon is stopping: it ended the stream with a `shutdown` event.
    case shuttingDown
    case timedOut
    case malformed(String)

    public var description: String {
        switch self {
        case .notRunning(let path): "strapd is not running (no socket at \(path))"
        case .permissionDenied(let path): "permission denied connecting to \(path) (are you in the strapd group?)"
        case .io(let m): m
        case .closed: "strapd closed the connection"
        case .shuttingDown: "strapd is shutting down"
        case .timedOut: "timed out waiting for strapd"
        case .malformed(let m): "unreadable reply from strapd: \(m)"
        }
    }

    public var exitCode: Int32 {
        switch self {
        case .permissionDenied: ExitCode.notAuthorized
        default: ExitCode.unreachable
        }
    }
}
