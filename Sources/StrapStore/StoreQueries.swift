import FoundationEssentials
import StrapModel

/// One item met while walking the log in anchor order.
enum LogItem {
    case sample(Sample)
    indirect case workout(Workout)
    /// The `index`-th entry of a tombstone: `target` was deleted, its type code (0 = workout).
    case deletion(anchor: UInt64, target: UInt64, typeCode: UInt8)
}

extension Store {
    /// Walks durable items with anchor in [from, snapshot end) in anchor order, across
    /// segments, skipping damaged records of sealed segments (reported). `visit` returns false
    /// to stop. Returns the last anchor examined (from - 1 when none).
    @discardableResult @inline(__always)
    func walk(from: UInt64, snapshot snap: Published, segments: [Segment]? = nil,
              wantSamples: Bool = true, visit: (consuming LogItem) -> Bool) -> UInt64 {
        walk(from: from, snapshot: snap, segments: segments, wantSamples: wantSamples,
             sample: { visit(.sample($0)) }, other: visit)
    }

    /// As above, with samples handed over directly (the catch-up path: no wrapping copy).
    @discardableResult @inline(__always)
    func walk(from: UInt64, snapshot snap: Published, segments: [Segment]? = nil, wantSamples: Bool = true,
              sample onSample: (consuming Sample) -> Bool, other visit: (consuming LogItem) -> Bool) -> UInt64 {
        let end = snap.durableNext
        var last = from &- 1
        var stopped = false
        let segs = segments ?? snap.segments
        for (i, seg) in segs.enumerated() where !stopped {
            let segEnd = seg.sealed?.nextAnchor ?? end
            let nextFirst = i + 1 < segs.count ? segs[i + 1].firstAnchor : end
            if min(segEnd, nextFirst) <= from { continue }
            if seg.firstAnchor >= end { break }
            let detail = seg.detail(report: shared.report)
            guard let map = try? seg.map() else {
                shared.report("\(Format.segmentName(seg.firstAnchor)): cannot be read; skipped")
                continue
            }
            let buf = map.buffer
            var cp = Checkpoint(offset: Format.headerSize, anchor: seg.firstAnchor,
                                chain: Chain(time: seg.header.baseTime, stream: -1))
            if let c = detail.checkpoints.last(where: { $0.anchor <= from }) { cp = c }
            while !stopped {
                var chain = cp.chain
                var undecodable: Int? = nil
                var r = SegmentScan.walk(buf, offset: cp.offset, anchor: cp.anchor, end: buf.count) { rec, a in
                    if a >= end { stopped = true; return false }
                    var pr = ByteReader(buf, from: rec.payload.lowerBound, to: rec.payload.upperBound)
                    if a + UInt64(rec.items) <= from {
                        // Before the wanted range: only the samples chain has to follow along.
                        if rec.kind == RecordKind.samples.rawValue, !RecordCodec.advanceChain(&pr, chain: &chain) {
                            undecodable = rec.start; return false
                        }
                        return true
                    }
                    switch RecordKind(rawValue: rec.kind) {
                    case .samples:
                        guard wantSamples else {
                            last = a + UInt64(rec.items) - 1
                            if !RecordCodec.advanceChain(&pr, chain: &chain) { undecodable = rec.start; return false }
                            return true
                        }
                        let ok = RecordCodec.decodeSamples(&pr, count: rec.items, firstAnchor: a, chain: &chain,
                                                           streams: detail.streams, uuids: uuids) { s, _ in
                            let a = s.anchor
                            if a < from { return true }
                            if a >= end { stopped = true; return false }
                            last = a
                            if !onSample(consume s) { stopped = true; return false }
                            return true
                        }
                        if !ok && !stopped { undecodable = rec.start; return false }
                    case .tombstone:
                        guard let ranges = RecordCodec.decodeTombstone(&pr) else { break }
                        var k = a
                        outer: for range in ranges {
                            for t in range.first..<(range.first + range.count) {
                                defer { k += 1 }
                                if k < from { continue }
                                if k >= end { stopped = true; break outer }
                                last = k
                                if !visit(.deletion(anchor: k, target: t, typeCode: range.typeCode)) {
                                    stopped = true; break outer
                                }
                            }
                        }
                    case .workout:
                        if a >= from, let w = RecordCodec.decodeWorkout(Array(UnsafeRawBufferPointer(rebasing: buf[rec.payload])),
                                                                         anchor: a, uuids: uuids) {
                            last = a
                            if !visit(.workout(w)) { stopped = true }
                        }
                    case .stream, .none:
                        if rec.items > 0 { last = a + UInt64(rec.items) - 1 }
                    }
                    if !stopped, rec.items > 0 { last = max(last, a + UInt64(rec.items) - 1) }
                    return !stopped
                }
                if let u = undecodable, !stopped { r.offset = u; r.stop = .damaged }
                if stopped || r.stop == .end { break }
                // A damaged record inside the readable region: report, resync at the next checkpoint.
                shared.report("\(Format.segmentName(seg.firstAnchor)): damaged record at byte \(r.offset); skipped")
                guard let next = detail.checkpoints.first(where: { $0.offset > r.offset }) else { break }
                cp = next
            }
        }
        return last
    }

