import CShims
import Glibc

/// A POSIX error number, typed (the swift-system model): named statics for the codes
/// the daemon reacts to, and the C library's text as its description.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's `errno`.
    public static var current: Errno {
        get { Errno(rawValue: errno) }
        set { errno = newValue.rawValue }
    }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    public static let noMemory = Errno(rawValue: ENOMEM)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let notSocket = Errno(rawValue: ENOTSOCK)
    public static let notConnected = Errno(rawValue: ENOTCONN)
    public static let protocolError = Errno(rawValue: EPROTO)

    /// Errors that mean "the peer went away", not "something is wrong with us".
    public var isDisconnect: Bool {
        self == .brokenPipe || self == .connectionReset || self == .notConnected || self == .connectionAborted
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cshims_strerror(rawValue, $0.baseAddress, $0.count) }
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return "\(text) (errno \(rawValue))"
    }
}

/// A failed system call: which call, and why. Every wrapper in this module throws this,
/// so a log line always names the call that failed.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Errno

    public init(_ call: String, _ errno: Errno) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(errno)" }
}
