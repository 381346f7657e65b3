import Foundation
import StrapKit
import Testing

/// `AnchoredQuery` against the in-process daemon: catch-up in pages, follow with no gap or
/// duplicate (across a daemon restart too), and cancellation releasing the daemon's follower.
@Suite(.timeLimit(.minutes(2))) struct AnchoredQueryTests {
    /// The heart-rate anchors the daemon's store holds, read from the store itself.
    func storedHeartRateAnchors(_ h: DaemonHarness) throws -> [UInt64] {
        try h.store.anchored(types: [.quantity(.heartRate)]).added.map(\.anchor)
    }

    @Test func catchUpReadsEveryItemInPagesAndContinuesFromItsAnchor() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 30)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let everything = try h.store.anchored(anchor: 0).added.map(\.anchor)
        #expect(everything.count > 100)

        let all = try await AnchoredQuery().result(for: store)
        #expect(all.added.map(\.anchor) == everything)
        #expect(all.newAnchor == everything.last)
        // Read from the line's bytes, every item equals the store's own: values, times, beats
        // of heartbeat series, metadata, devices.
        #expect(all.added == (try h.store.anchored(anchor: 0).added))
        #expect(all.addedSamples.contains { !$0.beats.isEmpty })

        // A limit bounds the answer; continuing from its anchor reads the rest exactly.
        let head = try await AnchoredQuery(limit: 40).result(for: store)
        let tail = try await AnchoredQuery(anchor: head.newAnchor).result(for: store)
        #expect(head.added.count == 40)
        #expect(head.added.map(\.anchor) + tail.added.map(\.anchor) == everything)

        // Samples keep their devices, shared per sensor as the model wants.
        let samples = all.addedSamples
        #expect(Set(samples.map(\.device.id)) == Set(h.identities.map(\.address)))
        let byDevice = Dictionary(grouping: samples, by: \.device.id)
        for (_, group) in byDevice { #expect(group.allSatisfy { $0.device === group[0].device }) }

        // A workout and a deletion among the items: read the general way, in the same order.
        let session = WorkoutSession(store: store, configuration: WorkoutConfiguration(activityType: .walking))
        try await session.start()
        try h.advance(to: 35)
        let workout = try await session.end()
        let victim = try #require(samples.first)
        _ = try await store.request("samples.delete", ["uuids": .array([.string(victim.uuid.uuidString)])])
        let more = try await AnchoredQuery(anchor: all.newAnchor).result(for: store)
        let expected = try h.store.anchored(anchor: all.newAnchor)
        #expect(more.added == expected.added)
        #expect(more.added.contains { if case .workout(let w) = $0 { w.uuid == workout.uuid } else { false } })
        #expect(more.deleted == expected.deleted && more.deleted.map(\.uuid) == [victim.uuid])
        let followed = try #require(try await AnchoredQuery(anchor: all.newAnchor).results(for: store).first { _ in true })
        #expect(followed.added == expected.added && followed.deleted == expected.deleted)

        // Nothing new: an empty answer at the same anchor.
        let none = try await AnchoredQuery(anchor: more.newAnchor).result(for: store)
        #expect(none.added.isEmpty && none.newAnchor == more.newAnchor)
    }

    @Test func followDeliversEveryNewItemOnceAndSurvivesADaemonRestart() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 5)
        let store = StrapStore(socket: h.socketPath, reconnect: .backoff(initial: 0.02, maximum: 0.2, attempts: 200))
        defer { store.close() }
        var iterator = AnchoredQuery(types: [.quantity(.heartRate)]).results(for: store).makeAsyncIterator()
        var seen: [UInt64] = []
        let first = try #require(try await iterator.next())
        seen += first.added.map(\.anchor)
        #expect(!seen.isEmpty)

        func follow(until target: UInt64) async throws {
            while seen.last ?? 0 < target {
                let update = try #require(try await iterator.next())
                // A first page (after the reconnect) may continue past its last item.
                #expect(update.newAnchor >= update.added.last?.anchor ?? 0)
                seen += update.added.map(\.anchor)
            }
        }
        try h.advance(to: 15)
        try await follow(until: try #require(try storedHeartRateAnchors(h).last))

        // strapd stops (the stream gets `shutdown`) and starts again; samples arrive meanwhile.
        try h.restart()
        try h.advance(to: 25)
        try await follow(until: try #require(try storedHeartRateAnchors(h).last))
        #expect(seen == (try storedHeartRateAnchors(h)))

        // The restart was visible, not silent.
        var events: [StrapStore.ConnectionEvent] = []
        for await event in store.connectionEvents {
            events.append(event)
            if case .connected(reconnect: true) = event { break }
        }
        #expect(events.first == .connected(reconnect: false))
        #expect(events.contains { if case .lost = $0 { true } else { false } })
    }

    /// A consumer on `store.executor` runs on the reader thread; between connections (the
    /// daemon restarting) its jobs go to the global queue, so it neither stalls nor misses.
    @Test func aFollowOnTheStoresExecutorDeliversEveryItemAcrossARestart() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 5)
        let store = StrapStore(socket: h.socketPath, reconnect: .backoff(initial: 0.02, maximum: 0.2, attempts: 200))
        defer { store.close() }
        let seen = try await withTaskExecutorPreference(store.executor) { () async throws -> [UInt64] in
            var seen: [UInt64] = []
            var iterator = AnchoredQuery(types: [.quantity(.heartRate)]).results(for: store).makeAsyncIterator()
            seen += try #require(try await iterator.next()).added.map(\.anchor)
            try h.advance(to: 15)
            let middle = try #require(try storedHeartRateAnchors(h).last)
            while seen.last ?? 0 < middle { seen += try #require(try await iterator.next()).added.map(\.anchor) }
            try h.restart()
            try h.advance(to: 25)
            let last = try #require(try storedHeartRateAnchors(h).last)
            while seen.last ?? 0 < last { seen += try #require(try await iterator.next()).added.map(\.anchor) }
            return seen
        }
        #expect(seen == (try storedHeartRateAnchors(h)))
        // Requests from a task on the executor are answered too.
        let version = try await withTaskExecutorPreference(store.executor) { try await store.daemonVersion() }
        #expect(!version.isEmpty)
    }

    @Test func cancellingTheTaskEndsTheStreamOnTheDaemonAndLeavesNothingWaiting() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 5)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let task = Task {
            var updates = 0
            for try await _ in AnchoredQuery().results(for: store) { updates += 1 }
            return updates
        }
        // Caught up, the follower parks in the daemon's follow engine.
        #expect(await eventually { h.parkedFollowers == 1 })
        #expect(store.outstandingRequests == 1)
        task.cancel()
        let updates = try await task.value
        #expect(updates >= 1)
        #expect(await eventually { h.parkedFollowers == 0 && store.outstandingRequests == 0 })

        // Leaving the loop early (no cancellation) ends the stream the same way.
        for try await update in AnchoredQuery().results(for: store) {
            #expect(!update.added.isEmpty)
            break
        }
        #expect(await eventually { h.parkedFollowers == 0 && store.outstandingRequests == 0 })
    }

    @Test func aPredicateIsEvaluatedByTheDaemon() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 20)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let strap = h.identities[0].address
        let from = Date(millis: DaemonHarness.origin + 5_000), to = Date(millis: DaemonHarness.origin + 10_000)
        let predicate = QueryPredicate.and([.device(address: strap), .samples(start: from, end: to, options: .strictStartDate)])
        let answer = try await AnchoredQuery(types: [.quantity(.heartRate)], predicate: predicate).result(for: store)
        let expected = try h.store.samples(matching: .and([.types([.heartRate]), .device(.id, strap),
                                                           .time(from: from.millis, to: to.millis, options: .strictStartDate)]))
        #expect(!expected.isEmpty)
        #expect(answer.addedSamples.map(\.uuid) == expected.sorted { $0.anchor < $1.anchor }.map(\.uuid))
        #expect(answer.addedSamples.allSatisfy { $0.device.id == strap && $0.start >= from.millis && $0.start < to.millis })

        // `.readings` is the daemon's `reading` predicate: the same samples as the store's.
        #expect(try QueryPredicate.readings.wire() == .object(["reading": .bool(true)]))
        let readings = try await AnchoredQuery(types: [.quantity(.heartRate)], predicate: .readings).result(for: store)
        let stored = try h.store.samples(matching: .and([.types([.heartRate]), .reading]))
        #expect(!stored.isEmpty && stored.allSatisfy(\.isHeartRateReading))
        #expect(readings.addedSamples.map(\.uuid) == stored.sorted { $0.anchor < $1.anchor }.map(\.uuid))

        // A condition the protocol cannot express is refused, not filtered here.
        await #expect(throws: StrapKitError.self) {
            _ = try await AnchoredQuery(predicate: .metadata(key: "running", value: "yes")).result(for: store)
        }
    }
}
