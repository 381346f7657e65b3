import CMicroHTTPD
import Glibc

public enum TLSError: Error, Equatable, CustomStringConvertible {
    /// Only one of --tls-cert and --tls-key: half a configuration is a mistake, not plain HTTP.
    case incomplete
    case unreadable(path: String, errno: Int32)
    /// The file holds no PEM block of the kind its option names.
    case notPEM(path: String, expected: String)
    /// This libmicrohttpd was built without GnuTLS.
    case unsupported
    /// libmicrohttpd (GnuTLS) did not take the pair: a key that is not the certificate's, or
    /// PEM that does not parse. Its own message, logged just before, names the GnuTLS error.
    case refused(certificate: String, key: String)

    public var description: String {
        switch self {
        case .incomplete: "--tls-cert and --tls-key go together"
        case .unreadable(let path, let e): "TLS file \(path): \(String(cString: strerror(e)))"
        case .notPEM(let path, let expected): "TLS file \(path) holds no PEM \(expected)"
        case .unsupported: "this libmicrohttpd has no TLS support (MHD_FEATURE_TLS); Debian's is built with GnuTLS"
        case .refused(let c, let k): "libmicrohttpd refused the certificate \(c) with the key \(k): the key must be the certificate's (its message above says which GnuTLS error)"
        }
    }
}

/// The certificate chain and private key strapd-web serves TLS with, as PEM text read from
/// the files --tls-cert and --tls-key name. Read before anything else happens at start, so a
/// missing or unreadable file ends strapd-web before it binds, makes a token or serves.
public struct TLSMaterial: Sendable {
    public let certificatePath: String
    public let keyPath: String
    let certificate: String
    let key: String

    public static func load(certificate: String, key: String) throws(TLSError) -> TLSMaterial {
        guard strapweb_has_tls() != 0 else { throw .unsupported }
        let certificateText = try read(certificate)
        guard certificateText.contains("-----BEGIN CERTIFICATE-----") else { throw .notPEM(path: certificate, expected: "certificate") }
        let keyText = try read(key)
        // PKCS#8 ("PRIVATE KEY"), or the older RSA/EC forms ("RSA PRIVATE KEY"); never "ENCRYPTED
        // PRIVATE KEY", for which strapd-web has no password to give.
        guard keyText.contains("PRIVATE KEY-----"), !keyText.contains("ENCRYPTED PRIVATE KEY") else {
            throw .notPEM(path: key, expected: "unencrypted private key")
        }
        return TLSMaterial(certificatePath: certificate, keyPath: key, certificate: certificateText, key: keyText)
    }

    /// A whole small file (a PEM chain is a few KiB); over 1 MiB is no certificate.
    private static func read(_ path: String) throws(TLSError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while bytes.count <= 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw .unreadable(path: path, errno: errno) }
            if n == 0 { break }
            bytes += buffer[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
