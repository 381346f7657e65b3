import Foundation
import Testing
import StrapControl
import StrapModel
import StrapWire
@testable import StrapDaemon

@Suite struct ProtocolConformanceTests {
    @Test func statusAnswersWithStoreAndClients() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.ingest(seconds: 30)
        let c = try h.client()
        let reply = try c.call(#"{"id":1,"op":"status"}"#)
        #expect(reply.isOK)
        #expect(reply.result.int("clients") == 1)
        guard case .object(let store)? = reply.result["store"] else { Issue.record("no store"); return }
        #expect(store.int("latestAnchor") == Int64(h.store.latestAnchor) && h.store.latestAnchor > 0)
        #expect(reply.result.string("mode") == "simulate")
    }
}
