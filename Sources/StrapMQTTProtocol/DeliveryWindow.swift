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

    public let capacity: Int
    /// Everything up to here is acknowledged.
    public private(set) var cursor: UInt64
    /// The anchor the next read continues after.
    public private(set) var published: UInt64
    private var entries: [Entry] = []
    private var head = 0
    private var indexByMessage: [Int32: Int] = [:]
    /// Absolute position of `entries[0]`: ids map to positions that survive compaction.
    private var base = 0

    public init(capacity: Int, cursor: UInt64) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.cursor = cursor
        published = cursor
    }

    public var inFlight: Int { indexByMessage.count }
    public var hasRoom: Bool { inFlight < capacity }
    public var room: Int { max(0, capacity - inFlight) }

    /// A message with broker id `mid` now covers the store up to `upTo`.
    public mutating func published(mid: Int32, upTo: UInt64) {
        precondition(upTo >= published, "published out of anchor order")
        indexByMessage[mid] = base + entries.count
        entries.append(Entry(upTo: upTo, acknowledged: false))
        published = upTo
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
        entries.removeAll(keepingCapacity: true)
        head = 0
        base = 0
        indexByMessage.removeAll(keepingCapacity: true)
        published = cursor
    }

    /// Everything was expired from the store below `anchor` (retention): continue there.
    public mutating func jump(to anchor: UInt64) {
        reset()
        cursor = max(cursor, anchor)
        published = cursor
    }

    /// The store ends before `anchor`: what the cursor had passed is gone from it (an unclean
    /// stop with `sync = none`), and the anchors after `anchor` will name new items. Continue
    /// there, or those would be skipped.
    public mutating func rewind(to anchor: UInt64) {
        reset()
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
