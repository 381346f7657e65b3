import Foundation
import Testing
@testable import StrapStore
import StrapModel

/// Format version 2 (docs/storage.md, "Format versions"): the power types' codes are only ever
/// written into segments whose header says 2, and segments of version 1 are still read.
@Suite struct FormatVersionTests {
    static let meter = Device(id: "dev-power", address: "E2:00:00:00:00:04", name: "Assioma", manufacturer: "Favero")

    static func power(count: Int, start: Millis) -> [Sample] {
        (0..<count).flatMap { i -> [Sample] in
            let t = start + Millis(i) * 1000
            return [Sample(type: .cyclingPower, value: Double(180 + i % 40), start: t, device: meter),
                    Sample(type: .cyclingPowerBalance, value: 49.5, start: t, device: meter)]
        }
    }

    /// Rewrites a segment's header as version 1 wrote it (same layout, the CRC recomputed).
    static func claimVersion1(_ path: String) throws {
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        b[8] = 1; b[9] = 0
        b.replaceSubrange(40..<44, with: withUnsafeBytes(of: crc32(Array(b[0..<40])).littleEndian, Array.init))
        try Data(b).write(to: URL(fileURLWithPath: path))
    }

    static func version(_ path: String) throws -> UInt16 {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(10))
        return UInt16(b[8]) | UInt16(b[9]) << 8
    }

    @Test func powerSamplesAreStoredAndReadBackWithTheirTypes() throws {
        let dir = TempDir("power")
        let written: [Sample]
        do {
            let store = try Store.open(config(dir))
            written = try store.append(Self.power(count: 30, start: Fixtures.t0))
            store.close()
        }
        let store = try Store.open(config(dir))
        defer { store.close() }
        let read = try readAll(store).added.compactMap(\.sample)
        #expect(read == written)
        let watts: [Double] = read.filter { $0.type == .cyclingPower }.map(\.value)
        let sent: [Double] = (0..<30).map { Double(180 + $0 % 40) }
        #expect(watts == sent)
        let seg = try #require(dir.files().first { $0.hasSuffix(".log") })
        #expect(try Self.version(dir.path + "/" + seg) == Format.version)
    }

    @Test func anOpenSegmentOfVersion1IsSealedAndTheNewTypesGoToASegmentOfVersion2() throws {
        let dir = TempDir("v1tail")
        let old: [Sample]
        do {
            let store = try Store.open(config(dir))
            old = try store.append(Fixtures.heartRate(count: 20))
            store.close()
        }
        let v1 = try #require(dir.files().first { $0.hasSuffix(".log") })
        try Self.claimVersion1(dir.path + "/" + v1)
        let v1Bytes = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/" + v1))

        let added: [Sample]
        do {
            let store = try Store.open(config(dir))
            #expect(store.status.damage.isEmpty, "\(store.status.damage)")
            added = try store.append(Self.power(count: 5, start: Fixtures.t0 + 60_000))
            #expect(added.first?.anchor == old.last!.anchor + 1)
            store.close()
        }
        // The version-1 segment is as 0.1.0 left it, now sealed by an index; the power samples
        // are in a segment that says version 2.
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/" + v1)) == v1Bytes)
        #expect(dir.files().contains(v1.replacingOccurrences(of: ".log", with: ".idx")))
        let logs = dir.files().filter { $0.hasSuffix(".log") }
        #expect(logs.count == 2)
        #expect(try Self.version(dir.path + "/" + logs[1]) == Format.version)

        let store = try Store.open(config(dir))
        defer { store.close() }
        #expect(store.status.damage.isEmpty, "\(store.status.damage)")
        #expect(try readAll(store).added.compactMap(\.sample) == old + added)
    }

    @Test func anEmptyOpenSegmentOfVersion1IsReplacedNotKeptAsAnEmptySealedOne() throws {
        let dir = TempDir("v1empty")
        let old: [Sample]
        do {
            let store = try Store.open(config(dir))
            old = try store.append(Fixtures.heartRate(count: 3))
            try store.seal()
            store.close()
        }
        let logs = dir.files().filter { $0.hasSuffix(".log") }
        #expect(logs.count == 2)
        try Self.claimVersion1(dir.path + "/" + logs[1])   // the empty open segment seal() began

        do {
            let store = try Store.open(config(dir))
            #expect(store.status.damage.isEmpty, "\(store.status.damage)")
            #expect(try store.append(Self.power(count: 1, start: Fixtures.t0 + 10_000)).first?.anchor == old.last!.anchor + 1)
            store.close()
        }
        let after = dir.files().filter { $0.hasSuffix(".log") }
        #expect(after == logs, "the same name, now a version-2 segment; no empty sealed one")
        #expect(try Self.version(dir.path + "/" + after[1]) == Format.version)
        #expect(!dir.files().contains(after[1].replacingOccurrences(of: ".log", with: ".idx")))
    }
}
