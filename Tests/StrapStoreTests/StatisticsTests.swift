import Foundation
import Testing
@testable import StrapStore
import StrapModel

/// Statistics against a brute-force reference over random data (property tests).
@Suite struct StatisticsTests {
    struct Ref {
        var count = 0, sum = 0.0, min = Double.infinity, max = -Double.infinity
        var last: (Millis, UInt64, Double)? = nil
        mutating func add(_ s: Sample) {
            count += 1; sum += s.value; min = Swift.min(min, s.value); max = Swift.max(max, s.value)
            if last == nil || (s.start, s.anchor) > (last!.0, last!.1) { last = (s.start, s.anchor, s.value) }
        }
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-9 * Swift.max(1, abs(a), abs(b))
    }

    /// Interval starts from the anchor, stepping k from 0 outward with Calendar directly.
    static func referenceBoundaries(anchor: Millis, unit: Calendar.Component, count: Int, from: Millis, to: Millis,
                                    zone: TimeZone) -> [Millis] {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = zone
        func at(_ k: Int) -> Millis { cal.date(byAdding: unit, value: k * count, to: Date(millis: anchor))!.millis }
        var k = 0
        while at(k) > from { k -= 1 }
        while at(k + 1) <= from { k += 1 }
        var out: [Millis] = []
        while true { let s = at(k); out.append(s); if s >= to { break }; k += 1 }
        return out
    }

    /// The samples starting in [from, to) of a start-sorted array.
    static func slice(_ a: [Sample], _ from: Millis, _ to: Millis) -> ArraySlice<Sample> {
        func lower(_ t: Millis) -> Int {
            var l = 0, h = a.count
            while l < h { let m = (l + h) / 2; if a[m].start < t { l = m + 1 } else { h = m } }
            return l
        }
        return a[lower(from)..<lower(to)]
    }

    static let devices = [Fixtures.strap, Fixtures.tickr, Fixtures.csc]

