import Foundation
import StrapKit
import Testing

/// `StatisticsQuery` and `StatisticsCollectionQuery` against the in-process daemon, checked
/// against the samples its store holds.
@Suite(.timeLimit(.minutes(2))) struct StatisticsQueryTests {
    let origin = DaemonHarness.origin

    @Test func aStatisticAgreesWithTheStoredSamples() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 30)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let from = Date(millis: origin), to = Date(millis: origin + 30_000)
        let stats = try await StatisticsQuery(type: .heartRate, options: [.average, .maximum, .minimum, .mostRecent],
                                              start: from, end: to).result(for: store)
        let samples = try h.store.samples(matching: .and([.types([.heartRate]), .time(from: from.millis, to: to.millis, options: [])]))
        #expect(stats.count == samples.count)
        #expect(stats.maximum == samples.map(\.value).max())
        #expect(stats.minimum == samples.map(\.value).min())
        let average = samples.map(\.value).reduce(0, +) / Double(samples.count)
        #expect(abs((stats.average ?? 0) - average) < 1e-9)
        #expect(stats.sum == nil)
        #expect(stats.start == from.millis && stats.end == to.millis)

        // A device predicate narrows it, evaluated by the daemon.
        let strap = h.identities[0].address
        let one = try await StatisticsQuery(type: .heartRate, options: .maximum, start: from, end: to,
                                            predicate: .device(address: strap)).result(for: store)
        #expect(one.count == samples.filter { $0.device.id == strap }.count)
    }

    @Test func aLongCollectionIsReadPageAfterPage() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 60)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        // A week of minutes: 10 080 intervals, more than one reply holds (about 9 000).
        let start = Date(millis: origin - 7 * 86_400_000 + 60_000), end = Date(millis: origin + 60_000)
        let query = StatisticsCollectionQuery(type: .heartRate, options: [.average, .separateBySource], start: start, end: end,
                                              interval: StatisticsInterval(.minutes), timeZone: "UTC")
        let collection = try await query.result(for: store)
        #expect(collection.statistics.count == 7 * 24 * 60)
        #expect(collection.timeZone == "UTC")
        // Contiguous: no interval lost or repeated at the page boundary.
        for (a, b) in zip(collection.statistics, collection.statistics.dropFirst()) { #expect(a.end == b.start) }
        let last = try #require(collection.statistics(for: Date(millis: origin + 30_000)))
        let samples = try h.store.samples(matching: .and([.types([.heartRate]), .time(from: origin, to: origin + 60_000, options: .strictStartDate)]))
        #expect(last.count == samples.count)
        #expect(Set(last.bySource?.keys ?? [:].keys) == Set(samples.map(\.device.id)))
        #expect(collection.statistics.dropLast().allSatisfy { $0.count == 0 && $0.average == nil })
    }

    @Test func aLiveCollectionIsUpdatedAsSamplesAreStoredAndItsStreamEndsWithTheLoop() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 10)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        // Minutes of an hour that is still filling.
        let query = StatisticsCollectionQuery(type: .heartRate, options: [.average, .maximum], start: Date(millis: origin),
                                              end: Date(millis: origin + 3_600_000), interval: StatisticsInterval(.minutes),
                                              timeZone: "UTC")
        func stored(minute: Int) throws -> Int {
            let from = origin + Millis(minute) * 60_000
            return try h.store.samples(matching: .and([.types([.heartRate]), .time(from: from, to: from + 60_000, options: .strictStartDate)])).count
        }
        var updates = query.results(for: store).makeAsyncIterator()
        let first = try #require(try await updates.next())
        #expect(first.statistics.count == 60)
        #expect(first.statistics[0].count == (try stored(minute: 0)))
        #expect(first.statistics[1].count == 0)

        // Samples into the first minute and the second: updates until the collection agrees.
        try h.advance(to: 75)
        var latest = first
        while try latest.statistics[0].count != stored(minute: 0) || latest.statistics[1].count != stored(minute: 1) {
            latest = try #require(try await updates.next())
        }
        #expect(latest.statistics[1].count > 0)
        #expect(latest.statistics[1].maximum != nil)
        #expect(latest.statistics.dropFirst(2).allSatisfy { $0.count == 0 })
        #expect(store.outstandingRequests == 1)
        _ = consume updates
        #expect(await eventually { store.outstandingRequests == 0 })
    }
}
