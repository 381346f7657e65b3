/// How far behind the broker's acknowledgements are (docs/mqtt.md#status): the age of the oldest
/// store item the broker has not acknowledged, timed from when the publisher first saw the store
/// reach past the cursor. Caught up (cursor at the store's end) it is 0, however long the
/// publisher has been running; it grows only while an item waits.
public struct DeliveryLag: Sendable {
    /// (the store's end, when it was seen), oldest first, anchors increasing.
    private var marks: [(anchor: UInt64, at: Double)] = []
    private var first = 0
    /// Observations closer together than this share a mark: the lag is known to this
    /// resolution, and a catch-up that pumps thousands of times a second adds few marks.
    public static let resolution = 0.1
    /// Past this many marks (a very long outage) every other one is dropped: the resolution
    /// coarsens instead of memory growing.
    public static let maximumMarks = 4096

    public init() {}

    /// The store ended at `latest` at monotonic time `now`.
    public mutating func observe(latest: UInt64, at now: Double) {
        if first < marks.count, let last = marks.last {
            guard latest > last.anchor else { return }
            if now - last.at < Self.resolution { return }
        }
        marks.append((latest, now))
        if marks.count - first > Self.maximumMarks {
            marks = stride(from: first, to: marks.count, by: 2).map { marks[$0] } + [marks[marks.count - 1]]
            first = 0
        }
    }

    /// Seconds the oldest unacknowledged item has waited, given the acknowledged `cursor` and the
    /// store's end `latest`.
    public mutating func seconds(cursor: UInt64, latest: UInt64, now: Double) -> Double {
        guard cursor < latest else {
            marks.removeAll(keepingCapacity: true)
            first = 0
            return 0
        }
        while first < marks.count, marks[first].anchor <= cursor { first += 1 }
        if first > 1024, first * 2 > marks.count {
            marks.removeFirst(first)
            first = 0
        }
        guard first < marks.count else {
            // Not observed yet: it appeared since the last observation.
            observe(latest: latest, at: now)
            return 0
        }
        return max(0, now - marks[first].at)
    }
}
