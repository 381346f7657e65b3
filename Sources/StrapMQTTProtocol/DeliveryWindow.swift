/// The publisher's bounded in-flight window (docs/mqtt.md#delivery). Messages are published
/// in anchor order; each covers the store up to an anchor. The broker acknowledges them in
/// any order, and the cursor (what may be persisted) advances only over a prefix that is
/// acknowledged throughout, so a crash or a lost connection never skips an unacknowledged
/// message: it is published again (at least once).
public struct DeliveryWindow: Sendable {
    private struct Entry {
        var upTo: UInt64
        var acknowledged: Bool
    }

    /// `max_inflight`: the most this side allows in flight.
    public let capacity: Int
    /// What the current connection allows: `capacity`, or less when the broker's CONNACK
    /// announced a smaller Receive Maximum (mosquitto's default is 20). Past it libmosquitto
    /// would queue messages inside itself that this window counted as sent.
    public private(set) var limit: Int
    /// Everything up to here is acknowledged.
    public private(set) var cursor: UInt64
    /// The anchor the next read continues after.
    public private(set) var published: UInt64
    private var entries: [Entry] = []
    private var head = 0
    private var indexByMessage: [Int32: Int] = [:]
    /// QoS 1 messages in flight that cover no store item (retained state, `status`): they take
    /// the broker's Receive Maximum like samples do. Their ids, with what the caller wants back
    /// when each is acknowledged.
    private var outside: [Int32: String] = [:]
    /// Absolute position of `entries[0]`: ids map to positions that survive compaction.
    private var base = 0

    /// A `capacity` below 1 is taken as 1 (the configuration refuses it before this).
    public init(capacity: Int, cursor: UInt64) {
        self.capacity = max(1, capacity)
        limit = self.capacity
        self.cursor = cursor
        published = cursor
    }

    public var inFlight: Int { indexByMessage.count + outside.count }
    public var hasRoom: Bool { inFlight < limit }
    public var room: Int { max(0, limit - inFlight) }

    /// The broker's Receive Maximum for this connection (65535 when it announced none).
    public mutating func limit(to receiveMaximum: Int) {
        limit = max(1, min(capacity, receiveMaximum))
    }

    /// A message with broker id `mid` now covers the store up to `upTo`. Anchors only grow; one
    /// that does not (a store bug) is counted as covering nothing new rather than trapping.
    public mutating func published(mid: Int32, upTo: UInt64) {
        let upTo = max(upTo, published)
        indexByMessage[mid] = base + entries.count
        entries.append(Entry(upTo: upTo, acknowledged: false))
        published = upTo
    }

    /// A QoS 1 message outside the store's order (retained state) is in flight as `mid`.
    public mutating func publishedOutside(mid: Int32, topic: String) {
        outside[mid] = topic
    }

    /// The outside message `mid` was acknowledged: its topic, or nil when `mid` is not one.
    public mutating func acknowledgedOutside(mid: Int32) -> String? {
        outside.removeValue(forKey: mid)
    }

    /// Items up to `upTo` need no message (filtered out, or QoS 0): the cursor may pass them
    /// once everything before is acknowledged.
    public mutating func skipped(upTo: UInt64) {
        guard upTo > published else { return }
        entries.append(Entry(upTo: upTo, acknowledged: true))
        published = upTo
        advance()
    }

    /// The broker acknowledged `mid`; false when the id is not one of ours (a retained state
    /// message, or one from before the window was reset).
    @discardableResult
    public mutating func acknowledged(mid: Int32) -> Bool {
        guard let position = indexByMessage.removeValue(forKey: mid) else { return false }
        entries[position - base].acknowledged = true
        advance()
        return true
    }

    /// The connection is gone: whatever was in flight is forgotten and will be read and
    /// published again from the cursor.
    public mutating func reset() {
        forgetItems()
        outside.removeAll(keepingCapacity: true)
        limit = capacity
    }

    /// Store items in flight are given up (read again from the cursor); the connection's limit
    /// and its retained messages in flight stay.
    private mutating func forgetItems() {
        entries.removeAll(keepingCapacity: true)
        head = 0
        base = 0
        indexByMessage.removeAll(keepingCapacity: true)
        published = cursor
    }

    /// Everything was expired from the store below `anchor` (retention): continue there.
    public mutating func jump(to anchor: UInt64) {
        forgetItems()
        cursor = max(cursor, anchor)
        published = cursor
    }

    /// The store ends before `anchor`: what the cursor had passed is gone from it (an unclean
    /// stop with `sync = none`), and the anchors after `anchor` will name new items. Continue
    /// there, or those would be skipped.
    public mutating func rewind(to anchor: UInt64) {
        forgetItems()
        cursor = min(cursor, anchor)
        published = cursor
    }

    private mutating func advance() {
        while head < entries.count, entries[head].acknowledged {
            cursor = entries[head].upTo
            head += 1
        }
        // Compact now and then, keeping positions stable through `base`.
        if head > 4096 && head * 2 > entries.count {
            entries.removeFirst(head)
            base += head
            head = 0
        }
    }
}
