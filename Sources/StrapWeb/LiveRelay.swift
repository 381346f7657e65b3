import Dispatch
import FoundationEssentials
import StrapKit
import Synchronization

/// strapd's live stream (`live.subscribe`, through StrapKit) held once and handed to every
/// Server-Sent Events client, however many there are: strapd sees one subscriber. It also
/// keeps each device's last heart rate for `/metrics`, which strapd's status does not carry,
/// and adds the dashboard's figures (`LiveFigures`: zone, RR and RMSSD, km/h, pace) to the
/// samples it relays, worked out once here rather than in every browser.
public final class LiveRelay: Sendable {
    /// The last heart rate of a device, from its latest live sample.
    public struct HeartRate: Sendable, Equatable {
        public var name: String
        public var beatsPerMinute: Double

        public init(name: String, beatsPerMinute: Double) {
            self.name = name
            self.beatsPerMinute = beatsPerMinute
        }
    }

    private struct State {
        var subscribers: [Int: EventStream] = [:]
        /// The overlay token's clients (a subset of `subscribers`): they get heart rates only.
        var overlays: Set<Int> = []
        var nextID = 0
        var heartRates: [String: HeartRate] = [:]
        var figures = LiveFigures()
        var subscribed = false
        var stopped = false
    }
    private let state = Mutex(State())

    /// How often the default athlete's zones are read again: a profile changed (on the
    /// profile page or with strapctl) colours the tiles by its new zones within this.
    public static let zonesRefresh = Duration.seconds(5)

    public init() {}

