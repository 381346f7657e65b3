import Testing
@testable import StrapWire

@Suite struct JSONParserTests {
    func parse(_ s: String) throws -> JSONValue { try JSONParser.parse(Array(s.utf8)) }

    @Test func scalarsKeepIntegerAndDoubleApart() throws {
        #expect(try parse("42") == .int(42))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("4.0") == .double(4))
        #expect(try parse("1e3") == .double(1000))
        #expect(try parse("9223372036854775807") == .int(.max))
        // One past Int64: still a number, as a double.
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        // Integers are read from their digits: Int64's lower end, and one past it.
        #expect(try parse("-9223372036854775808") == .int(.min))
        #expect(try parse("-9223372036854775809") == .double(-9_223_372_036_854_775_809))
        #expect(try parse("[0,-7,1234567890123]") == .array([.int(0), .int(-7), .int(1_234_567_890_123)]))
        // A slice of a longer line parses in place (StrapKit hands the value's range).
        let line = Array(#"xx{"a":"b","n":3}yy"#.utf8)
        #expect(try JSONParser.parse(line[2..<(line.count - 2)]) == .object(["a": .string("b"), "n": .int(3)]))
        #expect(try parse("true") == .bool(true))
        #expect(try parse(" null ") == .null)
    }

    @Test func stringsWithEscapesAndSurrogates() throws {
        #expect(try parse(#""a\"b\\c\/\n\t""#) == .string("a\"b\\c/\n\t"))
        #expect(try parse(#""\u00e9\ud83d\ude00""#) == .string("é😀"))
        #expect(try parse("\"héllo\"") == .string("héllo"))
        // ASCII takes the fast path; bytes past ASCII are still checked as UTF-8.
        #expect(try parse("\"plain ascii 123\"") == .string("plain ascii 123"))
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0x61, 0xC3, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "1e", "tru", "\"abc", "\"\\x\"",
        "\"\\ud800\"", "{\"a\":1,\"a\":2}", "{a:1}", "[1 2]", "1 2", "\"\u{01}\"", "NaN",
    ])
    func rejectsMalformed(_ text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xC3, 0x22]) }
    }

    @Test func boundsNesting() throws {
        let ok = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        _ = try parse(ok)
        let deep = String(repeating: "[", count: JSONParser.maximumDepth + 1) + String(repeating: "]", count: JSONParser.maximumDepth + 1)
        #expect(throws: JSONParseError.self) { try parse(deep) }
    }

    @Test func writerRoundTripsAndEscapes() throws {
        let value: JSONValue = .object(["s": .string("a\"\n\u{01}é"), "n": .array([.int(-3), .double(2.5), .null, .bool(false)]), "o": .object([:])])
        let text = JSONWriter.string(value)
        #expect(!text.contains("\n"))
        #expect(try parse(text) == value)
        #expect(JSONWriter.string(.object(["b": .int(1), "a": .int(2)])) == #"{"b":1,"a":2}"#)
        // Whole numbers are JSON integers (issue 15); beyond 2^53 the double's own form.
        #expect(JSONWriter.string(.double(3)) == "3")
        #expect(JSONWriter.string(.double(-0.0)) == "0")
        #expect(JSONWriter.string(.double(2.5)) == "2.5")
        #expect(JSONWriter.string(.double(9_007_199_254_740_992)) == "9007199254740992.0")
        #expect(try parse(JSONWriter.string(.double(1e300))) == .double(1e300))
        #expect(JSONWriter.string(.double(.nan)) == "null")
    }

    /// The writer copies runs without escapes whole: an escape at the start, in the middle, at
    /// the end, twice in a row, and none at all must each come out exactly.
    @Test(arguments: [
        ("", #""""#),
        ("plain", #""plain""#),
        ("\"start", #""\"start""#),
        ("end\\", #""end\\""#),
        ("mid\n\tdle", #""mid\n\tdle""#),
        ("\u{01}\u{1f}", #""\u0001\u001f""#),
        ("é😀\r", #""é😀\r""#),
    ])
    func writerEscapesOnlyWhatJSONRequires(text: String, json: String) throws {
        var out: [UInt8] = []
        JSONWriter.writeString(text, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == json)
        #expect(try parse(json) == .string(text))
    }
}
