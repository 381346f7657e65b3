import FoundationEssentials
import StrapModel

extension Store {
    /// Statistics over samples of `type` starting in [from, to) (docs/product.md §4.2).
    public func statistics(type: QuantityType, predicate: SamplePredicate = .all, options: StatisticsOptions,
                           from: Millis, to: Millis) throws(StrapError) -> Statistics {
        try options.validate(for: type)
        guard from < to else { throw .badRequest("from must be before to") }
        return try collect(type: type, predicate: predicate, options: options, boundaries: [from, to])[0]
    }

    /// Statistics per calendar interval (docs/protocol.md#statisticscollection): intervals are
    /// counted from `anchorDate` in `timeZone`; every interval overlapping [from, to) is returned,
    /// empty ones with nil values. A sample belongs to the interval containing its start.
    public func statisticsCollection(type: QuantityType, predicate: SamplePredicate = .all,
                                     options: StatisticsOptions, anchorDate: Millis, interval: StatisticsInterval,
                                     from: Millis, to: Millis, timeZone: TimeZone = .current) throws(StrapError) -> [Statistics] {
        try options.validate(for: type)
        let b = try interval.boundaries(anchor: anchorDate, from: from, to: to, timeZone: timeZone)
        guard b.count >= 2 else { return [] }
        return try collect(type: type, predicate: predicate, options: options, boundaries: b)
    }

    private func collect(type: QuantityType, predicate: SamplePredicate, options: StatisticsOptions,
                         boundaries b: [Millis]) throws(StrapError) -> [Statistics] {
        let p = try resolve(predicate)
        let n = b.count - 1
        let bySource = options.contains(.separateBySource)
        var totals = [Aggregate](repeating: Aggregate(), count: n)
        var sources = [[String: Aggregate]](repeating: [:], count: bySource ? n : 0)
        let snap = shared.snapshot
        let lo = b[0], hi = b[n]

        // Minute rollups answer whole minutes; they need minute-aligned boundaries, a predicate
        // on type/device only, and no deletions inside the segment.
        let aligned = b.allSatisfy { $0 % 60_000 == 0 }
        let useRollups = aligned && p.isRollupFriendly

        @inline(__always) func interval(of t: Millis) -> Int {
            var l = 0, h = b.count
            while l < h { let m = (l + h) / 2; if b[m] <= t { l = m + 1 } else { h = m } }
            return l - 1
        }

        for seg in segments(snap, from: lo, to: hi) {
            if useRollups, let sum = seg.sealed, !snap.deleted.intersects(sum.firstAnchor, sum.nextAnchor) {
                let detail = shared.detail(of: seg)
                for (sid, list) in detail.rollups.enumerated() {
                    guard sid < detail.streams.count, let st = detail.streams[sid], st.type == type,
                          p.matches(type: type, device: st.device), !list.isEmpty else { continue }
                    let firstMinute = lo.floorDiv(60_000)
                    var l = 0, h = list.count
                    while l < h { let m = (l + h) / 2; if list[m].minute < firstMinute { l = m + 1 } else { h = m } }
                    var k = l
                    var i = 0
                    while k < list.count {
                        let t = list[k].minute * 60_000
                        if t >= hi { break }
                        while b[i + 1] <= t { i += 1 }
                        totals[i].merge(list[k].aggregate)
                        if bySource { sources[i][st.device.id, default: Aggregate()].merge(list[k].aggregate) }
                        k += 1
                    }
                }
                continue
            }
            let all = p == .all, noDeletions = snap.deleted.isEmpty
            var cursor = LogCursor(self, from: max(seg.firstAnchor, snap.oldest), snapshot: snap, segments: [seg])
            while let item = cursor.next() {
                guard case .sample(let s) = consume item, s.type == type, s.start >= lo, s.start < hi,
                      noDeletions || !snap.deleted.contains(s.anchor), all || p.matches(s) else { continue }
                let i = interval(of: s.start)
                totals[i].add(s.value, start: s.start, anchor: s.anchor)
                if bySource { sources[i][s.device.id, default: Aggregate()].add(s.value, start: s.start, anchor: s.anchor) }
            }
        }

        return (0..<n).map { i in
            var st = Statistics(type: type, start: b[i], end: b[i + 1], aggregate: totals[i], options: options)
            if bySource {
                st.bySource = sources[i].mapValues {
                    Statistics(type: type, start: b[i], end: b[i + 1], aggregate: $0, options: options)
                }
            }
            return st
        }
    }
}
