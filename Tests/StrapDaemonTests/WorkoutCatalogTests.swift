import Foundation
import StrapModel
import StrapStore
import Testing
@testable import StrapDaemon

/// The saved-workout index over a store that forgets: retention can drop the segments past the
/// index's anchor while nobody asks it anything.
@Suite struct WorkoutCatalogTests {
    static let t0: Millis = 1_700_000_000_000
    static let day: Millis = 86_400_000
    static let strap = Device(id: "AA:00:00:00:00:01", address: "AA:00:00:00:00:01", name: "strap")

    static func workout(at start: Millis, session: UUID) -> Workout {
        var w = Workout(activityType: "cycling", start: start, end: start + 600_000, deviceIDs: [strap.id])
        w.sessionID = session
        return w
    }

    /// A day of heart rate, one sample every 10 minutes from `from`, in segments of 50 items.
    static func day(of store: Store, from: Millis) throws {
        let samples = (0..<144).map { Sample(type: .heartRate, value: 100, start: from + Millis($0) * 600_000, device: strap) }
        for i in stride(from: 0, to: samples.count, by: 48) { _ = try store.append(Array(samples[i..<i + 48])) }
    }

    @Test func theIndexRecoversWhenRetentionExpiresItsAnchor() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = StoreConfig(directory: dir, sync: .none, retention: Self.day)
        config.segmentMaxItems = 50
        let store = try Store.open(config)
        defer { store.close() }
        let catalog = WorkoutCatalog(store: store)

        // An old workout, read into the index; then the index sits idle for three days.
        let oldSession = UUID(), newSession = UUID()
        try Self.day(of: store, from: Self.t0)
        let old = try store.save(Self.workout(at: Self.t0 + 3_600_000, session: oldSession))
        #expect(try catalog.workouts(from: nil, to: nil, limit: 10).map(\.uuid) == [old.uuid])
        try Self.day(of: store, from: Self.t0 + Self.day)
        try Self.day(of: store, from: Self.t0 + 2 * Self.day)
        let recent = try store.save(Self.workout(at: Self.t0 + 3 * Self.day - 3_600_000, session: newSession))
        try store.seal()
        try store.applyRetention(now: Self.t0 + 3 * Self.day)
        // The premise: the index's anchor is now older than the oldest the store keeps.
        let oldest = store.status.oldestAnchor
        #expect(oldest > old.anchor + 1)
        #expect(throws: StrapError.anchorExpired(oldestValid: oldest - 1)) {
            try store.anchored(types: [.workout], anchor: old.anchor, limit: 10)
        }

        // It answers from what the store keeps: the dropped workout is gone, the new one found.
        #expect(try catalog.workouts(from: nil, to: nil, limit: 10).map(\.uuid) == [recent.uuid])
        #expect(try catalog.workout(newSession)?.uuid == recent.uuid)
        #expect(try catalog.workout(oldSession) == nil)
        // And keeps up from there on.
        let next = try store.save(Self.workout(at: Self.t0 + 3 * Self.day, session: UUID()))
        #expect(try catalog.workouts(from: nil, to: nil, limit: 10).map(\.uuid) == [next.uuid, recent.uuid])
    }
}