    /// The object stored at `anchor`, nil when absent or deleted.
    func object(at anchor: UInt64) throws(StrapError) -> StoredObject? {
        let snap = shared.snapshot
        guard anchor >= snap.oldest, anchor < snap.durableNext, !snap.deleted.contains(anchor) else { return nil }
        var found: StoredObject? = nil
        walk(from: anchor, snapshot: snap) { item in
            switch item {
            case .sample(let s): if s.anchor == anchor { found = .sample(s) }
            case .workout(let w): if w.anchor == anchor { found = .workout(w) }
            case .deletion: break
            }
            return false
        }
        return found
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

    /// Samples matching `predicate`, sorted, at most `limit` (spec §4.2).
    public func samples(matching predicate: SamplePredicate = .all,
                        sort: SampleSort = SampleSort(.start), limit: Int? = nil) throws(StrapError) -> [Sample] {
        let p = try resolve(predicate)
        let snap = shared.snapshot
        let tb = p.timeBounds
        let types = p.typeBounds
        var out: [Sample] = []
        walk(from: snap.oldest, snapshot: snap, segments: segments(snap, from: tb.from, to: tb.to)) { item in
            if case .sample(let s) = item, types?.contains(s.type) ?? true,
               !snap.deleted.contains(s.anchor), p.matches(s) {
                out.append(s)
            }
            return true
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

    /// HealthKit's anchored object query (spec §4.1): items with anchor > `anchor`, in anchor
    /// order, at most `limit`, and the anchor to continue from. Only durable items are seen.
    public func anchored(types: Set<ObjectType>? = nil, predicate: SamplePredicate? = nil,
                         anchor: UInt64 = 0, limit: Int? = nil) throws(StrapError) -> AnchoredResult {
        let p = try predicate.map { (q) throws(StrapError) in try resolve(q) }
        let snap = shared.snapshot
        if anchor != 0 && anchor + 1 < snap.oldest { throw .anchorExpired(oldestValid: snap.oldest - 1) }
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
        let last = walk(from: from, snapshot: snap, sample: { s in
            if !allowed[Int(s.type.code)] { return true }
            if !noDeletions && snap.deleted.contains(s.anchor) { return true }
            if filtering && !pred.matches(s) { return true }
            lastReturned = s.anchor
            added.append(.sample(s))
            count += 1
            return limit.map { count < $0 } ?? true
        }, other: { item in
            switch consume item {
            case .sample:
                return true
            case .workout(let w):
                guard wantsWorkouts, !snap.deleted.contains(w.anchor) else { return true }
                added.append(.workout(w)); lastReturned = w.anchor
            case let .deletion(a, target, code):
                let type: ObjectType = code == 0 ? .workout : QuantityType(code: code).map { .quantity($0) } ?? .workout
                if let types, !types.contains(type) { return true }
                deleted.append(DeletedObject(uuid: uuids.uuid(for: target), anchor: a, type: type)); lastReturned = a
            }
            count += 1
            return limit.map { count < $0 } ?? true
        })
        let reachedLimit = limit.map { count >= $0 } ?? false
        // Continue after what was examined; if the limit stopped us, exactly after the last item.
        let next = reachedLimit ? lastReturned : max(anchor, min(last, snap.durableNext - 1), from &- 1)
        return AnchoredResult(added: added, deleted: deleted, anchor: max(next, anchor))
    }
}
