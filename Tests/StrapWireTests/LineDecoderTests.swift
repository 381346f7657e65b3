import Testing
@testable import StrapWire

@Suite struct LineDecoderTests {
    func drain(_ d: inout LineDecoder) -> [LineDecoder.Output] {
        var out: [LineDecoder.Output] = []
        while let o = d.next() { out.append(o) }
        return out
    }

    func lines(_ s: String) -> [LineDecoder.Output] { s.split(separator: "|").map { .line(Array($0.utf8)) } }

    @Test func splitsAcrossReadsAndSkipsEmptyLines() {
        var d = LineDecoder()
        let input = Array("{\"a\":1}\n\n{\"b\":2}\r\n\r\n{\"c\":".utf8)
        var out: [LineDecoder.Output] = []
        for byte in input { d.feed([byte]); out += drain(&d) }
        #expect(out == lines("{\"a\":1}|{\"b\":2}"))
        d.feed(Array("3}\n".utf8))
        #expect(drain(&d) == lines("{\"c\":3}"))
        #expect(d.bufferedByteCount == 0)
    }

    @Test func finalUnterminatedLineIsDeliveredOnFinish() {
        var d = LineDecoder()
        d.feed(Array("one\ntwo".utf8))
        #expect(drain(&d) == lines("one"))
        d.finish()
        #expect(drain(&d) == lines("two"))
    }

    @Test func exactlyTheLimitPassesAndOneMoreIsOversized() {
        let limit = LineDecoder.defaultMaximumLineLength
        var d = LineDecoder()
        let exact = [UInt8](repeating: UInt8(ascii: "x"), count: limit)
        d.feed(exact + [0x0D, 0x0A])
        #expect(drain(&d) == [.line(exact)])

        d.feed(exact + [UInt8(ascii: "y"), 0x0A] + Array("after\n".utf8))
        let out = drain(&d)
        #expect(out.count == 2)
        guard case .oversized = out.first else { Issue.record("expected oversized, got \(out)"); return }
        #expect(out.last == .line(Array("after".utf8)))
    }

    @Test func oversizedLineIsDiscardedWithoutBufferingAndResyncs() {
        var d = LineDecoder(maximumLineLength: 16)
        d.feed([UInt8](repeating: 0x41, count: 17))
        #expect(drain(&d).isEmpty)  // 17 could still be 16 + "\r"
        d.feed([UInt8](repeating: 0x41, count: 10))
        let first = drain(&d)
        #expect(first == [.oversized(discardedSoFar: 27)])
        for _ in 0..<100 {
            d.feed([UInt8](repeating: 0x42, count: 1000))
            #expect(drain(&d).isEmpty)
            #expect(d.bufferedByteCount <= 17)
        }
        d.feed(Array("tail\nok\n".utf8))
        #expect(drain(&d) == lines("ok"))
    }

    @Test func binaryGarbageIsFramedNotInterpreted() {
        var d = LineDecoder()
        let garbage: [UInt8] = [0x00, 0xFF, 0xC3, 0x28, 0x0D, 0x7F]
        d.feed(garbage + [0x0A])
        #expect(drain(&d) == [.line(garbage)])
    }
}
