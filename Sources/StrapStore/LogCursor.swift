import StrapModel

/// One item met while reading the log in anchor order.
enum LogItem {
    case sample(Sample)
    indirect case workout(Workout)
    /// An entry of a tombstone: `target` was deleted, its type code (0 = workout).
    case deletion(anchor: UInt64, target: UInt64, typeCode: UInt8)
}

/// Reads the durable log of a snapshot in anchor order from an anchor on, one item per
/// `next()`, across segments. A damaged record is reported and skipped: reading resumes at
/// the segment's next checkpoint. `lastExamined` is where a reader stopping now continues.
struct LogCursor {
    /// The segment being read and the position of its next record.
    private struct SegmentRead {
        let segment: Segment
        let map: MappedFile
        let detail: SegmentDetail
        var offset: Int
        var anchor: UInt64
        var chain: Chain
    }

    /// The entries of a tombstone still to hand out.
    private struct DeletionRead {
        let ranges: [RecordCodec.DeletedRange]
        var range = 0
        var target: UInt64
        var anchor: UInt64

        init(_ ranges: [RecordCodec.DeletedRange], firstAnchor: UInt64) {
            self.ranges = ranges
            target = ranges.first?.first ?? 0
            anchor = firstAnchor
        }

        mutating func next() -> (anchor: UInt64, target: UInt64, typeCode: UInt8)? {
            while range < ranges.count, target >= ranges[range].first + ranges[range].count {
                range += 1
                if range < ranges.count { target = ranges[range].first }
            }
            guard range < ranges.count else { return nil }
            defer { target += 1; anchor += 1 }
            return (anchor, target, ranges[range].typeCode)
        }
    }

    private let shared: StoreShared
    private let uuids: UUIDScheme
    private let from: UInt64
    /// The durable end of the snapshot: nothing at or after it is read.
    private let end: UInt64
    private let segments: [Segment]
    private var nextSegment = 0
    private var current: SegmentRead?
    private var samples: SampleRecordReader?
    private var deletions: DeletionRead?
    /// Where the record `samples` or `deletions` hands out starts, and its last anchor.
    private var recordStart = 0
    private var recordLast: UInt64 = 0
    private var finished = false
    /// The last anchor examined (`from - 1` before any).
    private(set) var lastExamined: UInt64
    /// Long scans (`Store.scan`) hand the pages they are done with back every 256 KiB.
    var dropsPagesBehind = false
    /// A reader of workouts and tombstones alone (`WorkoutCatalog`'s pass after each
    /// `workout.list`) steps over sample records, following their chain, instead of decoding
    /// every sample only to drop it: `strapctl live` asks every five seconds.
    var skipsSamples = false
    private var droppedBefore = 0
    /// The start of the last record met in the wanted range: where the next read resumes.
    private var resume: (segment: Segment, at: Checkpoint)?

    /// `segments` narrows the read to those segments (by default all of the snapshot's).
    init(_ store: Store, from: UInt64, snapshot: Published, segments: [Segment]? = nil) {
        shared = store.shared
        uuids = store.uuids
        self.from = from
        end = snapshot.durableNext
        self.segments = segments ?? snapshot.segments
        lastExamined = from &- 1
    }

    @inline(__always)
    mutating func next() -> LogItem? {
        while !finished {
            if samples != nil {
                if let s = nextSample() { return .sample(s) }
            } else if deletions != nil {
                if let d = nextDeletion() { return d }
            } else if let item = nextRecord() {
                return item
            }
        }
        return nil
    }

    // MARK: items within a record

    @inline(__always)
    private mutating func nextSample() -> Sample? {
        while true {
            switch samples!.next(uuids: uuids) {
            case .sample(let s, _):
                let a = s.anchor
                if a < from { continue }
                if a >= end { finished = true; return nil }
                lastExamined = a
                return s
            case .end:
                current!.chain = samples!.chain
                samples = nil
                lastExamined = max(lastExamined, recordLast)
                return nil
            case .damaged:
                samples = nil
                skipDamaged(at: recordStart)
                return nil
            }
        }
    }

    private mutating func nextDeletion() -> LogItem? {
        while let d = deletions!.next() {
            if d.anchor < from { continue }
            if d.anchor >= end { finished = true; return nil }
            lastExamined = d.anchor
            return .deletion(anchor: d.anchor, target: d.target, typeCode: d.typeCode)
        }
        deletions = nil
        lastExamined = max(lastExamined, recordLast)
        return nil
    }

    // MARK: records

