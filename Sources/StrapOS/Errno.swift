import CShims
import Glibc

/// A POSIX error number, typed (the swift-system model): named statics for the codes
/// strapd reacts to, and the C library's text as its description (the one place that
/// calls strerror_r).
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
    public static let diskQuotaExceeded = Errno(rawValue: EDQUOT)
    public static let ioError = Errno(rawValue: EIO)
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
    public static let notDirectory = Errno(rawValue: ENOTDIR)
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

    /// The file system (or the user's quota) is full: a state that passes, not damage.
    public var isNoSpace: Bool { self == .noSpace || self == .diskQuotaExceeded }

    /// The C library's text alone, without the number.
    public var text: String {
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cshims_strerror(rawValue, $0.baseAddress, $0.count) }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    public var description: String { "\(text) (errno \(rawValue))" }
}

/// A failed system call: which call, on which path when there is one, and why. Every
/// wrapper in this module throws this, so a log line always names the call that failed.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public let call: String
    public let path: String?
    public let errno: Errno

    public init(_ call: String, _ errno: Errno, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    public var description: String {
        if let path { return "\(call) \(path): \(errno)" }
        return "\(call): \(errno)"
    }
}
