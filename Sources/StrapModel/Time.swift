import FoundationEssentials
import StrapWire

/// Times are kept as integer milliseconds since the Unix epoch: the protocol's precision
/// (RFC 3339 with milliseconds), exact to compare and cheap to delta-encode.
public typealias Millis = Int64

public extension Date {
    var millis: Millis { Millis((timeIntervalSince1970 * 1000).rounded()) }
    init(millis: Millis) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
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
        guard let ms = try? RFC3339Timestamp.parse(s) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self,
                                                   debugDescription: "not an RFC 3339 time: \(s)")
        }
        return ms
    }
}

/// RFC 3339 UTC with milliseconds (docs/protocol.md#times) for the model's Codable conformances;
/// one implementation, StrapWire's, behind it.
public enum RFC3339 {
    public static func string(_ ms: Millis) -> String { RFC3339Timestamp.format(millisecondsSinceEpoch: ms) }
    public static func parse(_ s: String) -> Millis? { try? RFC3339Timestamp.parse(s) }
}
