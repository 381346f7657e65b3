/// Encoders for the three server-to-client line shapes (docs/protocol.md#replies, #streams). Each
/// returns one complete NDJSON line including the trailing newline, with the fields in the order
/// docs/protocol.md shows them. Strings inside are escaped by `JSONWriter`, so no value can contain
/// a raw newline and break framing.
public enum Reply {
    /// `{"id":..,"ok":true,"result":{..}}`
    public static func success(id: RequestID, result: JSONObject = JSONObject()) -> [UInt8] {
        var out = prefix(id: id)
        out.appendLiteral(#","ok":true,"result":"#)
        JSONWriter.write(.object(result), into: &out)
        return finish(&out)
    }

    /// The same shape with an already-encoded result object (the daemon may encode large
    /// results straight to bytes). `resultJSON` must be one JSON object without newlines.
    public static func success(id: RequestID, resultJSON: some Sequence<UInt8>) -> [UInt8] {
        var out = prefix(id: id)
        out.appendLiteral(#","ok":true,"result":"#)
        out.append(contentsOf: resultJSON)
        return finish(&out)
    }

    /// `{"id":..,"ok":false,"error":{"code":..,"message":..}}`; `id` nil writes `null`
    /// (a request whose id could not be read). Extra `data` goes inside `error`.
    public static func failure(id: RequestID?, error: WireError) -> [UInt8] {
        var out: [UInt8] = []
        out.appendLiteral(#"{"id":"#)
        JSONWriter.write(id?.json ?? .null, into: &out)
        out.appendLiteral(#","ok":false,"error":{"code":"#)
        JSONWriter.writeString(error.code.rawValue, into: &out)
        out.appendLiteral(#","message":"#)
        JSONWriter.writeString(error.message, into: &out)
        if let data = error.data {
            out.appendLiteral(#","data":"#)
            JSONWriter.write(.object(data), into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return finish(&out)
    }

    public static func failure(_ error: RequestError) -> [UInt8] {
        failure(id: error.id, error: error.error)
    }

    /// `{"id":..,"event":"..","data":{..}}`
    public static func event(id: RequestID, kind: String, data: JSONObject = JSONObject()) -> [UInt8] {
        var out = prefix(id: id)
        out.appendLiteral(#","event":"#)
        JSONWriter.writeString(kind, into: &out)
        out.appendLiteral(#","data":"#)
        JSONWriter.write(.object(data), into: &out)
        return finish(&out)
    }

    /// The event shape with already-encoded `data` (one JSON value without newlines): hot
    /// streams encode each sample once and reuse the bytes for every subscriber.
    public static func event(id: RequestID, kind: String, dataJSON: some Sequence<UInt8>) -> [UInt8] {
        var out = prefix(id: id)
        appendEvent(kind: kind, dataJSON: dataJSON, into: &out)
        return out
    }

    /// Appends an event line for `id` to `out` (many events, one buffer).
    public static func appendEvent(id: RequestID, kind: String, dataJSON: some Sequence<UInt8>, into out: inout [UInt8]) {
        out.appendLiteral(#"{"id":"#)
        JSONWriter.write(id.json, into: &out)
        appendEvent(kind: kind, dataJSON: dataJSON, into: &out)
    }

    private static func appendEvent(kind: String, dataJSON: some Sequence<UInt8>, into out: inout [UInt8]) {
        out.appendLiteral(#","event":"#)
        JSONWriter.writeString(kind, into: &out)
        out.appendLiteral(#","data":"#)
        out.append(contentsOf: dataJSON)
        out.append(contentsOf: "}\n".utf8)
    }

    private static func prefix(id: RequestID) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        out.appendLiteral(#"{"id":"#)
        JSONWriter.write(id.json, into: &out)
        return out
    }

    private static func finish(_ out: inout [UInt8]) -> [UInt8] {
        out.append(contentsOf: "}\n".utf8)
        return out
    }
}
