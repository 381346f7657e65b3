import StrapGATT
import StrapIngest
import StrapModel
import Synchronization

/// What live subscribers receive: samples as soon as they are decoded (before they are
/// durable, so without an anchor), device changes and link transitions.
public enum LiveEvent: Sendable {
    /// Samples in the order they were decoded, of one or more devices: a slice of the
    /// pipeline's batch, so a burst is one event and no sample is copied. A subscriber copies
    /// what it keeps and lets go of the slice before `deliver` returns, so the pipeline can
    /// reuse the batch's buffer (docs/architecture.md#the-pipeline).
    case samples(ArraySlice<Sample>)
    case change(SensorAddress, DeviceIngest.Change)
    case link(SensorAddress, up: Bool, reason: String?, Millis)
    /// A link-quality reading (docs/operations.md#link-quality-rssi): the RSSI in dBm, or why there
    /// is none.
    case linkQuality(SensorAddress, rssi: Int?, reason: String?)
    /// A notification that yielded no sample (a CSC packet with unchanged counters, a repeated
    /// battery level, a rejected packet): still a sign of life, which the device directory's
    /// last seen follows. Nothing is sent to clients for it.
    case quietNotification(SensorAddress, GATTCharacteristic, Millis)
}

/// Live fan-out to the daemon's few in-process subscribers: the device directory and the
/// router's `LiveFanout` (which serves every socket subscriber from the server queue). It
/// delivers on the publisher's queue (the pipeline's) under a lock: a queue of its own cost a
/// thread wake-up per notification. So each `deliver` must be quick: the fan-out encodes and
/// writes in a turn of the server queue taken on this thread, waiting at most for the turn in
/// progress there (the server queue never waits on the publisher's; docs/architecture.md).
public final class LiveHub: Sendable {
    private struct Registry {
        var subscribers: [Int: @Sendable ([LiveEvent]) -> Void] = [:]
        /// The same, made on each change (rare): `publish` takes it without building an array.
        var list: [@Sendable ([LiveEvent]) -> Void] = []
        var nextID = 1
    }
    private let registry = Mutex(Registry())
    private let count = Atomic<Int>(0)

    public init() {}

    /// Every subscriber gets every event: both in-process subscribers want all of them, and
    /// the socket subscribers' filters are applied by the fan-out, per connection.
    public func subscribe(deliver: @escaping @Sendable ([LiveEvent]) -> Void) -> Int {
        registry.withLock { r in
            let id = r.nextID
            r.nextID += 1
            r.subscribers[id] = deliver
            r.list = Array(r.subscribers.values)
            count.store(r.subscribers.count, ordering: .relaxed)
            return id
        }
    }

    /// No delivery starts after this returns (one already running may finish).
    public func unsubscribe(_ id: Int) {
        registry.withLock { r in
            r.subscribers[id] = nil
            r.list = Array(r.subscribers.values)
            count.store(r.subscribers.count, ordering: .relaxed)
        }
    }

    public var subscriberCount: Int { count.load(ordering: .relaxed) }

    /// Lets the pipeline skip building live events nobody would receive. A subscriber that
    /// arrives meanwhile starts with the next event, as it would a moment later anyway.
    var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    /// Hands `events` to every subscriber, on the calling queue.
    func publish(_ events: [LiveEvent]) {
        let subscribers = registry.withLock { $0.list }
        for deliver in subscribers { deliver(events) }
    }
}