    /// Steps to the next record: a workout is returned, samples and tombstones are set up to
    /// be handed out item by item, anything else is stepped over.
    private mutating func nextRecord() -> LogItem? {
        guard current != nil || openNextSegment() else { finished = true; return nil }
        let buf = current!.map.buffer
        let offset = current!.offset, a = current!.anchor
        guard offset < buf.count else { current = nil; return nil }
        if dropsPagesBehind, offset - droppedBefore >= 256 << 10 {
            // Every sample handed out so far was decoded into its own storage.
            current!.map.dropPages(before: offset)
            droppedBefore = offset
        }
        guard case .record(let rec) = Frame.parse(buf, at: offset, end: buf.count) else {
            skipDamaged(at: offset)
            return nil
        }
        if a >= end { finished = true; return nil }
        var payload = CheckedByteReader(buf, from: rec.payload.lowerBound, to: rec.payload.upperBound)
        let kind = RecordKind(rawValue: rec.kind)
        if a + UInt64(rec.items) <= from {
            // Before the wanted range: only the samples chain has to follow along.
            if kind == .samples, !RecordCodec.advanceChain(&payload, chain: &current!.chain) {
                skipDamaged(at: offset)
                return nil
            }
            current!.offset = rec.next
            current!.anchor = a + UInt64(rec.items)
            return nil
        }
        resume = (current!.segment, Checkpoint(offset: offset, anchor: a, chain: current!.chain))
        current!.offset = rec.next
        current!.anchor = a + UInt64(rec.items)
        recordStart = offset
        recordLast = rec.items > 0 ? a + UInt64(rec.items) - 1 : lastExamined
        switch kind {
        case .samples where skipsSamples:
            guard RecordCodec.advanceChain(&payload, chain: &current!.chain) else {
                skipDamaged(at: offset)
                return nil
            }
            if recordLast >= end { finished = true }
            lastExamined = max(lastExamined, min(recordLast, end &- 1))
            return nil
        case .samples:
            guard let reader = SampleRecordReader(payload, count: rec.items, firstAnchor: a, chain: current!.chain,
                                                  streams: current!.detail.streams) else {
                skipDamaged(at: offset)
                return nil
            }
            samples = reader
            return nil
        case .tombstone:
            // An unreadable tombstone deletes nothing; its anchors count as examined.
            if let ranges = RecordCodec.decodeTombstone(&payload) {
                deletions = DeletionRead(ranges, firstAnchor: a)
            } else {
                lastExamined = max(lastExamined, recordLast)
            }
            return nil
        case .workout:
            lastExamined = max(lastExamined, recordLast)
            return RecordCodec.decodeWorkout(Array(UnsafeRawBufferPointer(rebasing: buf[rec.payload])),
                                             anchor: a, uuids: uuids).map { .workout($0) }
        case .stream, .none:
            lastExamined = max(lastExamined, recordLast)
            return nil
        }
    }

    /// Opens the next segment that holds anchors at or after `from`, positioned at its last
    /// checkpoint not after `from`; false when there is none.
    private mutating func openNextSegment() -> Bool {
        while nextSegment < segments.count {
            let i = nextSegment
            nextSegment += 1
            let seg = segments[i]
            let segEnd = seg.sealed?.nextAnchor ?? end
            let nextFirst = i + 1 < segments.count ? segments[i + 1].firstAnchor : end
            if min(segEnd, nextFirst) <= from { continue }
            if seg.firstAnchor >= end { return false }
            let detail = shared.detail(of: seg)
            guard let map = try? seg.map() else {
                shared.report("\(Format.segmentName(seg.firstAnchor)): cannot be read; skipped")
                continue
            }
            var start = detail.checkpoints.last(where: { $0.anchor <= from })
                ?? Checkpoint(offset: Format.headerSize, anchor: seg.firstAnchor, chain: Chain(time: seg.header.baseTime, stream: -1))
            if let hint = seg.hint(atOrBefore: from), hint.anchor > start.anchor { start = hint }
            current = SegmentRead(segment: seg, map: map, detail: detail, offset: start.offset, anchor: start.anchor,
                                  chain: start.chain)
            droppedBefore = start.offset
            return true
        }
        return false
    }

    /// Lets the next read from where this one stopped start at the record it stopped in.
    func rememberPosition() {
        if let resume { resume.segment.remember(resume.at) }
    }

    /// Reports the damaged record at `offset` and resumes at the next checkpoint after it
    /// (or the next segment when there is none).
    private mutating func skipDamaged(at offset: Int) {
        let seg = current!.segment
        shared.report("\(Format.segmentName(seg.firstAnchor)): damaged record at byte \(offset); skipped")
        guard let resume = current!.detail.checkpoints.first(where: { $0.offset > offset }) else {
            current = nil
            return
        }
        current!.offset = resume.offset
        current!.anchor = resume.anchor
        current!.chain = resume.chain
    }
}
