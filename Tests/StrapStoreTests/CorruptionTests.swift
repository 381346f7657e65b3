import Foundation
import Testing
@testable import StrapStore
import StrapModel

/// Torn and corrupt tails of the open segment, and bit rot in sealed segments.
@Suite struct CorruptionTests {
    static var trials: Int { ProcessInfo.processInfo.environment["STRAP_TORTURE"] == "1" ? 20_000 : 1000 }

    /// A store whose open segment holds ~150 records of mixed sizes; returns the original items.
    static func makeOpenSegment(_ dir: TempDir) throws -> (samples: [Sample], segment: String) {
        let store = try Store.open(config(dir))
        var all: [Sample] = []
        var rng = SystemRandomNumberGenerator()
        for i in 0..<150 {
            var batch = Fixtures.heartRate(count: Int.random(in: 1...12, using: &rng), start: Fixtures.t0 + Millis(i) * 60_000)
            if i % 7 == 0 { batch[0].metadata = ["note": "record \(i)"]; batch[0].value = 1.0 / 3.0 }
            if i % 11 == 0 { batch.append(Sample(type: .cyclingSpeed, value: 8.5, start: Fixtures.t0, device: Fixtures.csc)) }
            all += try store.append(batch)
        }
        store.close()
        let seg = try #require(dir.files().first { $0.hasSuffix(".log") })
        return (all, seg)
    }

    /// (end offset, anchors before it) of every record in the file.
    static func recordEnds(_ bytes: [UInt8]) -> [(end: Int, next: UInt64)] {
        var out: [(Int, UInt64)] = [(Format.headerSize, 1)]
        bytes.withUnsafeBytes { buf in
            _ = SegmentScan.walk(buf, offset: Format.headerSize, anchor: 1, end: buf.count) { rec, a in
                out.append((rec.next, a + UInt64(rec.items))); return true
            }
        }
        return out
    }

    @Test func tornAndFlippedTailsKeepExactlyTheIntactPrefix() throws {
        let src = TempDir("corrupt")
        let (samples, segName) = try Self.makeOpenSegment(src)
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: src.path + "/" + segName)))
        let storeID = try Data(contentsOf: URL(fileURLWithPath: src.path + "/store.id"))
        let ends = Self.recordEnds(original)
        #expect(ends.last!.end == original.count)
        #expect(ends.last!.next == UInt64(samples.count + 1))
        var rng = SystemRandomNumberGenerator()
        for trial in 0..<Self.trials {
            var bytes = original
            let expectedNext: UInt64
            if trial % 2 == 0 {
                let cut = Int.random(in: Format.headerSize..<original.count, using: &rng)
                bytes.removeLast(original.count - cut)
                expectedNext = ends.last { $0.end <= cut }!.next
            } else {
                let pos = Int.random(in: Format.headerSize..<original.count, using: &rng)
                bytes[pos] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                expectedNext = ends.last { $0.end <= pos }!.next
            }
            let dir = TempDir("corrupt")
            try Data(bytes).write(to: URL(fileURLWithPath: dir.path + "/" + segName))
            try storeID.write(to: URL(fileURLWithPath: dir.path + "/store.id"))
            let store = try Store.open(config(dir))
            let got = try readAll(store, limit: 400).added.compactMap(\.sample)
            if got != Array(samples.prefix(Int(expectedNext - 1))) {
                Issue.record("trial \(trial): kept \(got.count) samples, expected \(expectedNext - 1)")
                return
            }
            // The truncated store accepts appends right after the intact prefix.
            let more = try store.append(Fixtures.heartRate(count: 3))
            #expect(more.first?.anchor == expectedNext)
        }
    }

    @Test func flippedBitInSealedSegmentIsReportedAndSkipped() throws {
        var rng = SystemRandomNumberGenerator()
        for trial in 0..<40 {
            let dir = TempDir("sealed")
            var cfg = config(dir)
            cfg.segmentMaxItems = 400
            var stored: [Sample] = []
            do {
                let store = try Store.open(cfg)
                for i in 0..<30 { stored += try store.append(Fixtures.heartRate(count: 100, start: Fixtures.t0 + Millis(i) * 100_000)) }
                store.close()
            }
            let logs = dir.files().filter { $0.hasSuffix(".log") }
            #expect(logs.count >= 7)
            // A sealed one: not the last (open) segment.
            let victim = logs[Int.random(in: 0..<(logs.count - 1), using: &rng)]
            let victimFirst = Format.parseSegmentName(victim)!
            let victimEnd = Format.parseSegmentName(logs[logs.firstIndex(of: victim)! + 1])!
            let url = URL(fileURLWithPath: dir.path + "/" + (trial % 4 == 3 ? victim.replacingOccurrences(of: ".log", with: ".idx") : victim))
            var bytes = try [UInt8](Data(contentsOf: url))
            let pos = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[pos] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            try Data(bytes).write(to: url)

            let store = try Store.open(cfg)
            let got = try readAll(store, limit: 333).added.compactMap(\.sample)
            let byAnchor = Dictionary(uniqueKeysWithValues: stored.map { ($0.anchor, $0) })
            #expect(got.allSatisfy { byAnchor[$0.anchor] == $0 }, "a damaged record was served")
            let missing = Set(stored.map(\.anchor)).subtracting(got.map(\.anchor))
            #expect(missing.allSatisfy { $0 >= victimFirst && $0 < victimEnd }, "only the damaged segment may lose items")
            if !missing.isEmpty { #expect(!store.status.damage.isEmpty, "damage must be reported") }
            // Statistics and sample queries keep working around the damage.
            let stats = try store.statistics(type: .heartRate, options: .maximum, from: Fixtures.t0, to: Fixtures.t0 + 86_400_000)
            #expect(stats.count >= stored.count - missing.count - 400)
            #expect(try store.samples().count == got.count)
        }
    }
}

