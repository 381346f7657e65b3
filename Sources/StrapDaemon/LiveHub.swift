import Dispatch
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

/// Live fan-out on its own queue, so a hundred subscribers never slow decoding down.
/// Each subscriber's `deliver` must not block: the socket layer bounds its own buffer and
/// reports what it had to drop.
public final class LiveHub: @unchecked Sendable {
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

    struct Subscriber {
        var filter: Filter
        var deliver: @Sendable ([LiveEvent]) -> Void
    }

    let queue = DispatchQueue(label: "strapd.pipeline.live")
    /// Confined to `queue`.
    private var subscribers: [Int: Subscriber] = [:]
    private var nextID = 1
    private let count = Atomic<Int>(0)

    public init() {}

    public func subscribe(_ filter: Filter, deliver: @escaping @Sendable ([LiveEvent]) -> Void) -> Int {
        queue.sync {
            let id = nextID
            nextID += 1
            subscribers[id] = Subscriber(filter: filter, deliver: deliver)
            count.store(subscribers.count, ordering: .relaxed)
            return id
        }
    }

    public func unsubscribe(_ id: Int) {
        queue.async { [self] in
            subscribers[id] = nil
            count.store(subscribers.count, ordering: .relaxed)
        }
    }

    public var subscriberCount: Int { queue.sync { subscribers.count } }

    /// Lets the pipeline skip building live events nobody would receive. A subscriber that
    /// arrives meanwhile starts with the next event, as it would a moment later anyway.
    var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    /// Returns once everything published so far has been handed to the subscribers.
    public func publishBarrier() { queue.sync {} }

    func publish(_ events: [LiveEvent]) {
        queue.async { [self] in
            for subscriber in subscribers.values {
                let admitted = subscriber.filter.admitsEverything ? events : events.filter(subscriber.filter.admits)
                if !admitted.isEmpty { subscriber.deliver(admitted) }
            }
        }
    }
}