    /// Random samples over ~9 months of 2026 (both DST changes of Berlin and New York).
    static func randomData(_ rng: inout some RandomNumberGenerator, count: Int) -> [Sample] {
        let start = Fixtures.t0 + 50 * 86_400_000, span: Millis = 290 * 86_400_000
        return (0..<count).map { _ in
            let t = start + Millis.random(in: 0..<span, using: &rng)
            let dev = devices.randomElement(using: &rng)!
            if Bool.random(using: &rng) {
                let v = Bool.random(using: &rng) ? Double(Int.random(in: 40...200, using: &rng))
                                                 : Double.random(in: 40...200, using: &rng)
                return Sample(type: .heartRate, value: v, start: t, device: dev)
            }
            return Sample(type: .cyclingDistance, value: Double(Int.random(in: 0...5000, using: &rng)) / 10,
                          start: t, end: t + 1000, device: dev)
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var zone: String, unit: StatisticsInterval.Unit, count: Int, anchorOffset: Millis
        var testDescription: String { "\(zone) \(count) \(unit) +\(anchorOffset)ms" }
    }

    static let cases: [Case] = [
        Case(zone: "Europe/Berlin", unit: .hours, count: 1, anchorOffset: 0),
        Case(zone: "Europe/Berlin", unit: .days, count: 1, anchorOffset: 0),
        Case(zone: "America/New_York", unit: .days, count: 1, anchorOffset: 0),
        Case(zone: "America/New_York", unit: .hours, count: 5, anchorOffset: 0),
        Case(zone: "Asia/Kathmandu", unit: .days, count: 1, anchorOffset: 0),
        Case(zone: "Asia/Kathmandu", unit: .minutes, count: 45, anchorOffset: 0),
        Case(zone: "Europe/Berlin", unit: .weeks, count: 1, anchorOffset: 0),
        Case(zone: "America/New_York", unit: .months, count: 1, anchorOffset: 0),
        Case(zone: "Europe/Berlin", unit: .months, count: 2, anchorOffset: 0),
        Case(zone: "Europe/Berlin", unit: .days, count: 1, anchorOffset: 17_250),
        Case(zone: "UTC", unit: .hours, count: 7, anchorOffset: 123),
    ]

    @Test(arguments: cases) func collectionMatchesBruteForce(_ c: Case) throws {
        var rng = SystemRandomNumberGenerator()
        let dir = TempDir("stats")
        var cfg = config(dir)
        cfg.segmentMaxItems = 700
        let store = try Store.open(cfg)
        var stored = try store.append(Self.randomData(&rng, count: 6000))
        // Deletions force the raw path on some segments; rollups serve the others.
        let victims = stored.filter { $0.anchor % 97 == 0 && $0.anchor < 3000 }.map(\.uuid)
        try store.delete(uuids: victims)
        stored.removeAll { victims.contains($0.uuid) }

        let sorted = stored.sorted { $0.start < $1.start }
        let zone = TimeZone(identifier: c.zone)!
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = zone
        let anchor = cal.date(from: DateComponents(year: 2026, month: 1, day: 5))!.millis + c.anchorOffset
        let from = Fixtures.t0 + 40 * 86_400_000 + 1234, to = Fixtures.t0 + 350 * 86_400_000
        let comp: Calendar.Component = [.minutes: .minute, .hours: .hour, .days: .day, .weeks: .weekOfYear,
                                        .months: .month][c.unit]!
        let bounds = Self.referenceBoundaries(anchor: anchor, unit: comp, count: c.count, from: from, to: to, zone: zone)

        let discrete: StatisticsOptions = [.average, .minimum, .maximum, .mostRecent, .separateBySource]
        let cumulative: StatisticsOptions = [.sum, .separateBySource]
        let plans: [(QuantityType, StatisticsOptions)] = [(.heartRate, discrete), (.cyclingDistance, cumulative)]
        for (type, options) in plans {
            let pred: SamplePredicate = Bool.random(using: &rng) ? .all : .not(.device(.name, "TICKR"))
            let got = try store.statisticsCollection(type: type, predicate: pred, options: options, anchorDate: anchor,
                                                     interval: StatisticsInterval(c.unit, c.count), from: from, to: to,
                                                     timeZone: zone)
            #expect(got.map(\.start) + [got.last!.end] == bounds)
            for st in got {
                var ref = Ref(), bySource: [String: Ref] = [:]
                for s in Self.slice(sorted, st.start, st.end) where s.type == type && pred.matches(s) {
                    ref.add(s); bySource[s.device.id, default: Ref()].add(s)
                }
                #expect(st.count == ref.count)
                if type == .heartRate {
                    #expect(Self.close(st.average, ref.count == 0 ? nil : ref.sum / Double(ref.count)))
                    #expect(st.minimum == (ref.count == 0 ? nil : ref.min))
                    #expect(st.maximum == (ref.count == 0 ? nil : ref.max))
                    #expect(st.mostRecent == ref.last?.2)
                } else {
                    #expect(Self.close(st.sum, ref.count == 0 ? nil : ref.sum))
                    #expect(st.average == nil)
                }
                #expect(Set(st.bySource?.keys ?? [:].keys) == Set(bySource.keys))
                for (dev, r) in bySource {
                    #expect(st.bySource?[dev]?.count == r.count)
                    let src = st.bySource?[dev]
                    let srcSum: Double? = src?.sum ?? src?.average.map { $0 * Double(r.count) }
                    #expect(Self.close(srcSum, r.sum))
                }
            }
        }
    }

    @Test func dstDaysHaveCalendarLengths() throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = berlin
        let anchor = cal.date(from: DateComponents(year: 2026, month: 3, day: 1))!.millis
        let b = try StatisticsInterval(.days).boundaries(anchor: anchor, from: anchor, to: anchor + 40 * 86_400_000,
                                                         timeZone: berlin)
        let lengths = Set(zip(b, b.dropFirst()).map { $1 - $0 })
        #expect(lengths == [86_400_000, 82_800_000])
        let ktm = TimeZone(identifier: "Asia/Kathmandu")!
        cal.timeZone = ktm
        let k = try StatisticsInterval(.days).boundaries(anchor: cal.date(from: DateComponents(year: 2026, month: 1, day: 1))!.millis,
                                                         from: Fixtures.t0, to: Fixtures.t0 + 1, timeZone: ktm)
        let ktmMidnightUTC: Millis = 18 * 3_600_000 + 15 * 60_000  // 00:00 +05:45 is 18:15 UTC
        #expect(k.map { $0 % 86_400_000 } == [ktmMidnightUTC, ktmMidnightUTC])
    }