    /// Subscribes through `link` and keeps subscribing again after a loss (strapd restarting),
    /// once a second, until `stop`. Two streams: the live samples, and `workout.watch`, whose
    /// events go out named `workout.<kind>` so a page learns of every session on the box
    /// (mirroring) without polling.
    public func start(_ link: DaemonLink) {
        // The live stream is consumed on StrapKit's reader thread (its task executor): an
        // event is read, relayed and handed to the pages' connections on one thread, with no
        // wake-up of Swift's cooperative pool between (a third of an idle dashboard's CPU).
        // `publish` never blocks: it queues frames and signals the connections' threads.
        Task.detached { [self] in
            await withTaskExecutorPreference(link.store.executor) {
                while !state.withLock({ $0.stopped }) {
                    do {
                        let (_, events) = try await link.store.rawStream("live.subscribe", [:], keepingJSON: true)
                        state.withLock { $0.subscribed = true }
                        for try await event in events { publish(event) }
                    } catch {
                        // strapd away or stopping: the next attempt says whether it is back.
                    }
                    state.withLock { $0.subscribed = false }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
        Task.detached { [self] in
            while !state.withLock({ $0.stopped }) {
                do {
                    let (_, events) = try await link.store.rawStream("workout.watch", [:])
                    // A page reads the sessions again on this: what changed while the watch was down.
                    publish(RawEvent(kind: "workout.watching", data: [:]))
                    for try await event in events { publish(RawEvent(kind: "workout." + event.kind, data: event.data)) }
                } catch {
                    // As above; a strapd without workout.watch (protocol 1.0) is asked again each second.
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        Task.detached { [self] in
            // The profile is decoded into zones only when strapd's answer changed (or the day
            // did: an age-based maximum moves with it). Decoding runs Foundation's JSONDecoder
            // and the calendar, code an idle relay would otherwise map in again every 5 s.
            var decoded: (reply: JSONObject, day: Int64)?
            while !state.withLock({ $0.stopped }) {
                do {
                    let reply = try await link.store.request("profile.get", [:])
                    let day = Int64(Date().timeIntervalSince1970) / 86_400
                    if decoded?.reply != reply || decoded?.day != day {
                        let zones = AthleteZones.zones(profileReply: reply)
                        state.withLock { $0.figures.zones = zones }
                        decoded = (reply, day)
                    }
                } catch let refusal as StrapKitError where refusal.code != nil {
                    // strapd answered (no profile: noData): heart rates have no zone.
                    state.withLock { $0.figures.zones = nil }
                    decoded = nil
                } catch {
                    // strapd away: the zones it gave last still hold.
                }
                try? await Task.sleep(for: Self.zonesRefresh)
            }
        }
    }

    public func stop() {
        let streams = state.withLock { s -> [EventStream] in
            s.stopped = true
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for stream in streams { stream.end() }
    }

    /// Whether strapd's live stream is open now.
    public var isSubscribed: Bool { state.withLock { $0.subscribed } }
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
    public var heartRates: [String: HeartRate] { state.withLock { $0.heartRates } }

    /// A new Server-Sent Events client; it leaves by itself when its connection ends.
    /// `overlay`: the read-only token's client, which gets `sample` events of heart rates
    /// only, each cut to `overlaySample` (what /overlay shows): the overlay URL sits in a
    /// streamer's OBS, and needs no workouts, other sensors or device metadata.
    public func subscribe(overlay: Bool = false) -> EventStream {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            let stream = EventStream { [weak self] in
                self?.state.withLock {
                    _ = $0.subscribers.removeValue(forKey: id)
                    $0.overlays.remove(id)
                }
            }
            s.subscribers[id] = stream
            if overlay { s.overlays.insert(id) }
            return stream
        }
    }

    func publish(_ event: RawEvent) {
        var figures: JSONObject?
        if event.kind == "sample" {
            figures = state.withLock { $0.figures.figures(for: event.data) }
        } else if event.kind == "link", case .bool(false)? = event.data["up"], case .string(let address)? = event.data["address"] {
            state.withLock { $0.figures.forget(address: address) }
        }
        if event.kind == "sample", case .string("heartRate")? = event.data["type"], case .object(let device)? = event.data["device"],
           case .string(let address)? = device["address"] {
            let value: Double? = switch event.data["value"] {
            case .int(let v)?: Double(v)
            case .double(let v)?: v
            default: nil
            }
            var name = ""
            if case .string(let n)? = device["name"] { name = n }
            if let value { state.withLock { $0.heartRates[address] = HeartRate(name: name, beatsPerMinute: value) } }
        }
        let chunk = EventStream.frame(event: event.kind, data: Self.relayedData(event, figures: figures))
        let streams = state.withLock { s in s.subscribers.map { (stream: $0.value, overlay: s.overlays.contains($0.key)) } }
        // Cut only when an overlay listens: most samples reach dashboards alone.
        let overlayChunk = !streams.contains { $0.overlay } ? nil
            : Self.overlaySample(event, figures: figures).map { EventStream.frame(event: "sample", data: JSONWriter.bytes(.object($0))) }
        for (stream, overlay) in streams {
            if !overlay { stream.push(chunk) } else if let overlayChunk { stream.push(overlayChunk) }
        }
    }

    /// An event's data as a page gets it: strapd's own JSON text when the stream kept it
    /// (StrapKit's `keepingJSON`), with the figures appended as its last member; written out
    /// from the parsed object otherwise (events strapd-web makes itself, or a line StrapKit
    /// had to parse whole).
    static func relayedData(_ event: RawEvent, figures: JSONObject?) -> [UInt8] {
        if let text = event.dataJSON, text.first == UInt8(ascii: "{"), text.last == UInt8(ascii: "}"), event.data["figures"] == nil {
            guard let figures else { return Array(text) }
            var out: [UInt8] = []
            out.reserveCapacity(text.count + 96)
            out.append(contentsOf: text.dropLast())
            if !event.data.isEmpty { out.append(UInt8(ascii: ",")) }
            out.appendLiteral("\"figures\":")
            JSONWriter.write(.object(figures), into: &out)
            out.append(UInt8(ascii: "}"))
            return out
        }
        var data = event.data
        if let figures { data["figures"] = .object(figures) }
        return JSONWriter.bytes(.object(data))
    }

    /// A heart-rate sample as the overlay gets it: type, value, and the device's address and
    /// name; nil for every other event.
    static func overlaySample(_ event: RawEvent, figures: JSONObject? = nil) -> JSONObject? {
        guard event.kind == "sample", case .string("heartRate")? = event.data["type"], let value = event.data["value"],
              case .object(let device)? = event.data["device"] else { return nil }
        var cut: JSONObject = [:]
        for key in ["address", "name"] { cut[key] = device[key] }
        var sample: JSONObject = ["type": .string("heartRate"), "value": value, "device": .object(cut)]
        // The overlay gets no metadata: a non-reading is said as the dashboard's figure is.
        if let reading = figures?["reading"] { sample["reading"] = reading }
        return sample
    }
}

/// One client's Server-Sent Events: frames queue here (bounded) and the client's connection
/// thread takes them in `next`, waiting up to `keepAlive` seconds before it sends a comment,
/// which also finds a client that left.
public final class EventStream: ResponseStream, Sendable {
    public static let queueLimit = 1024
    public static let keepAlive = 15.0

    private struct Queue {
        var frames: [[UInt8]] = [[UInt8](": strapd-web live stream\nretry: 2000\n\n".utf8)]
        var dropped = 0
        var ended = false
    }
    private let queue = Mutex(Queue())
    private let ready = DispatchSemaphore(value: 1)
    private let onFinish: @Sendable () -> Void

    init(onFinish: @escaping @Sendable () -> Void) { self.onFinish = onFinish }

    static func frame(event: String, data: [UInt8]) -> [UInt8] {
        // JSONWriter escapes line breaks inside strings, so the data is one line.
        var frame: [UInt8] = []
        frame.reserveCapacity(event.utf8.count + data.count + 16)
        frame.appendLiteral("event: ")
        frame.append(contentsOf: event.utf8)
        frame.appendLiteral("\ndata: ")
        frame.append(contentsOf: data)
        frame.appendLiteral("\n\n")
        return frame
    }

    func push(_ frame: [UInt8]) {
        let wake = queue.withLock { q -> Bool in
            guard !q.ended else { return false }
            guard q.frames.count < Self.queueLimit else {
                q.dropped += 1
                return false
            }
            q.frames.append(frame)
            return q.frames.count == 1
        }
        if wake { ready.signal() }
    }

    func end() {
        queue.withLock { $0.ended = true }
        ready.signal()
    }

    public func next() -> StreamChunk {
        while true {
            let taken = queue.withLock { q -> StreamChunk? in
                if q.ended { return .end }
                guard !q.frames.isEmpty else { return nil }
                var out: [UInt8] = []
                if q.dropped > 0 {
                    // A client that fell behind learns how much it missed, as strapd's own stream says it.
                    out = Self.frame(event: "dropped", data: Array("{\"count\":\(q.dropped)}".utf8))
                    q.dropped = 0
                }
                for f in q.frames { out += f }
                q.frames.removeAll(keepingCapacity: true)
                return .data(out)
            }
            if let taken { return taken }
            if ready.wait(timeout: .now() + Self.keepAlive) == .timedOut { return .data(Array(": keep-alive\n\n".utf8)) }
        }
    }

    public func finish() {
        end()
        onFinish()
    }
}
