import Foundation
import StrapKit
import Testing

/// `WorkoutSession` against the in-process daemon: a whole lifecycle followed through states
/// and events, the live builder's figures, a mirror in a second store exchanging messages.
@Suite(.timeLimit(.minutes(2))) struct WorkoutSessionTests {
    @Test func aLifecycleIsFollowedAndItsFiguresAreTheDaemons() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let devices = h.identities.map(\.address)
        let session = WorkoutSession(store: store, configuration: WorkoutConfiguration(activityType: .cycling, locationType: .indoor,
                                                                                        deviceIDs: devices))
        #expect(session.id == nil)
        try await session.prepare()
        let id = try #require(session.id)
        #expect(try await session.state() == .prepared)

        // Followers attach before the session moves on: nothing after this is missed.
        let states = try await session.states()
        let events = try await session.events()
        let collected = Task {
            var changes: [WorkoutSession.StateChange] = []
            for try await change in states { changes.append(change) }
            return changes
        }
        let laps = Task {
            var seen: [WorkoutSession.Event] = []
            for try await event in events { seen.append(event) }
            return seen
        }

        try await session.start()
        try h.advance(to: 10)
        try await session.lap(metadata: ["split": "1"])
        try h.advance(to: 20)
        try await session.pause()
        #expect(try await session.builder.elapsedTime() == 20)
        let heartRate = try #require(try await session.builder.statistics(for: .heartRate))
        let counted = try h.store.samples(matching: .types([.heartRate])).filter {
            $0.start > DaemonHarness.origin && $0.start <= DaemonHarness.origin + 20_000 && $0.isHeartRateReading
        }
        #expect(heartRate.count == counted.count)
        #expect(heartRate.maximum == counted.map(\.value).max())
        #expect(try await session.builder.statistics(for: .batteryLevel) == nil)
        try await session.marker(metadata: ["note": "sprint"])
        try h.advance(to: 25)
        try await session.resume()
        try h.advance(to: 30)
        let workout = try await session.end()
        #expect(workout.sessionID == id)
        #expect(workout.summary["elapsedTime"] == 25)
        #expect(workout.laps.count == 2)

        let changes = try await collected.value
        #expect(changes.map(\.to) == [.running, .paused, .running, .ended])
        #expect(changes.first?.from == .prepared)
        #expect(try await laps.value.map(\.kind) == ["lap", "marker"])
        #expect(try await laps.value.first?.metadata == ["split": "1"])
        #expect(await eventually { store.outstandingRequests == 0 })
    }

    @Test func aMirrorFollowsTheSessionAndTheyExchangeMessages() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let primaryStore = StrapStore(socket: h.socketPath)
        let mirrorStore = StrapStore(socket: h.socketPath)
        defer { primaryStore.close(); mirrorStore.close() }
        let primary = WorkoutSession(store: primaryStore, configuration: WorkoutConfiguration(activityType: .running,
                                                                                              deviceIDs: [h.identities[0].address]))
        try await primary.start()
        let mirror = WorkoutSession(mirroring: try #require(primary.id), store: mirrorStore)
        #expect(try await mirror.state() == .running)

        let toMirror = try await mirror.messages()
        let toPrimary = try await primary.messages()
        try await primary.send(.object(["pace": .string("easy")]))
        try await mirror.send(.int(42))
        var mirrorIterator = toMirror.makeAsyncIterator()
        var primaryIterator = toPrimary.makeAsyncIterator()
        #expect(try await mirrorIterator.next()?.payload == .object(["pace": .string("easy")]))
        #expect(try await primaryIterator.next()?.payload == .int(42))

        // The mirror drives the session too.
        try await mirror.pause()
        #expect(try await primary.state() == .paused)
        try await primary.discard()
        #expect(try await mirrorIterator.next() == nil)
    }

    @Test func aWatcherHearsOfEverySessionWithoutPolling() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let watcherStore = StrapStore(socket: h.socketPath)
        let store = StrapStore(socket: h.socketPath)
        defer { watcherStore.close(); store.close() }
        #expect(try await store.protocolVersion().split(separator: ".").first.flatMap { Int($0) } ?? 0 >= 1)
        let (open, announcements) = try await watcherStore.watchWorkoutSessions()
        #expect(open.isEmpty)
        let session = WorkoutSession(store: store, configuration: WorkoutConfiguration(activityType: .rowing, deviceIDs: [h.identities[0].address]))
        try await session.start()
        try h.advance(to: 5)
        try await session.pause()
        let workout = try await session.end()
        let id = try #require(session.id)
        var heard: [WorkoutAnnouncement] = []
        for try await announcement in announcements {
            heard.append(announcement)
            if case .saved = announcement { break }
        }
        let kinds = heard.map { a -> String in
            switch a {
            case .created(let s, _): s == id ? "created" : "other"
            case .stateChanged(let s, _, let to, _): s == id ? to.rawValue : "other"
            case .saved(let s, let w, _): s == id && w == workout.uuid ? "saved" : "other"
            case .discarded: "discarded"
            case .failed: "failed"
            }
        }
        #expect(kinds == ["created", "running", "paused", "ended", "saved"])
        #expect(await eventually { watcherStore.outstandingRequests == 0 && store.outstandingRequests == 0 })
    }
}