@Suite struct FormatEvolutionTests {
    /// A record kind this build does not know is skipped, its anchors counted; a segment of a
    /// newer format version is refused, the store left as it was.
    @Test func unknownKindsAreSkippedAndNewerSegmentsRefused() throws {
        let dir = TempDir("format")
        var first: [Sample] = []
        do {
            let store = try Store.open(config(dir))
            first = try store.append(Fixtures.heartRate(count: 10))
            store.close()
        }
        let seg = try #require(dir.files().first { $0.hasSuffix(".log") })
        let url = URL(fileURLWithPath: dir.path + "/" + seg)
        var raw = ByteWriter()
        // Kind 0x55 with 3 items and an opaque payload, framed by hand.
        var body = ByteWriter()
        body.u8(0x55); body.varint(3); body.bytes += [1, 2, 3, 4, 5]
        raw.varint(UInt64(body.bytes.count)); raw.u32(crc32(body.bytes)); raw.bytes += body.bytes
        let handle = try FileHandle(forWritingTo: url)
        handle.seekToEndOfFile()
        handle.write(Data(raw.bytes))
        try handle.close()

        let store = try Store.open(config(dir))
        #expect(store.status.damage.isEmpty, "\(store.status.damage)")
        #expect(store.latestAnchor == 13)
        let more = try store.append(Fixtures.heartRate(count: 2, start: Fixtures.t0 + 100_000))
        #expect(more.map(\.anchor) == [14, 15])
        let all = try readAll(store).added.compactMap(\.sample)
        #expect(all == first + more)
        try store.seal()
        store.close()

        // Bump the version of the sealed segment (its header CRC intact): a newer strapd wrote
        // it, so this one refuses the store and changes nothing (docs/storage.md, "Format
        // versions"), where it used to skip the segment and append past it.
        var bytes = try [UInt8](Data(contentsOf: url))
        bytes[8] = UInt8(Format.version + 1)
        bytes.replaceSubrange(40..<44, with: withUnsafeBytes(of: crc32(Array(bytes[0..<40])).littleEndian, Array.init))
        try Data(bytes).write(to: url)
        #expect(throws: StrapError.newerFormat(NewerFormat(file: url.path, kind: "store segment", version: Int(Format.version) + 1, supported: Int(Format.version)))) {
            try Store.open(config(dir))
        }
        #expect(try Data(contentsOf: url) == Data(bytes))
    }
}
