import Foundation
import StrapKit
import StrapWire
import Synchronization

/// 100 Server-Sent Events clients on strapd-web's /events beside one `live.subscribe` client
/// of strapd through StrapKit, all in this process, over the same samples: strapd-web is one
/// more live subscriber of strapd, so what it adds is the time between strapd's own stream
/// handing a sample to a client and strapd-web's handing it to a page.
enum WebFanOut {
    /// A sample's identity on both streams: its data's text as strapd wrote it. strapd-web
    /// relays that text (StrapKit's `keepingJSON`) with the dashboard's figures appended, which
    /// the readers cut off again, and strap-bench's own StrapKit client keeps the same text;
    /// the 100 readers compare lines and parse nothing. (A sample written differently would
    /// show up as a missing delivery, which the run reports.)
    static func sampleKey(_ event: RawEvent) -> String {
        guard let text = event.dataJSON else { return String(decoding: JSONWriter.bytes(.object(event.data)), as: UTF8.self) }
        return String(decoding: text, as: UTF8.self)
    }

    /// strapd's own stream, read through StrapKit: each sample's arrival (monotonic) and its
    /// age since the sample's end (the daemon's wall clock and ours are the same clock; the
    /// end, not the start: an interval sample, a cadence or a distance, starts seconds before
    /// it is known).
    final class KitSubscriber: Sendable {
        struct Arrival: Sendable {
            var nanos: UInt64
            var sinceEndMs: Double?
        }
        /// A heart rate as the dashboard shows it (its tile's name, the rounded value) and when
        /// it arrived here, in ms since the epoch: what `WebDOM` compares the page's clock with.
        struct HeartRate: Sendable {
            var name: String
            var value: Int
            var wallMs: Double
        }
        let arrivals = Mutex<[String: Arrival]>([:])
        let heartRates = Mutex<[HeartRate]>([])
        let store: StrapStore
        let task = Mutex<Task<Void, Never>?>(nil)

        init(socket: String) throws {
            store = StrapStore(socket: socket)
            let events = try ClientBench.blocking { [store] in try await store.rawStream("live.subscribe", [:], keepingJSON: true).events }
            task.withLock {
                $0 = Task.detached { [self] in
                    let formatter = ISO8601DateFormatter()
                    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                    do {
                        for try await event in events where event.kind == "sample" {
                            let now = monotonicNanos()
                            let wall = Date()
                            let key = WebFanOut.sampleKey(event)
                            var since: Double?
                            if case .string(let end)? = event.data["end"],
                               let date = formatter.date(from: end) {
                                since = wall.timeIntervalSince(date) * 1000
                            }
                            arrivals.withLock { $0[key] = Arrival(nanos: now, sinceEndMs: since) }
                            if case .string("heartRate")? = event.data["type"], case .object(let device)? = event.data["device"],
                               case .string(let name)? = device["name"] {
                                let value: Double? = switch event.data["value"] {
                                case .int(let v)?: Double(v)
                                case .double(let v)?: v
                                default: nil
                                }
                                if let value {
                                    let hr = HeartRate(name: name, value: Int(value.rounded()), wallMs: wall.timeIntervalSince1970 * 1000)
                                    heartRates.withLock { $0.append(hr) }
                                }
                            }
                        }
                    } catch {
                        // The stream ends when the run stops strapd.
                    }
                }
            }
        }

        func close() {
            task.withLock { $0?.cancel() }
        }
    }

    /// One dashboard alone first (what a stream costs without fan-out), then `fanOut` at once;
    /// one StrapKit subscriber of strapd throughout.
    static func figures(_ rig: WebRig, fanOut: Int, seconds: Int, section: String) throws -> [BenchFigure] {
        let kit = try KitSubscriber(socket: rig.socket)
        defer { kit.close() }
        let cookie = try rig.sessionCookie()
        return try measure(rig, kit: kit, cookie: cookie, clients: 1, seconds: seconds, section: section)
            + measure(rig, kit: kit, cookie: cookie, clients: fanOut, seconds: seconds, section: section)
    }

