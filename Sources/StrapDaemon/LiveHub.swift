import StrapIngest
import StrapModel
import Synchronization

/// What live subscribers receive: samples as soon as they are decoded (before they are
/// durable, so without an anchor), device changes and link transitions.
public enum LiveEvent: Sendable {
    case sample(Sample)
    case change(SensorAddress, DeviceIngest.Change)
    case link(SensorAddress, up: Bool, reason: String?, Millis)
    /// A link-quality reading (spec §3.3): the RSSI in dBm, or why there is none.
    case linkQuality(SensorAddress, rssi: Int?, reason: String?)

    public var address: SensorAddress {
        switch self {
        case let .sample(s): s.device.address
        case let .change(a, _), let .link(a, _, _, _), let .linkQuality(a, _, _): a
        }
    }
}

/// Live fan-out to the daemon's few in-process subscribers: the device directory and the
/// router's `LiveFanout` (which serves every socket subscriber from the server queue). It
/// delivers on the publisher's queue (the pipeline's) under a lock: a queue of its own cost a
/// thread wake-up per notification. So each `deliver` must be quick and never block: the
/// fan-out encodes and hands on, and bounds what waits for the sockets.
public final class LiveHub: Sendable {
    public struct Filter: Sendable {
        public var types: Set<QuantityType>?
        public var devices: Set<SensorAddress>?
        public init(types: Set<QuantityType>? = nil, devices: Set<SensorAddress>? = nil) {
            self.types = types
            self.devices = devices
        }

        var admitsEverything: Bool { types == nil && devices == nil }

        func admits(_ event: LiveEvent) -> Bool {
            if let devices, !devices.contains(event.address) { return false }
            if let types, case let .sample(s) = event, !types.contains(s.type) { return false }
            return true
        }
    }

    struct Subscriber: Sendable {
        var filter: Filter
        var deliver: @Sendable ([LiveEvent]) -> Void
    }

    private struct Registry {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 1
    }
    private let registry = Mutex(Registry())
    private let count = Atomic<Int>(0)

    public init() {}

    public func subscribe(_ filter: Filter, deliver: @escaping @Sendable ([LiveEvent]) -> Void) -> Int {
        registry.withLock { r in
            let id = r.nextID
            r.nextID += 1
            r.subscribers[id] = Subscriber(filter: filter, deliver: deliver)
            count.store(r.subscribers.count, ordering: .relaxed)
            return id
        }
    }

    /// No delivery starts after this returns (one already running may finish).
    public func unsubscribe(_ id: Int) {
        registry.withLock { r in
            r.subscribers[id] = nil
            count.store(r.subscribers.count, ordering: .relaxed)
        }
    }

    public var subscriberCount: Int { count.load(ordering: .relaxed) }

    /// Lets the pipeline skip building live events nobody would receive. A subscriber that
    /// arrives meanwhile starts with the next event, as it would a moment later anyway.
    var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    /// Hands `events` to every subscriber whose filter admits some, on the calling queue.
    func publish(_ events: [LiveEvent]) {
        let subscribers = registry.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers {
            let admitted = subscriber.filter.admitsEverything ? events : events.filter(subscriber.filter.admits)
            if !admitted.isEmpty { subscriber.deliver(admitted) }
        }
    }
}
