import FoundationEssentials
import StrapModel

extension Store {
    /// The object stored at `anchor`, nil when absent or deleted.
    func object(at anchor: UInt64) throws(StrapError) -> StoredObject? {
        let snap = shared.snapshot
        guard anchor >= snap.oldest, anchor < snap.durableNext, !snap.deleted.contains(anchor) else { return nil }
        var cursor = LogCursor(self, from: anchor, snapshot: snap)
        switch cursor.next() {
        case .sample(let s)? where s.anchor == anchor: return .sample(s)
        case .workout(let w)? where w.anchor == anchor: return .workout(w)
        default: return nil
        }
    }

    /// Replaces `.workout(uuid)` by the workout's devices and span; `notFound` when absent.
    func resolve(_ p: SamplePredicate) throws(StrapError) -> SamplePredicate {
        do {
            return try p.resolvingWorkouts { id in
                guard let a = uuids.anchor(of: id), case .workout(let w)? = try object(at: a) else {
                    throw StrapError.notFound("no workout \(id)")
                }
                return .workoutSpan(from: w.start, to: w.end, deviceIDs: Set(w.deviceIDs))
            }
        } catch let e as StrapError { throw e } catch { throw .internal("\(error)") }
    }

    /// Segments that can hold samples starting in [from, to) by their time bounds.
    func segments(_ snap: Published, from: Millis?, to: Millis?) -> [Segment] {
        snap.segments.filter { seg in
            guard let s = seg.sealed else { return true }
            if s.minStart == .max { return true }  // no samples, maybe tombstones: cheap
            if let to, s.minStart >= to { return false }
            if let from, s.maxEnd < from { return false }
            return true
        }
    }

    // MARK: public queries

    /// Samples matching `predicate`, sorted, at most `limit` (docs/product.md §4.2).
    public func samples(matching predicate: SamplePredicate = .all,
                        sort: SampleSort = SampleSort(.start), limit: Int? = nil) throws(StrapError) -> [Sample] {
        let p = try resolve(predicate)
        let snap = shared.snapshot
        let tb = p.timeBounds
        let types = p.typeBounds
        var out: [Sample] = []
        var cursor = LogCursor(self, from: snap.oldest, snapshot: snap, segments: segments(snap, from: tb.from, to: tb.to))
        while let item = cursor.next() {
            if case .sample(let s) = item, types?.contains(s.type) ?? true,
               !snap.deleted.contains(s.anchor), p.matches(s) {
                out.append(s)
            }
        }
        let key: (Sample) -> Millis = sort.key == .start ? { $0.start } : { $0.end }
        out.sort { a, b in
            let ka = key(a), kb = key(b)
            if ka != kb { return sort.ascending ? ka < kb : ka > kb }
            return sort.ascending ? a.anchor < b.anchor : a.anchor > b.anchor
        }
        if let limit, limit >= 0, out.count > limit { out.removeLast(out.count - limit) }
        return out
    }

    /// HealthKit's anchored object query (docs/product.md §4.1): items with anchor > `anchor`, in
    /// anchor order, at most `limit`, and the anchor to continue from. Only durable items are seen.
    public func anchored(types: Set<ObjectType>? = nil, predicate: SamplePredicate? = nil,
                         anchor: UInt64 = 0, limit: Int? = nil) throws(StrapError) -> AnchoredResult {
        let p = try predicate.map { (q) throws(StrapError) in try resolve(q) }
        let snap = shared.snapshot
        if anchor != 0 && anchor + 1 < snap.oldest { throw .anchorExpired(oldestValid: snap.oldest - 1) }
        // Readers are only ever given durable items, so an anchor past the durable end names
        // items the store no longer has.
        if anchor >= snap.durableNext { throw .anchorAhead(latest: snap.durableNext - 1) }
        if let limit, limit <= 0 { throw .badRequest("limit must be positive") }
        let from = max(anchor + 1, snap.oldest)
        var added: [StoredObject] = []
        added.reserveCapacity(min(limit ?? 4096, Int(snap.durableNext - min(from, snap.durableNext)) + 1, 1 << 20))
        var deleted: [DeletedObject] = []
        var count = 0
        var lastReturned: UInt64 = 0
        let wantsWorkouts = types?.contains(.workout) ?? true
        // Per-sample checks without hashing or copying the predicate.
        var allowed = [Bool](repeating: types == nil, count: 256)
        for case .quantity(let q) in types ?? [] { allowed[Int(q.code)] = true }
        let pred = p ?? .all
        let filtering = p != nil
        let noDeletions = snap.deleted.isEmpty
        var cursor = LogCursor(self, from: from, snapshot: snap)
        cursor.skipsSamples = !allowed.contains(true)
        while let item = cursor.next() {
            switch consume item {
            case .sample(let s):
                if !allowed[Int(s.type.code)] { continue }
                if !noDeletions && snap.deleted.contains(s.anchor) { continue }
                if filtering && !pred.matches(s) { continue }
                lastReturned = s.anchor
                added.append(.sample(s))
            case .workout(let w):
                guard wantsWorkouts, !snap.deleted.contains(w.anchor) else { continue }
                added.append(.workout(w)); lastReturned = w.anchor
            case let .deletion(a, target, code):
                let type: ObjectType = code == 0 ? .workout : QuantityType(code: code).map { .quantity($0) } ?? .workout
                if let types, !types.contains(type) { continue }
                deleted.append(DeletedObject(uuid: uuids.uuid(for: target), anchor: a, type: type)); lastReturned = a
            }
            count += 1
            if let limit, count >= limit { break }
        }
        cursor.rememberPosition()
        let last = cursor.lastExamined
        let reachedLimit = limit.map { count >= $0 } ?? false
        // Continue after what was examined; if the limit stopped us, exactly after the last item.
        let next = reachedLimit ? lastReturned : max(anchor, min(last, snap.durableNext - 1), from &- 1)
        return AnchoredResult(added: added, deleted: deleted, anchor: max(next, anchor))
    }
}
