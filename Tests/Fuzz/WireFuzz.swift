/// The socket protocol's byte parsers: NDJSON framing, the strict JSON parser and the
/// request envelope (StrapWire). Compiled with StrapWire's sources (scripts/fuzz.sh).
@_cdecl("LLVMFuzzerTestOneInput")
public func wireFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    // Framing: feed in two uneven chunks with a tiny limit, so oversized lines are exercised.
    var decoder = LineDecoder(maximumLineLength: 64)
    let cut = size / 3
    decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<cut]))
    decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[cut...]))
    decoder.finish()
    var total = 0
    while let out = decoder.next() {
        if case let .line(line) = out {
            invariant(line.count <= 64, "line longer than the limit")
            total += line.count
        }
    }
    invariant(total <= size, "framing produced more bytes than it was given")
    // JSON: whatever parses must serialize and parse back to the same value, a whole double
    // coming back as the integer the writer makes of it (docs/protocol.md, numbers).
    if let value = try? JSONParser.parse(bytes) {
        var text: [UInt8] = []
        JSONWriter.write(value, into: &text)
        invariant((try? JSONParser.parse(text)).map(wholeAsInt) == wholeAsInt(value), "JSON round trip")
    }
    _ = try? Request.parse(line: bytes)
    return 0
}

/// `value` with every whole double below 2^53 as the integer JSONWriter writes for it.
func wholeAsInt(_ value: JSONValue) -> JSONValue {
    switch value {
    case .double(let d) where d == d.rounded(.towardZero) && abs(d) < 9_007_199_254_740_992: return .int(Int64(d))
    case .array(let items): return .array(items.map(wholeAsInt))
    case .object(let o):
        var out = JSONObject()
        for (k, v) in o.entries { out[k] = wholeAsInt(v) }
        return .object(out)
    default: return value
    }
}
