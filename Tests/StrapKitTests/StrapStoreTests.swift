import Foundation
import StrapKit
import Testing

/// The connection: pipelined requests answered to the right callers, the protocol's errors as
/// typed cases, connection failures and the `.never` policy.
@Suite(.timeLimit(.minutes(2))) struct StrapStoreTests {
    @Test func manyRequestsInFlightAreAnsweredToTheirOwnCallers() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 30)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        // 200 queries at once, more than the daemon's 32 per connection: the store keeps within
        // the window, and each caller gets the answer to its own limit.
        let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for limit in 1...200 {
                group.addTask { (limit, try await SampleQuery(limit: limit).result(for: store).count) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(counts.count == 200)
        #expect(counts.allSatisfy { $0.key == $0.value })
        #expect(store.outstandingRequests == 0)
        // The 200 first calls made one connection between them.
        store.close()
        var connects = 0
        for await event in store.connectionEvents { if case .connected = event { connects += 1 } }
        #expect(connects == 1)
    }

    @Test func theProtocolsErrorsAreTypedCases() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 10)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        func error(_ body: () async throws -> Void) async -> StrapKitError? {
            do { try await body(); return nil } catch { return error as? StrapKitError }
        }
        let latest = h.store.latestAnchor
        let ahead = await error { _ = try await AnchoredQuery(anchor: latest + 1000).result(for: store) }
        guard case .anchorAhead(let latestAnchor, _)? = ahead else { Issue.record("not anchorAhead: \(String(describing: ahead))"); return }
        #expect(latestAnchor == latest)

        let unknown = await error { _ = try await store.request("no.such.op") }
        #expect(unknown?.code == .unknownOp)
        let bad = await error { _ = try await store.request("samples.query", ["limit": .string("ten")]) }
        guard case .badRequest(let message)? = bad else { Issue.record("not badRequest: \(String(describing: bad))"); return }
        #expect(message.contains("limit"))
        let notFound = await error { _ = try await WorkoutSession(mirroring: UUID(), store: store).state() }
        #expect(notFound?.code == .notFound)
        let option = await error {
            _ = try await StatisticsQuery(type: .heartRate, options: .sum, start: Date(millis: DaemonHarness.origin),
                                          end: Date(millis: DaemonHarness.origin + 10_000)).result(for: store)
        }
        #expect(option?.code == .invalidOption)
        let noData = await error {
            _ = try await StatisticsQuery(type: .heartRate, options: .average, start: Date(millis: 0), end: Date(millis: 1000)).result(for: store)
        }
        #expect(noData?.code == .noData)
        let transition = await error { try await WorkoutSession(store: store, configuration: .init(activityType: .running)).pause() }
        #expect(transition?.code == .invalidTransition)
        // Nothing of these is left waiting.
        #expect(store.outstandingRequests == 0)
    }

    @Test func aCancelledCallStopsWaitingAndItsReplyIsDropped() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 30)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        _ = try await store.request("status")
        // Queries that scan the store, cancelled as soon as they are sent: each either had its
        // answer already or stops waiting with CancellationError; none is left behind.
        let tasks = (0..<20).map { _ in Task { try await AnchoredQuery(limit: 100_000).result(for: store) } }
        for task in tasks { task.cancel() }
        for task in tasks {
            do { _ = try await task.value } catch { #expect(error is CancellationError) }
        }
        #expect(await eventually { store.outstandingRequests == 0 })
        // The connection still answers, each caller its own.
        #expect(try await SampleQuery(limit: 3).result(for: store).count == 3)
    }

    @Test func noDaemonIsCannotConnect() async throws {
        let store = StrapStore(socket: "/tmp/strapkit-no-such-dir/strapd.sock")
        await #expect(throws: StrapKitError.cannotConnect(path: "/tmp/strapkit-no-such-dir/strapd.sock",
                                                          reason: "strapd is not running (No such file or directory)")) {
            _ = try await store.request("status")
        }
    }

    @Test func withoutReconnectALostConnectionStaysLost() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        #expect(try await store.request("status").string("mode") == "simulate")
        try h.restart()
        var lost: StrapKitError?
        for await event in store.connectionEvents {
            if case .lost(let e) = event { lost = e; break }
        }
        #expect(lost?.isConnectionLoss == true)
        // The daemon is back, but this store does not reconnect behind the caller's back.
        await #expect(throws: StrapKitError.self) { _ = try await store.request("status") }
        let fresh = StrapStore(socket: h.socketPath)
        defer { fresh.close() }
        #expect(try await fresh.request("status").string("mode") == "simulate")
    }

    @Test func closingFailsWhatIsOutstandingAndEveryLaterCall() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 2)
        let store = StrapStore(socket: h.socketPath)
        let follower = Task { for try await _ in AnchoredQuery().results(for: store) {} }
        #expect(await eventually { h.parkedFollowers == 1 })
        store.close()
        await #expect(throws: StrapKitError.closed) { try await follower.value }
        await #expect(throws: StrapKitError.closed) { _ = try await store.request("status") }
        #expect(await eventually { h.parkedFollowers == 0 })
    }
}

extension JSONObject {
    func string(_ key: String) -> String? { if case .string(let s)? = self[key] { s } else { nil } }
}
