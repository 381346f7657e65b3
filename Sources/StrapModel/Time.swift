import Foundation

/// Times are kept as integer milliseconds since the Unix epoch: the protocol's precision
/// (RFC 3339 with milliseconds), exact to compare and cheap to delta-encode.
public typealias Millis = Int64

public extension Date {
    var millis: Millis { Millis((timeIntervalSince1970 * 1000).rounded()) }
    init(millis: Millis) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}

/// RFC 3339 UTC with milliseconds, as the socket protocol requires (spec §6).
public enum RFC3339 {
    public static func string(_ ms: Millis) -> String {
        let secs = Int(ms.floorDiv(1000)), milli = Int(ms - Millis(secs) * 1000)
        var t = time_t(secs)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900,
                      Int(tmv.tm_mon) + 1, Int(tmv.tm_mday), Int(tmv.tm_hour), Int(tmv.tm_min),
                      Int(tmv.tm_sec), milli)
    }

    public static func parse(_ s: String) -> Millis? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d.millis }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: s)?.millis
    }
}

public extension Int64 {
    /// Division rounding toward negative infinity (minute buckets of pre-1970 times).
    func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}

extension KeyedDecodingContainer {
    func decodeTime(_ key: Key) throws -> Millis {
        let s = try decode(String.self, forKey: key)
        guard let ms = RFC3339.parse(s) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self,
                                                   debugDescription: "not an RFC 3339 time: \(s)")
        }
        return ms
    }
}
