import StrapGATT
import StrapIngest
import StrapModel
import StrapWire
import StrapSimulator
import Testing
@testable import StrapDaemon

/// The live fan-out's lines (`LiveLines`, with `SampleJSON`'s quick writer) against the general
/// encoders they replaced on that path: `Reply.appendEvent` around the general sample writer
/// (kept below as it was) and `JSONWriter`'s objects, byte for byte
/// (docs/protocol.md#livesubscribe), over many random samples and events.
@Suite struct LiveLinesTests {
    /// The old path's line for one event.
    static func reference(_ event: LiveEvent, id: RequestID) -> [UInt8] {
        var out: [UInt8] = []
        switch event {
        case .samples(let samples):
            for s in samples { Reply.appendEvent(id: id, kind: "sample", dataJSON: generalSample(s), into: &out) }
        case let .change(address, change):
            Reply.appendEvent(id: id, kind: "device", dataJSON: JSONWriter.bytes(.object(DaemonJSON.change(address, change))), into: &out)
        case let .link(address, up, reason, time):
            Reply.appendEvent(id: id, kind: "link",
                              dataJSON: JSONWriter.bytes(.object(DaemonJSON.link(address, up: up, reason: reason, time: time))), into: &out)
        case let .linkQuality(address, rssi, reason):
            var o: JSONObject = ["address": .string(address), "change": .string("rssi"), "rssi": rssi.map { .int(Int64($0)) } ?? .null]
            if rssi == nil, let reason { o["rssiUnavailable"] = .string(reason) }
            Reply.appendEvent(id: id, kind: "device", dataJSON: JSONWriter.bytes(.object(o)), into: &out)
        case .quietNotification:
            break
        }
        return out
    }