    static func measure(_ rig: WebRig, kit: KitSubscriber, cookie: String, clients: Int, seconds: Int,
                        section: String) throws -> [BenchFigure] {
        var sse: [SSEClient] = []
        defer { for c in sse { c.close() } }
        for _ in 0..<clients { sse.append(try SSEClient(port: rig.port, cookie: cookie, record: true)) }
        // Every stream open and carrying events before the measured window starts.
        let deadline = monotonicNanos() + 15_000_000_000
        while sse.contains(where: { $0.eventCount == 0 }), monotonicNanos() < deadline { usleep(50_000) }
        let silent = sse.filter { $0.eventCount == 0 }.count
        guard silent == 0 else { throw DaemonFootprint.failure("\(silent) of \(clients) /events clients got nothing in 15 s", log: rig.webLog) }
        let windowStart = monotonicNanos()
        sleep(UInt32(seconds))
        let windowEnd = monotonicNanos()
        // Samples strapd handed out in the window's last second get one more to arrive at every client.
        sleep(1)
        let pid = rig.web.processIdentifier
        let hwm = DaemonFootprint.statusKiB(pid, "VmHWM:")
        let strapd = kit.arrivals.withLock { $0 }.filter { $0.value.nanos >= windowStart && $0.value.nanos < windowEnd }
        guard !strapd.isEmpty else { throw BenchFailure("web fan-out: strapd's live stream gave no sample in \(seconds) s") }

        var added: [Double] = []
        var webSinceEnd: [Double] = []
        var delivered = 0
        var firstClient: [Double] = []
        for (index, client) in sse.enumerated() {
            var seen = Set<String>()
            for arrival in client.arrivals {
                guard let own = strapd[arrival.key], seen.insert(arrival.key).inserted else { continue }
                let ms = (Double(arrival.nanos) - Double(own.nanos)) / 1e6
                added.append(ms)
                if index == 0 { firstClient.append(ms) }
                if let since = own.sinceEndMs { webSinceEnd.append(since + ms) }
                delivered += 1
            }
        }
        let expected = strapd.count * clients
        let ownSinceEnd = strapd.values.compactMap(\.sinceEndMs)
        let ownP99 = percentile(ownSinceEnd, 0.99), webP99 = percentile(webSinceEnd, 0.99)
        let addedP50 = percentile(added, 0.5), addedP99 = percentile(added, 0.99), addedMax = added.max() ?? .nan
        print("  web fan-out: \(seconds) s, \(strapd.count) samples on strapd's live stream, \(clients) /events clients: "
              + "\(delivered) of \(expected) deliveries matched" + (delivered < expected ? " (\(expected - delivered) missing)" : ""))
        print(String(format: "  web \(clients) stream(s): sample end → StrapKit live.subscribe: p50 %.2f ms, p99 %.2f ms; → /events: p50 %.2f ms, p99 %.2f ms; p99 added %.2f ms",
                     percentile(ownSinceEnd, 0.5), ownP99, percentile(webSinceEnd, 0.5), webP99, webP99 - ownP99))
        print(String(format: "  web \(clients) stream(s): per delivery, /events after strapd's own stream: p50 %.2f ms, p99 %.2f ms, max %.2f ms; one dashboard's max %.2f ms",
                     addedP50, addedP99, addedMax, firstClient.max() ?? .nan))
        if let hwm { print(String(format: "  web \(clients) stream(s): strapd-web VmHWM with %d streams %.1f MB", clients, Double(hwm) / 1024)) }
        guard delivered > 0 else { throw DaemonFootprint.failure("no sample of strapd's stream reached an /events client", log: rig.webLog) }
        let streams = clients == 1 ? "1 /events client" : "\(clients) /events clients"
        var figures = [
            BenchFigure(section: section, name: "SSE p99 added over strapd's live p99, \(streams)", unit: "ms",
                        ours: webP99 - ownP99, higherIsBetter: false),
            BenchFigure(section: section, name: "SSE delay after strapd's live stream, per delivery p50, \(streams)", unit: "ms",
                        ours: addedP50, higherIsBetter: false),
            BenchFigure(section: section, name: "SSE delay after strapd's live stream, per delivery p99, \(streams)", unit: "ms",
                        ours: addedP99, higherIsBetter: false),
            BenchFigure(section: section, name: "strapd's live stream → a dashboard's /events, max, \(streams)", unit: "ms",
                        ours: firstClient.max() ?? .nan, higherIsBetter: false),
            BenchFigure(section: section, name: "SSE deliveries missing, \(streams)", unit: "count",
                        ours: Double(expected - delivered), higherIsBetter: false),
        ]
        if let hwm {
            figures.append(BenchFigure(section: section, name: "strapd-web VmHWM, \(streams)", unit: "MB",
                                       ours: Double(hwm) / 1024, higherIsBetter: false))
        }
        return figures
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        // Nearest rank: the smallest value with at least p of the values at or below it.
        let rank = Int((Double(s.count) * p).rounded(.up))
        return s[max(0, min(s.count - 1, rank - 1))]
    }
}
