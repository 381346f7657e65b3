import Foundation
import Glibc
import Testing
import StrapControl
import StrapModel
import StrapSystem
import StrapWire
@testable import StrapDaemon

/// Issue 15: promises of docs/protocol.md that a client author found broken — reply sizes,
/// limits that must hold with any `client_buffer`, enum and number parameters, addresses,
/// integers — and fair service under one client's heavy pipeline.
@Suite struct ClientEdgeTests {
    static let twoMiB = 2 << 20

    /// Item 3: the cut counts the envelope and a 256-byte echoed id.
    @Test func cutRepliesStayUnderTwoMebibytesWithTheLongestId() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(20_000))
        try h.store.sync()
        let c = try h.client()
        let id = String(repeating: "i", count: Request.maximumIDLength)
        for request in [#"{"id":"\#(id)","op":"samples.query"}"#, #"{"id":"\#(id)","op":"samples.anchored","limit":20000}"#] {
            try c.send(request)
            let line = try #require(try c.readLine())
            #expect(line.count + 1 < Self.twoMiB, "\(line.count + 1) bytes")
            guard case .object(let reply) = try JSONParser.parse(line) else { Issue.record("not an object"); continue }
            let r = reply.result
            #expect(r["truncated"] == .bool(true) || (r.int("anchor") ?? 0) < 20_000, "the reply was not cut")
            #expect(line.count > Self.twoMiB - 4096, "cut far below the limit: \(line.count)")
        }
    }

    /// Item 2: the documented 100 000 intervals hold; large collections come in pages that
    /// continue exactly where the previous one ended.
    @Test func aHundredThousandIntervalsArriveInPages() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(600))
        try h.store.sync()
        let c = try h.client()
        let from = "2023-11-14T22:00:00Z", end = "2024-01-23T08:40:00Z"  // 100 000 minutes
        var start = from, intervals: [String] = [], pages = 0
        while true {
            pages += 1
            try c.send(#"{"id":\#(pages),"op":"statistics.collection","type":"heartRate","options":["average"],"interval":{"minutes":1},"anchorDate":"\#(from)","from":"\#(start)","to":"\#(end)","timeZone":"UTC"}"#)
            let line = try #require(try c.readLine())
            #expect(line.count + 1 < Self.twoMiB)
            guard case .object(let reply) = try JSONParser.parse(line), reply.isOK else { Issue.record("failed: \(String(decoding: line.prefix(300), as: UTF8.self))"); return }
            intervals += reply.result.objects("statistics").compactMap { $0.string("start") }
            guard reply.result["truncated"] == .bool(true), let next = reply.result.string("next") else { break }
            start = next
            if pages > 40 { Issue.record("too many pages"); return }
        }
        #expect(pages > 1)
        #expect(intervals.count == 100_000)
        #expect(Set(intervals).count == 100_000, "an interval repeated across pages")
    }

    /// Item 4: with the smallest client buffer strapd.conf allows, a follower over a long
    /// backlog gets every item, in pages sized to the buffer.
    @Test func aFollowerWithTheSmallestClientBufferGetsEveryItem() throws {
        let h = try RouterHarness(outputLimits: OutputLimits(clientBuffer: 64 << 10))
        defer { h.close() }
        try h.store.append(heartRates(5_000))
        try h.store.sync()
        let c = try h.client()
        let first = try c.call(#"{"id":1,"op":"samples.anchored","limit":1,"follow":true}"#)
        #expect(first.isOK && first.result.objects("added").count == 1)
        var added = 1
        while added < 5_000, let m = try c.readMessage() {
            #expect(m.event == "added", "\(m)")
            if m.event != "added" { break }
            added += 1
        }
        #expect(added == 5_000)
        // And a query's reply is cut to the buffer rather than refused as `busy` for good.
        let q = try c.call(#"{"id":2,"op":"samples.query"}"#)
        #expect(q.isOK && q.result["truncated"] == .bool(true))
    }

    /// Issue 14 item 1: a reader whose anchor is past the store's end (the store lost its
    /// unflushed tail with sync = none) is told so, never silently parked past anchors the
    /// store will hand out again.
    @Test func anAnchorAheadOfTheStoreIsAnError() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(10))
        try h.store.sync()
        let c = try h.client()
        #expect(try c.call(#"{"id":1,"op":"samples.anchored","anchor":10}"#).isOK)
        for (id, follow) in [(2, false), (3, true)] {
            let r = try c.call(#"{"id":\#(id),"op":"samples.anchored","anchor":15,"follow":\#(follow)}"#)
            #expect(r.errorCode == "anchorAhead", "\(r)")
            guard case .object(let e)? = r["error"], case .object(let data)? = e["data"] else { Issue.record("no data"); continue }
            #expect(data.int("latestAnchor") == 10)
        }
        #expect(try c.call(#"{"id":4,"op":"cancel"}"#).errorCode == "notFound", "a failed follow left a stream")
    }

    /// Item 6 and the parameters' rough edges: each refused by name, with the accepted values.
    @Test func malformedParametersAreRefusedByName() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        let zone = try c.call(#"{"id":1,"op":"statistics.collection","type":"heartRate","options":["average"],"interval":{"hours":1},"from":"2023-11-14T22:00:00Z","to":"2023-11-14T23:00:00Z","timeZone":"UTC\u0000junk"}"#)
        #expect(zone.errorCode == "badRequest")
        #expect(zone.errorMessage?.contains("timeZone") == true)
        let huge = try c.call(#"{"id":2,"op":"statistics.collection","type":"heartRate","options":["average"],"interval":{"minutes":9223372036854775807},"from":"2023-11-14T22:00:00Z","to":"2023-11-14T23:00:00Z"}"#)
        #expect(huge.errorMessage?.contains("too large") == true, "\(huge)")
        try c.sendRaw(Array(#"{"id":3,"op":"samples.query","limit":1e400}"#.utf8) + [0x0A])
        let overflow = try #require(try c.readMessage())
        #expect(overflow.errorCode == "badRequest" && overflow["id"] == .int(3), "\(overflow)")
        #expect(overflow.errorMessage?.contains("limit") == true)
        let type = try c.call(#"{"id":4,"op":"samples.query","types":["bogus"]}"#)
        #expect(type.errorMessage?.contains("\"types\"") == true && type.errorMessage?.contains("heartRate") == true, "\(type)")
        let predicate = try c.call(#"{"id":5,"op":"samples.query","predicate":{"types":["bogus"]}}"#)
        #expect(predicate.errorMessage?.contains("one of: ") == true, "\(predicate)")
        let option = try c.call(#"{"id":6,"op":"statistics.query","type":"heartRate","options":["median"],"from":"2023-11-14T22:00:00Z","to":"2023-11-14T23:00:00Z"}"#)
        #expect(option.errorMessage?.contains("mostRecent") == true, "\(option)")
    }

    @Test func addressesIgnoreCaseAndAreValidated() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.ingest(seconds: 2)
        let c = try h.client()
        let address = h.identities[0].address
        let info = try c.call(#"{"id":1,"op":"devices.info","address":"\#(address.lowercased())"}"#)
        #expect(info.isOK && info.result.string("address") == address, "\(info)")
        try c.sendRaw(Array(#"{"id":2,"op":"devices.info","address":""#.utf8) + [UInt8](repeating: 0x41, count: 1 << 20) + Array("\"}\n".utf8))
        let long = try #require(try c.readMessage())
        #expect(long.errorCode == "badRequest")
        #expect((long.errorMessage?.utf8.count ?? .max) < 200)
    }

    /// Whole numbers are JSON integers: typed clients decode them into integer types.
    @Test func integralValuesAreJSONIntegers() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(3))
        try h.store.sync()
        let c = try h.client()
        try c.send(#"{"id":1,"op":"samples.query","limit":1}"#)
        let line = String(decoding: try #require(try c.readLine()), as: UTF8.self)
        #expect(line.contains(#""value":60,"#) || line.contains(#""value":60}"#), "\(line)")
        #expect(!line.contains(".0,") && !line.contains(".0}"), "\(line)")
    }

    /// Item 7: one connection's heavy requests run one at a time, so another client's
    /// `status` is answered while that pipeline is still queued (no clock involved).
    @Test func aHeavyPipelineDoesNotQueueOtherClients() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(20_000))
        try h.store.sync()
        let heavy = try h.client()
        var batch: [UInt8] = []
        for i in 0..<12 {
            batch += Array(#"{"id":\#(i),"op":"statistics.collection","type":"heartRate","options":["average"],"interval":{"minutes":1},"from":"2023-11-10T00:00:00Z","to":"2023-11-17T00:00:00Z","timeZone":"UTC"}"#.utf8)
            batch.append(0x0A)
        }
        try heavy.sendRaw(batch)
        #expect(try waitFor { h.onServerQueue { h.router.queuedHeavyRequests } > 0 })
        let other = try h.client()
        #expect(try other.call(#"{"id":"s","op":"status"}"#).isOK)
        #expect(h.onServerQueue { h.router.queuedHeavyRequests } > 0, "status waited for the whole pipeline")
        // Every heavy request is still answered (`busy` when its 2 MiB page found the
        // unread buffer full: that one the client may retry).
        var answered = Set<Int64>()
        while answered.count < 12, let m = try heavy.readMessage() {
            #expect(m.isOK || m.errorCode == "busy")
            if case .int(let i)? = m["id"] { answered.insert(i) }
        }
        #expect(answered.count == 12)
    }
}
