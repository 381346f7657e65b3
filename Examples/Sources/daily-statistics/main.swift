// HealthKit's statistics collection query (`HKStatisticsCollectionQueryDescriptor`): heart rate
// per day over the last week and per hour over today (UTC), then the hourly collection
// followed live (`results(for:)`, HealthKit's `statisticsUpdateHandler`): the whole collection
// again each time strapd re-sends changed intervals, at most once a second.
//   daily-statistics [--socket PATH] [--updates N]
import FoundationEssentials
import StrapKit
import ExampleSupport

lineBufferedOutput()
let options = Options()
let updates = Int(options.value("updates") ?? "2") ?? 2
let store = StrapStore(socket: options.socket)
let options_: StatisticsOptions = [.average, .minimum, .maximum]
let day: Int64 = 86_400_000
let now = Date().millis
let today = now - now % day

func values(_ s: Statistics) -> String {
    "count \(s.count) average \(one(s.average)) min \(one(s.minimum)) max \(one(s.maximum)) bpm"
}

func show(_ s: Statistics) -> String { "interval \(clock(s.start))-\(clock(s.end)) " + values(s) }

do {
    let daily = StatisticsCollectionQuery(type: .heartRate, options: options_, start: Date(millis: today - 6 * day),
                                          end: Date(millis: today + day), interval: StatisticsInterval(.days), timeZone: "UTC")
    let week = try await daily.result(for: store)
    print("daily heart rate, last 7 days (UTC): \(week.statistics.count) intervals")
    for s in week.statistics { print("day \(s.start / day - today / day): " + values(s)) }

    let hourly = StatisticsCollectionQuery(type: .heartRate, options: options_, start: Date(millis: today),
                                           end: Date(millis: today + day), interval: StatisticsInterval(.hours), timeZone: "UTC")
    let collection = try await hourly.result(for: store)
    // strapd answers every interval of the range; an empty hour has count 0 and no values.
    let filled = collection.statistics.filter { $0.count > 0 }
    print("hourly heart rate, today (UTC): \(collection.statistics.count) intervals, \(filled.count) with samples")
    for s in filled { print(show(s)) }

    print("following the hourly collection for \(updates) updates")
    try await withDeadline(30, "\(updates) live updates") {
        var seen = 0
        for try await live in hourly.results(for: store) {
            // The first element is the collection as it stands; each later one follows a change.
            // The latest hour with samples (the current one, unless it has none yet).
            let latest = live.statistics.last { $0.count > 0 }
            print(seen == 0 ? "initial: " : "update \(seen): ", terminator: "")
            print(latest.map(show) ?? "no samples today yet")
            if seen == updates { break }
            seen += 1
        }
    }
} catch {
    fail("daily-statistics: \(error)")
}
