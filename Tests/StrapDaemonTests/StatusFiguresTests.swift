import Foundation
import Glibc
import ProtocolDriver
import StrapWire
import Testing
@testable import StrapDaemon

/// The figures `status` added for strapd-web's metrics (docs/protocol.md, "status"): samples
/// per quantity type, the store's bytes, and the streams following the store.
@Suite struct StatusFiguresTests {
    static func object(_ value: JSONValue?) -> JSONObject? { if case .object(let o)? = value { o } else { nil } }
    static func integer(_ value: JSONValue) -> Int64? { if case .int(let n) = value { n } else { nil } }

    @Test func samplesByTypeAreTheStoresAndAddUpToTheTotal() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.ingest(seconds: 6)
        let c = try h.client()
        let status = try c.call(#"{"id":1,"op":"status"}"#).result
        let pipeline = try #require(Self.object(status["pipeline"]))
        let byType = try #require(Self.object(pipeline["samplesByType"]))
        #expect(byType.entries.count >= 3, "three simulated sensors make several types: \(byType)")
        #expect(byType.entries.reduce(0) { $0 + (Self.integer($1.value) ?? 0) } == pipeline.int("samples"))
        // Each count is what the store holds of that type (nothing was deleted).
        let stored = try c.call(#"{"id":2,"op":"samples.query","limit":100000}"#).result.objects("samples")
        var counted: [String: Int64] = [:]
        for sample in stored { counted[sample.string("type") ?? "?", default: 0] += 1 }
        #expect(Dictionary(uniqueKeysWithValues: byType.entries.map { ($0.key, Self.integer($0.value) ?? -1) }) == counted)
    }

    @Test func storeBytesAreTheSegmentsRecords() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        let empty = try #require(try c.call(#"{"id":1,"op":"status"}"#).result["store"].flatMap(Self.object)?.int("bytes"))
        try h.ingest(seconds: 4)
        let bytes = try #require(try c.call(#"{"id":2,"op":"status"}"#).result["store"].flatMap(Self.object)?.int("bytes"))
        // Records only: more than before, at most what the segment files hold.
        let directory = h.directory + "/store"
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("seg-") && $0.hasSuffix(".log") }
            .reduce(Int64(0)) { total, name in
                var st = stat()
                return total + (stat(directory + "/" + name, &st) == 0 ? Int64(st.st_size) : 0)
            }
        #expect(bytes > empty && bytes <= onDisk, "bytes \(bytes), empty \(empty), segment files \(onDisk)")
    }

    @Test func followersAreTheOpenFollowStreams() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client(), follower = try h.client()
        func followers() throws -> Int64? { try c.call(#"{"id":"s","op":"status"}"#).result.int("followers") }
        #expect(try followers() == 0)
        #expect(try follower.call(#"{"id":"a","op":"samples.anchored","follow":true}"#).isOK)
        #expect(try follower.call(#"{"id":"b","op":"statistics.collection","follow":true,"type":"heartRate","options":["average"],"interval":{"minutes":1},"timeZone":"UTC","from":"2026-01-01T00:00:00Z","to":"2026-01-01T01:00:00Z"}"#).isOK)
        // A live stream is not a follower.
        #expect(try follower.call(#"{"id":"c","op":"live.subscribe"}"#).isOK)
        #expect(try followers() == 2)
        try follower.send(#"{"id":"a","op":"cancel"}"#)
        _ = try follower.read { $0.string("id") == "a" && $0.event == "cancelled" }
        #expect(try followers() == 1)
    }
}