    /// A live sample as the general writers write it: `SampleJSON` before its quick path.
    static func generalSample(_ s: Sample) -> [UInt8] {
        var out: [UInt8] = []
        out.appendLiteral(#"{"type":""#)
        out.append(contentsOf: s.type.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if s.type == .heartbeatSeries {
            out.appendLiteral(#","beats":["#)
            for (i, b) in s.beats.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.write(.double(b), into: &out)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            out.appendLiteral(#","value":"#)
            JSONWriter.write(.double(s.value), into: &out)
        }
        out.appendLiteral(#","unit":"#)
        JSONWriter.writeString(s.type.unit, into: &out)
        out.appendLiteral(#","start":""#)
        out.append(contentsOf: RFC3339Timestamp.format(millisecondsSinceEpoch: s.start).utf8)
        out.appendLiteral(#"","end":""#)
        out.append(contentsOf: RFC3339Timestamp.format(millisecondsSinceEpoch: s.end).utf8)
        out.appendLiteral(#"","device":"#)
        out.append(contentsOf: s.device.json)
        out.appendLiteral(#","metadata":{"#)
        for (i, key) in s.metadata.keys.sorted().enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.writeString(s.metadata[key]!, into: &out)
        }
        out.appendLiteral("}}")
        return out
    }

    static func lines(_ events: [LiveEvent], id: RequestID) -> [UInt8] {
        var lines = LiveLines()
        for e in events { lines.append(e) }
        var out: [UInt8] = []
        let n = lines.appendLines(prefix: LiveStream.linePrefix(id: id), into: &out) { _ in true }
        #expect(n == lines.count)
        return out
    }

    static func text(_ g: inout SimulationRandom) -> String {
        let alphabet: [String] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\t", "\u{01}", "\u{1F}", "é", "心", "🫀", "/", ":"]
        return (0..<Int.random(in: 0...8, using: &g)).map { _ in alphabet.randomElement(using: &g)! }.joined()
    }

    static func double(_ g: inout SimulationRandom) -> Double {
        switch Int.random(in: 0...9, using: &g) {
        case 0: Double(Int.random(in: 0...255, using: &g))
        case 1: Double(Int64.random(in: -9_007_199_254_740_992...9_007_199_254_740_992, using: &g))
        case 2: Double.random(in: -1000...1000, using: &g)
        case 3: Double.random(in: 0...1, using: &g) * 1e-300
        case 4: Double.random(in: 1e15...1e25, using: &g).rounded()
        case 5: [-0.0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                 9_007_199_254_740_992, -9_007_199_254_740_992, 0.1, 1e16].randomElement(using: &g)!
        case 6: Double(bitPattern: g.next())
        default: (Double.random(in: 0...300, using: &g) * 100).rounded() / 100
        }
    }

    static func millis(_ g: inout SimulationRandom) -> Millis {
        switch Int.random(in: 0...4, using: &g) {
        case 0: Int64.random(in: Int64.min...Int64.max, using: &g)
        case 1: Int64.random(in: RFC3339Timestamp.minimumMilliseconds - 10...RFC3339Timestamp.minimumMilliseconds + 86_400_000, using: &g)
        case 2: Int64.random(in: RFC3339Timestamp.maximumMilliseconds - 86_400_000...RFC3339Timestamp.maximumMilliseconds + 10, using: &g)
        case 3: Int64.random(in: -86_400_000 * 800...86_400_000 * 800, using: &g)
        default: 1_764_633_600_000 + Int64.random(in: 0...(86_400_000 * 366 * 4), using: &g)
        }
    }

    static func sample(_ g: inout SimulationRandom, devices: [Device]) -> Sample {
        let type = QuantityType.allCases.randomElement(using: &g)!
        var metadata: [String: String] = [:]
        if Bool.random(using: &g) {
            for _ in 0..<Int.random(in: 0...3, using: &g) { metadata[text(&g)] = text(&g) }
        }
        let beats = Bool.random(using: &g) ? (0..<Int.random(in: 0...4, using: &g)).map { _ in double(&g) } : []
        let start = millis(&g)
        return Sample(type: type, value: double(&g), start: start, end: Bool.random(using: &g) ? start : millis(&g),
                      device: devices.randomElement(using: &g)!, metadata: metadata, beats: beats)
    }

    @Test func randomSamplesEncodeAsTheGeneralEncodersDo() {
        var g = SimulationRandom(seed: 37)
        let devices = (0..<4).map { i in
            Device(id: "dev-\(i)", address: "C0:00:00:00:00:0\(i)", name: i == 0 ? "Polar \"H10\" \\ left\n" : "Strap \(i)",
                   manufacturer: i % 2 == 0 ? "Maker" : nil, model: i == 3 ? "M\u{02}" : nil)
        }
        let ids: [RequestID] = [.int(1), .int(-42), .int(Int64.max), .string("live"), .string("q\"\\\n")]
        for round in 0..<4000 {
            let samples = (0..<Int.random(in: 1...3, using: &g)).map { _ in Self.sample(&g, devices: devices) }
            let id = ids.randomElement(using: &g)!
            let events: [LiveEvent] = [.samples(samples[...])]
            let mine = Self.lines(events, id: id), theirs = Self.reference(events[0], id: id)
            #expect(mine == theirs, "round \(round): \(String(decoding: mine, as: UTF8.self)) != \(String(decoding: theirs, as: UTF8.self))")
            if mine != theirs { return }
        }
    }

    @Test func deviceLinkAndQuietEventsEncodeAsTheGeneralEncodersDo() {
        let a = "C0:00:00:00:00:01"
        let identity = Device(id: "d", address: a, name: "n", manufacturer: "M \"x\"", model: nil, serial: "1", firmware: nil)
        let events: [LiveEvent] = [
            .change(a, .identity(identity)), .change(a, .battery(95)), .change(a, .energySaturated),
            .change(a, .bodySensorLocation("chest")), .change(a, .sensorLocation("left crank")),
            .link(a, up: true, reason: nil, 1_764_633_600_123), .link(a, up: false, reason: "timeout \"x\"\n", -1),
            .linkQuality(a, rssi: -60, reason: nil), .linkQuality(a, rssi: nil, reason: "not connected"),
            .linkQuality(a, rssi: nil, reason: nil), .quietNotification(a, .heartRateMeasurement, 5),
        ]
        for id: RequestID in [.int(7), .string("s")] {
            #expect(Self.lines(events, id: id) == events.flatMap { Self.reference($0, id: id) })
        }
    }

    @Test func filtersSeeEachEventsAddressAndType() {
        let d1 = Device(id: "1", address: "A0:00:00:00:00:01", name: "one"), d2 = Device(id: "2", address: "A0:00:00:00:00:02", name: "two")
        let samples = [Sample(type: .heartRate, value: 60, start: 0, device: d1), Sample(type: .cyclingCadence, value: 90, start: 0, device: d2),
                       Sample(type: .heartRate, value: 61, start: 1, device: d2)]
        var lines = LiveLines()
        lines.append(.samples(samples[...]))
        lines.append(.link(d1.address, up: true, reason: nil, 2))
        var out: [UInt8] = []
        let n = lines.appendLines(prefix: LiveStream.linePrefix(id: .int(1)), into: &out) { $0.address == d2.address || $0.type == nil }
        #expect(n == 3)
        let expected = Self.reference(.samples(samples[1...]), id: .int(1)) + Self.reference(.link(d1.address, up: true, reason: nil, 2), id: .int(1))
        #expect(out == expected)
        lines.removeAll()
        #expect(lines.isEmpty && lines.bytes.isEmpty)
    }

    /// The line's numbers and times come from StrapWire's writers, which write digits
    /// without a String: checked here against independent readings of the same values (the
    /// RFC 3339 parser, Swift's own integer and double text).
    @Test func timestampsAndNumbersReadBackAsTheirValues() throws {
        var g = SimulationRandom(seed: 2026)
        var buffer = [UInt8](repeating: 0, count: 24)
        for _ in 0..<20_000 {
            let ms = Self.millis(&g)
            buffer.withUnsafeMutableBufferPointer { RFC3339Timestamp.write(millisecondsSinceEpoch: ms, to: $0.baseAddress!) }
            let clamped = min(max(ms, RFC3339Timestamp.minimumMilliseconds), RFC3339Timestamp.maximumMilliseconds)
            #expect(try RFC3339Timestamp.parse(String(decoding: buffer, as: UTF8.self)) == clamped, "\(ms)")
            let v = Int64(bitPattern: g.next()) >> Int.random(in: 0...63, using: &g)
            var digits: [UInt8] = []
            JSONWriter.appendInteger(v, into: &digits)
            #expect(String(decoding: digits, as: UTF8.self) == String(v))
            let d = Self.double(&g)
            var number: [UInt8] = []
            JSONWriter.appendNumber(d, into: &number)
            let whole = d.isFinite && d == d.rounded(.towardZero) && abs(d) < 9_007_199_254_740_992
            let expected = !d.isFinite ? "null" : whole ? String(Int64(d)) : String(d)
            #expect(String(decoding: number, as: UTF8.self) == expected, "\(d)")
        }
        // Fixed points: the epoch, a leap day, the clamps at both ends.
        for (ms, text) in [(Int64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_123, "2000-02-29T00:00:00.123Z"),
                           (Int64.min, "0000-01-01T00:00:00.000Z"), (Int64.max, "9999-12-31T23:59:59.999Z"),
                           (-1, "1969-12-31T23:59:59.999Z")] {
            #expect(RFC3339Timestamp.format(millisecondsSinceEpoch: ms) == text)
        }
    }
}
