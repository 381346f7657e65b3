import Testing
@testable import StrapWire

@Suite struct EnvelopeTests {
    func request(_ s: String) throws(RequestError) -> Request { try Request.parse(line: Array(s.utf8)) }

    func failure(_ s: String) -> RequestError? {
        do { _ = try request(s); return nil } catch { return error }
    }

    @Test func parsesIntAndStringIdsAndCollectsParams() throws {
        let r = try request(#"{"id": 7, "op": "samples.anchored", "anchor": 12, "types": ["heartRate"]}"#)
        #expect(r.id == .int(7))
        #expect(r.op == "samples.anchored")
        #expect(r.params.keys == ["anchor", "types"])
        #expect(r.params["anchor"] == .int(12))
        let s = try request(#"{"op":"status","id":"abc"}"#)
        #expect(s.id == .string("abc"))
        #expect(s.params.isEmpty)
    }

    @Test(arguments: [
        ("{nope", nil as RequestID?, "invalid JSON"),
        ("[1,2]", nil, "must be a JSON object, not array"),
        ("\"str\"", nil, "not string"),
        (#"{"op":"status"}"#, nil, "missing \"id\""),
        (#"{"id":1.5,"op":"status"}"#, nil, "integer or a string, not number"),
        (#"{"id":true,"op":"status"}"#, nil, "not boolean"),
        (#"{"id":null,"op":"status"}"#, nil, "not null"),
        (#"{"id":"","op":"status"}"#, nil, "non-empty"),
        (#"{"id":3}"#, .int(3), "missing \"op\""),
        (#"{"id":"x","op":5}"#, .string("x"), "\"op\" must be a string, not number"),
        (#"{"id":4,"op":""}"#, .int(4), "non-empty"),
    ])
    func malformedRequestsAreBadRequest(line: String, id: RequestID?, fragment: String) throws {
        let error = try #require(failure(line))
        #expect(error.error.code == .badRequest)
        #expect(error.id == id)
        #expect(error.error.message.contains(fragment), "\(error.error.message)")
    }

    @Test func unknownOpIsParsedNotRejected() throws {
        // Whether an op exists is the daemon's decision (`unknownOp`), not the envelope's.
        let r = try request(#"{"id":1,"op":"no.such.op"}"#)
        #expect(r.op == "no.such.op")
    }

    @Test func replyShapesMatchSpec() throws {
        let ok = Reply.success(id: .int(1), result: ["anchor": .int(5)])
        #expect(String(decoding: ok, as: UTF8.self) == "{\"id\":1,\"ok\":true,\"result\":{\"anchor\":5}}\n")
        let err = Reply.failure(id: .string("q"), error: WireError(.notAuthorized, "no \"read\" grant"))
        #expect(String(decoding: err, as: UTF8.self) == "{\"id\":\"q\",\"ok\":false,\"error\":{\"code\":\"notAuthorized\",\"message\":\"no \\\"read\\\" grant\"}}\n")
        let nullID = Reply.failure(id: nil, error: WireError(.badRequest, "x"))
        #expect(String(decoding: nullID, as: UTF8.self).hasPrefix("{\"id\":null,\"ok\":false"))
        let ev = Reply.event(id: .int(2), kind: "dropped", data: ["count": .int(3)])
        #expect(String(decoding: ev, as: UTF8.self) == "{\"id\":2,\"event\":\"dropped\",\"data\":{\"count\":3}}\n")
        let expired = Reply.failure(id: .int(9), error: WireError(.anchorExpired, "gone", data: ["oldestAnchor": .int(100)]))
        let parsed = try JSONParser.parse(expired.dropLast())
        guard case .object(let o) = parsed, case .object(let e)? = o["error"] else { Issue.record("shape"); return }
        #expect(e["data"] == .object(["oldestAnchor": .int(100)]))
        let raw = Reply.success(id: .int(3), resultJSON: Array(#"{"x":1}"#.utf8))
        #expect(try JSONParser.parse(raw.dropLast()) == .object(["id": .int(3), "ok": .bool(true), "result": .object(["x": .int(1)])]))
        // Raw event data: the same bytes as the value form, and appendable line after line.
        let rawEvent = Reply.event(id: .int(2), kind: "dropped", dataJSON: Array(#"{"count":3}"#.utf8))
        #expect(rawEvent == ev)
        var lines: [UInt8] = []
        Reply.appendEvent(id: .string("s"), kind: "added", dataJSON: Array("{}".utf8), into: &lines)
        Reply.appendEvent(id: .string("s"), kind: "deleted", dataJSON: Array("{}".utf8), into: &lines)
        #expect(String(decoding: lines, as: UTF8.self) == "{\"id\":\"s\",\"event\":\"added\",\"data\":{}}\n{\"id\":\"s\",\"event\":\"deleted\",\"data\":{}}\n")
    }

    @Test func everyErrorCodeHasItsSpecName() {
        #expect(ErrorCode.allCases.map(\.rawValue) == [
            "badRequest", "unknownOp", "notAuthorized", "notFound", "noData", "invalidOption",
            "invalidTransition", "anchorExpired", "anchorAhead", "busy", "unavailable", "internal",
        ])
    }
}
