import Foundation
import Testing
@testable import StrapStore
import StrapModel

@Suite struct RetentionTests {
    @Test func retentionDropsWholeSegmentsAndExpiresOldAnchors() throws {
        let dir = TempDir("retention")
        var cfg = StoreConfig(directory: dir.path, sync: .none, retention: 86_400_000)
        cfg.segmentMaxItems = 100
        let store = try Store.open(cfg)
        // 1000 samples one per 10 minutes: ~7 days over 10 segments.
        let samples = (0..<1000).map { i in
            Sample(type: .heartRate, value: Double(60 + i % 50), start: Fixtures.t0 + Millis(i) * 600_000, device: Fixtures.strap)
        }
        var stored: [Sample] = []
        for i in stride(from: 0, to: samples.count, by: 50) { stored += try store.append(Array(samples[i..<i + 50])) }
        try store.seal()
        try store.delete(uuids: [stored[950].uuid])
        let now = Fixtures.t0 + 1000 * 600_000
        try store.applyRetention(now: now)
        let oldest = store.status.oldestAnchor
        #expect(oldest > 1)
        // Whole segments only: everything from `oldest` on is kept, and it covers the last day.
        let kept = try readAll(store).added.compactMap(\.sample)
        #expect(kept.first?.anchor == oldest)
        #expect(kept.allSatisfy { $0.anchor != stored[950].anchor })
        #expect(stored.filter { $0.end >= now - 86_400_000 }.allSatisfy { $0.anchor >= oldest })
        #expect(dir.files().filter { $0.hasSuffix(".log") }.allSatisfy { Format.parseSegmentName($0)! >= oldest })

        #expect(throws: StrapError.anchorExpired(oldestValid: oldest - 1)) { try store.anchored(anchor: 5) }
        let fromOldest = try store.anchored(anchor: oldest - 1, limit: 10)
        #expect(fromOldest.added.first?.anchor == oldest)
        do {
            _ = try store.anchored(anchor: 1)
            Issue.record("expected anchorExpired")
        } catch { #expect(error.code == "anchorExpired") }
        store.close()

        // Retention 0 at reopen: what was dropped stays dropped, the rest is kept.
        let reopened = try Store.open(StoreConfig(directory: dir.path, sync: .none))
        #expect(reopened.status.oldestAnchor == oldest)
        #expect(try readAll(reopened).added.count == kept.count)
        #expect(throws: StrapError.anchorExpired(oldestValid: oldest - 1)) { try reopened.anchored(anchor: 2) }
        reopened.close()
        // Opening applies retention against the wall clock: these 2026-01 samples are all old.
        let later = try Store.open(StoreConfig(directory: dir.path, sync: .none, retention: 86_400_000))
        #expect(later.status.oldestAnchor >= oldest)
    }
}
