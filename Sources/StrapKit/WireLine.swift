import StrapWire

/// A reply's `result` or an event's `data`: parsed, or (for a request that asked for it) the
/// bytes of the line and the value's range in it, for a reader that decodes them in one pass.
enum Body: Sendable {
    case object(JSONObject)
    case bytes([UInt8], Range<Int>)

    /// The value as an object (bytes are parsed here).
    func object() throws(StrapKitError) -> JSONObject {
        switch self {
        case .object(let o): return o
        case let .bytes(line, range):
            guard case .object(let o)? = try? JSONParser.parse(line[range]) else { throw .malformedReply("a result that is not an object") }
            return o
        }
    }
}

/// One stream event as the daemon sent it: `{"id":N,"event":kind,"data":{...}}`.
struct WireEvent: Sendable {
    let kind: String
    let body: Body
    /// The data as an object (empty when it is not one).
    var data: JSONObject { (try? body.object()) ?? [:] }
}

/// The routing part of a line strapd wrote: its integer id, and whether it is a success reply or
/// an event (of which kind); nil for any other shape.
struct LinePrefix {
    let id: Int64
    let eventKind: String?
    /// Where the `result` or `data` value starts.
    let valueStart: Int

    private static let head = Array(#"{"id":"#.utf8)
    private static let ok = Array(#","ok":true,"result":"#.utf8)
    private static let event = Array(#","event":""#.utf8)
    private static let data = Array(#"","data":"#.utf8)

    init?(_ line: [UInt8]) {
        guard line.count > Self.head.count + 2, line.last == UInt8(ascii: "}"), line.starts(with: Self.head) else { return nil }
        var i = Self.head.count
        let negative = line[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var id: Int64 = 0
        let digits = i
        while i < line.count, line[i] >= 0x30, line[i] <= 0x39, i - digits < 18 {
            id = id * 10 + Int64(line[i] - 0x30)
            i += 1
        }
        guard i > digits, i < line.count, line[i] == UInt8(ascii: ",") else { return nil }
        self.id = negative ? -id : id
        if line[i...].starts(with: Self.ok) {
            eventKind = nil
            valueStart = i + Self.ok.count
            return
        }
        guard line[i...].starts(with: Self.event) else { return nil }
        i += Self.event.count
        let kindStart = i
        while i < line.count, line[i] != UInt8(ascii: "\""), line[i] != UInt8(ascii: "\\") { i += 1 }
        guard i < line.count, line[i...].starts(with: Self.data) else { return nil }
        eventKind = String(decoding: line[kindStart..<i], as: UTF8.self)
        valueStart = i + Self.data.count
    }
}