    @Test func emptyIntervalsAndSingleStatistics() throws {
        let dir = TempDir("stats")
        let store = try Store.open(config(dir))
        try store.append(Fixtures.heartRate(count: 120, start: Fixtures.t0 + 3 * 3_600_000))
        let got = try store.statisticsCollection(type: .heartRate, options: [.average, .maximum], anchorDate: Fixtures.t0,
                                                 interval: StatisticsInterval(.hours), from: Fixtures.t0,
                                                 to: Fixtures.t0 + 6 * 3_600_000, timeZone: TimeZone(identifier: "UTC")!)
        #expect(got.count == 6)
        #expect(got.map(\.count) == [0, 0, 0, 120, 0, 0])
        #expect(got[0].average == nil && got[0].maximum == nil)
        #expect(got[3].maximum == 179)
        let one = try store.statistics(type: .heartRate, options: [.minimum, .mostRecent], from: Fixtures.t0,
                                       to: Fixtures.t0 + 86_400_000)
        #expect(one.minimum == 60 && one.mostRecent == Double(60 + 119 % 120) && one.count == 120)
    }

    /// `.reading`: a collection averages only what a workout's summary counts; a heart rate sent
    /// without skin contact (a strap off the chest) is left out, the others are all there.
    @Test func aCollectionOfReadingsLeavesOutHeartRatesWithoutContact() throws {
        let dir = TempDir("stats")
        let store = try Store.open(config(dir))
        var samples = Fixtures.heartRate(count: 60, start: Fixtures.t0)
        for i in stride(from: 0, to: 60, by: 3) { samples[i].metadata = ["contact": "notDetected"] }
        try store.append(samples)
        func collect(_ p: SamplePredicate) throws -> [Statistics] {
            try store.statisticsCollection(type: .heartRate, predicate: p, options: [.average], anchorDate: Fixtures.t0,
                                           interval: StatisticsInterval(.hours), from: Fixtures.t0, to: Fixtures.t0 + 3_600_000,
                                           timeZone: TimeZone(identifier: "UTC")!)
        }
        let all = try collect(.all), readings = try collect(.reading)
        let kept = samples.filter(\.isHeartRateReading)
        #expect(all[0].count == 60 && readings[0].count == kept.count && kept.count == 40)
        #expect(abs((readings[0].average ?? 0) - kept.map(\.value).reduce(0, +) / Double(kept.count)) < 1e-9)
    }

    @Test func invalidOptions() throws {
        let dir = TempDir("stats")
        let store = try Store.open(config(dir))
        #expect(throws: StrapError.self) { try store.statistics(type: .heartRate, options: .sum, from: 0, to: 1) }
        #expect(throws: StrapError.self) { try store.statistics(type: .cyclingDistance, options: .average, from: 0, to: 1) }
        #expect(throws: StrapError.self) { try store.statistics(type: .sensorContact, options: .mostRecent, from: 0, to: 1) }
        do {
            _ = try store.statistics(type: .runningDistance, options: .maximum, from: 0, to: 1)
            Issue.record("expected invalidOption")
        } catch { #expect(error.code == "invalidOption") }
    }
}
