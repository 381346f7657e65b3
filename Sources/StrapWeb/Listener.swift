import CSystemd
import Glibc

public enum ListenerError: Error, Equatable, CustomStringConvertible {
    case badAddress(String)
    /// Anything but loopback without TLS: LAN exposure is opt-in, by giving the TLS files.
    case notLoopback(String)
    case system(call: String, errno: Int32, address: String)
    case unexpectedActivationCount(Int32)
    case activatedNotTCP

    public var description: String {
        switch self {
        case .badAddress(let a): "listen address '\(a)': expected HOST:PORT with HOST an IP address (127.0.0.1:8420, [::1]:8420)"
        case .notLoopback(let a): "listen address \(a) is not loopback: serving beyond this machine needs TLS, --tls-cert FILE and --tls-key FILE (docs/web.md)"
        case .system(let call, let errno, let address): "\(call) \(address): \(String(cString: strerror(errno)))"
        case .unexpectedActivationCount(let n): "socket activation passed \(n) sockets; strapd-web takes exactly one"
        case .activatedNotTCP: "socket activation passed a socket that is not a listening TCP socket"
        }
    }
}

/// Where strapd-web listens: an IPv4 or IPv6 address and port. Whether a non-loopback one may
/// be served is WebOptions' decision (only with TLS), not the parser's.
public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    public static let defaultAddress = ListenAddress(host: "127.0.0.1", port: 8420, ipv6: false)
    public let host: String
    public let port: UInt16
    public let ipv6: Bool

    /// `127.0.0.1:8420`, `[::1]:8420`. Names are refused: what a name resolves to can change.
    public init(parsing text: String) throws(ListenerError) {
        var host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { throw .badAddress(text) }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            ipv6 = true
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .badAddress(text) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            ipv6 = false
        }
        guard let port = UInt16(portText) else { throw .badAddress(text) }
        var probe = [UInt8](repeating: 0, count: 16)
        guard inet_pton(ipv6 ? AF_INET6 : AF_INET, String(host), &probe) == 1 else { throw .badAddress(text) }
        self.host = String(host)
        self.port = port
    }

    private var bytes: [UInt8] {
        var probe = [UInt8](repeating: 0, count: 16)
        _ = inet_pton(ipv6 ? AF_INET6 : AF_INET, host, &probe)
        return ipv6 ? probe : Array(probe.prefix(4))
    }

    /// 127.0.0.0/8 or ::1: reachable from this machine only.
    public var isLoopback: Bool { ipv6 ? bytes == [UInt8](repeating: 0, count: 15) + [1] : bytes[0] == 127 }

    /// 0.0.0.0 or ::, every address of the machine: no Host header names it.
    public var isWildcard: Bool { bytes.allSatisfy { $0 == 0 } }

    /// The address as a Host header names it: `192.0.2.2`, `[fd00::2]`.
    public var hostHeaderName: String { ipv6 ? "[\(host)]" : host }

    /// Throws unless this address may be served: loopback, or anything with TLS.
    public func requireLoopback(unlessTLS tls: Bool) throws(ListenerError) {
        guard isLoopback || tls else { throw .notLoopback(description) }
    }

    init(host: String, port: UInt16, ipv6: Bool) {
        self.host = host
        self.port = port
        self.ipv6 = ipv6
    }

    public var description: String { ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The listening socket: bound here, or passed by systemd (strapd-web.socket).
public struct Listener: Sendable {
    public let fd: Int32
    /// The address actually bound (port 0 resolved), from getsockname.
    public let address: ListenAddress

    public static func bind(_ address: ListenAddress) throws(ListenerError) -> Listener {
        let family = address.ipv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno, address: address.description) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = sockaddr_storage()
        let length = withUnsafeMutableBytes(of: &storage) { raw -> socklen_t in
            if address.ipv6 {
                var a = sockaddr_in6()
                a.sin6_family = sa_family_t(AF_INET6)
                a.sin6_port = address.port.bigEndian
                _ = inet_pton(AF_INET6, address.host, &a.sin6_addr)
                raw.storeBytes(of: a, as: sockaddr_in6.self)
                return socklen_t(MemoryLayout<sockaddr_in6>.size)
            }
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = address.port.bigEndian
            _ = inet_pton(AF_INET, address.host, &a.sin_addr)
            raw.storeBytes(of: a, as: sockaddr_in.self)
            return socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 128) == 0 else {
            let e = errno
            close(fd)
            throw .system(call: "bind", errno: e, address: address.description)
        }
        return Listener(fd: fd, address: try boundAddress(fd))
    }

    /// The socket systemd passed, or nil without socket activation. `sd_listen_fds(1)` checks
    /// LISTEN_PID and unsets the variables. Its address then goes through the same loopback
    /// rule as --listen (WebMain): the socket unit is an administrator's file, and the rule is
    /// strapd-web's.
    public static func activated(count: Int32 = sd_listen_fds(1), firstFD: Int32 = SD_LISTEN_FDS_START) throws(ListenerError) -> Listener? {
        if count < 0 { throw .system(call: "sd_listen_fds", errno: -count, address: "") }
        if count == 0 { return nil }
        guard count == 1 else { throw .unexpectedActivationCount(count) }
        guard sd_is_socket(firstFD, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 else { throw .activatedNotTCP }
        _ = fcntl(firstFD, F_SETFD, FD_CLOEXEC)
        return Listener(fd: firstFD, address: try boundAddress(firstFD))
    }

    /// inet_ntop's NUL-terminated text.
    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func boundAddress(_ fd: Int32) throws(ListenerError) -> ListenAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard got == 0 else { throw .system(call: "getsockname", errno: errno, address: "fd \(fd)") }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let parsed: String
        switch Int32(storage.ss_family) {
        case AF_INET:
            let a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee } }
            var addr = a.sin_addr
            inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
            parsed = "\(Self.string(text)):\(UInt16(bigEndian: a.sin_port))"
        case AF_INET6:
            let a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee } }
            var addr = a.sin6_addr
            inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
            parsed = "[\(Self.string(text))]:\(UInt16(bigEndian: a.sin6_port))"
        default:
            throw .activatedNotTCP
        }
        return try ListenAddress(parsing: parsed)
    }
}
