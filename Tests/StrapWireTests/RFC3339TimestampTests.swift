import Testing
@testable import StrapWire

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1, "1970-01-01T00:00:00.001Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
        (RFC3339Timestamp.maximumMilliseconds, "9999-12-31T23:59:59.999Z"),
        (RFC3339Timestamp.minimumMilliseconds, "0000-01-01T00:00:00.000Z"),
    ])
    func knownInstants(ms: Int64, text: String) throws {
        #expect(RFC3339Timestamp.format(millisecondsSinceEpoch: ms) == text)
        var out: [UInt8] = Array("x".utf8)
        RFC3339Timestamp.append(millisecondsSinceEpoch: ms, into: &out)
        #expect(out == Array(("x" + text).utf8))
        #expect(try RFC3339Timestamp.parse(text) == ms)
    }

    @Test func roundTripsAcrossTheRange() throws {
        // A deterministic walk with a large odd stride visits all fields and many years.
        var ms = RFC3339Timestamp.minimumMilliseconds
        let stride: Int64 = 7_919_993_311_337
        while ms <= RFC3339Timestamp.maximumMilliseconds {
            #expect(try RFC3339Timestamp.parse(RFC3339Timestamp.format(millisecondsSinceEpoch: ms)) == ms)
            ms += stride
        }
    }

    @Test func acceptsOffsetsFractionsAndLowercase() throws {
        let base = try RFC3339Timestamp.parse("2026-11-29T20:59:41.123Z")
        #expect(try RFC3339Timestamp.parse("2026-11-29T21:59:41.123+01:00") == base)
        #expect(try RFC3339Timestamp.parse("2026-11-29T15:29:41.123-05:30") == base)
        #expect(try RFC3339Timestamp.parse("2026-11-29t20:59:41.123z") == base)
        #expect(try RFC3339Timestamp.parse("2026-11-29 20:59:41.123456789Z") == base)
        #expect(try RFC3339Timestamp.parse("2026-11-29T20:59:41.1Z") == base - 23)
        #expect(try RFC3339Timestamp.parse("2026-11-29T20:59:41Z") == base - 123)
    }

    @Test(arguments: [
        "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z",
        "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-06-30T23:59:60Z", "2026-01-01T00:00:00",
        "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00Zjunk", "26-01-01T00:00:00Z",
        "", "2026-01-01",
    ])
    func rejectsInvalid(_ text: String) {
        #expect(throws: RFC3339Timestamp.ParseError.self) { try RFC3339Timestamp.parse(text) }
    }
}
