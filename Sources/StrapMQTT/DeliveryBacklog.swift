import StrapModel

/// What the publisher read from the store and has not published yet, in anchor order: one
/// anchored page of up to `pageSize` items, read when the last is used up. Reading pages much
/// larger than the window's free room (which acknowledgements open a few slots at a time)
/// keeps each store read large: the read's fixed cost is paid per page, not per message.
struct DeliveryBacklog {
    enum Item {
        case object(StoredObject)
        /// Consecutive deletions: one tombstone message.
        case tombstones(ArraySlice<DeletedObject>)

        var upTo: UInt64 {
            switch self {
            case .object(let o): o.anchor
            case .tombstones(let t): t.last!.anchor
            }
        }
    }

    static let pageSize = 2048

    private var items: [Item] = []
    private var next = 0
    /// Where the page ended (past the items other types filtered out).
    private(set) var end: UInt64 = 0

    var isEmpty: Bool { next == items.count }

    mutating func take() -> Item? {
        guard next < items.count else { return nil }
        defer { next += 1 }
        return items[next]
    }

    /// The item `take` returned could not be published: it is the next one again.
    mutating func putBack() { next -= 1 }

    mutating func clear() {
        items.removeAll(keepingCapacity: true)
        next = 0
        end = 0
    }

    /// Replaces the (used-up) backlog with `page`, samples and deletions interleaved.
    mutating func load(_ page: AnchoredResult) {
        clear()
        end = page.anchor
        var d = 0
        for object in page.added {
            var stop = d
            while stop < page.deleted.count && page.deleted[stop].anchor < object.anchor { stop += 1 }
            if stop > d { items.append(.tombstones(page.deleted[d..<stop])); d = stop }
            items.append(.object(object))
        }
        if d < page.deleted.count { items.append(.tombstones(page.deleted[d...])) }
    }
}
