import Glibc
import StrapModel
import StrapOS

/// Where the log ends after a write: what a sync must cover.
struct LogPosition {
    var segment: Segment
    var offset: Int
    var nextAnchor: UInt64
}

/// The single owner of the open segment. Confined to `confinement` (the store takes it around
/// every call); it never blocks readers, who see only what `Store` publishes after durability.
final class StoreWriter: @unchecked Sendable {
    fileprivate struct StreamKey: Hashable { var type: QuantityType; var device: Device }

    /// Held around every use of the writer (`Store.onWriter`); was a serial queue's `sync`.
    let confinement = ConfinementLock()
    let config: StoreConfig
    let storeID: UInt64
    let shared: StoreShared
    private(set) var segment: Segment
    private var builder: SegmentBuilder
    private(set) var offset: Int
    private(set) var nextAnchor: UInt64
    private var streamIDs: [StreamKey: Int] = [:]
    /// Stream ids by device object identity: the pipeline hands the same `Device` object for
    /// every sample of a device, so most lookups hash one pointer instead of the device's id
    /// string. `identityDevices` holds the devices, so an identifier cannot be reused while it
    /// is cached; the ids sit alone in the dictionary, so a lookup copies no reference.
    fileprivate struct IdentityKey: Hashable { var device: UInt; var type: QuantityType }
    private var streamsByIdentity: [IdentityKey: Int] = [:]
    private var identityDevices: [Device] = []
    /// The streams last resolved: a notification's samples nearly always repeat the device and
    /// types of the previous ones (a CSC sensor's speed and cadence, a strap's heart rate and
    /// RR), so the next append starts from them without hashing. Taken from an append only
    /// once it is written (its streams then exist), and cleared with `identityDevices` (a
    /// device let go could leave its address to another) and at a roll (ids are per segment).
    private var recentStreams = StreamResolver.Recent()
    private var openedAt: Double
    /// Reused by every append (emptied, capacity kept), so that an append at sensor rates
    /// allocates nothing once they have grown: the record bytes, one record's payload, the
    /// stream ids of each batch, where each record starts and a run's extras. Taken out for the append and
    /// put back after it; one a large backlog grew beyond `keptCapacity` is let go.
    private var recordBuffer = ByteWriter()
    private var payloadBuffer = ByteWriter()
    private var extrasBuffer = ByteWriter()
    private var idBuffers: [[Int]] = []
    private var startBuffer: [(Int, UInt64, Chain)] = []
    private let keptCapacity = 1 << 18

    init(config: StoreConfig, storeID: UInt64, shared: StoreShared, segment: Segment,
         builder: SegmentBuilder, offset: Int) {
        self.config = config
        self.storeID = storeID
        self.shared = shared
        self.segment = segment
        self.builder = builder
        self.offset = offset
        nextAnchor = builder.summary.nextAnchor
        openedAt = Self.now()
        for case let s? in builder.streams { streamIDs[StreamKey(type: s.type, device: s.device)] = s.id }
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    var position: LogPosition {
        confinement.assertHeld()
        return LogPosition(segment: segment, offset: offset, nextAnchor: nextAnchor)
    }

    // MARK: appends

    /// Appends samples as one write; returns the first anchor. On failure nothing is appended.
    func append(_ samples: [Sample]) throws(StrapError) -> UInt64 {
        try append(batches: [samples])
    }

    /// Appends batches, in order, as one write: the pipeline's store stage hands on the batches
    /// that queued up during the previous append without copying them into one array (a copy
    /// retained every sample's device on the store's thread while the ingest thread made more).
    /// Returns the first anchor. On failure nothing is appended.
    func append(batches: [[Sample]]) throws(StrapError) -> UInt64 {
        confinement.assertHeld()
        guard let firstBatch = batches.first(where: { !$0.isEmpty }) else { return nextAnchor }
        try rollIfNeeded(baseTime: firstBatch[0].start)
        var resolver = StreamResolver(known: streamsByIdentity, nextStreamID: builder.streams.count)
        streamsByIdentity = [:]
        // Bounded: devices re-created on every identity change must not pile up. Cleared
        // between appends only, so every device cached stays held in `identityDevices`.
        if resolver.byIdentity.count >= 4096 {
            resolver.byIdentity.removeAll(keepingCapacity: true)
            identityDevices.removeAll(keepingCapacity: true)
            recentStreams = StreamResolver.Recent()
        }
        // Moved, not shared, so that the resolver adds to it without copying it; the writer
        // gets it back only once the append is written (until then it holds none).
        swap(&resolver.recent, &recentStreams)
        var ids: [[Int]] = []
        swap(&ids, &idBuffers)
        while ids.count < batches.count { ids.append([]) }
        for b in batches.indices {
            resolver.fillIDs(&ids[b], for: batches[b], streamIDs: streamIDs, holding: &identityDevices)
        }
        streamsByIdentity = resolver.byIdentity
        let newStreams = resolver.newStreams

        let total = batches.reduce(0) { $0 + $1.count }
        var w = ByteWriter()
        swap(&w, &recordBuffer)
        w.bytes.removeAll(keepingCapacity: true)
        w.bytes.reserveCapacity(total * 6 + 64)
        var payload = ByteWriter()
        swap(&payload, &payloadBuffer)
        var extras = ByteWriter()
        swap(&extras, &extrasBuffer)
        var recordStarts: [(Int, UInt64, Chain)] = []
        swap(&recordStarts, &startBuffer)
        recordStarts.removeAll(keepingCapacity: true)
        var chain = builder.chain
        for s in newStreams {
            recordStarts.append((w.bytes.count, nextAnchor, chain))
            Frame.append(kind: .stream, items: 0, payload: RecordCodec.encodeStream(s), to: &w)
        }
        let chunk = max(1, config.recordMaxSamples)
        var base = nextAnchor
        for (samples, batchIDs) in zip(batches, ids) {
            var i = 0
            while i < samples.count {
                let j = min(samples.count, i + chunk)
                recordStarts.append((w.bytes.count, base + UInt64(i), chain))
                payload.bytes.removeAll(keepingCapacity: true)
                RecordCodec.encodeSamples(samples, ids: batchIDs, range: i..<j, chain: &chain, into: &payload, extras: &extras)
                payload.bytes.withUnsafeBytes { Frame.append(kind: .samples, items: j - i, payload: $0, to: &w) }
                i = j
            }
            base += UInt64(samples.count)
        }
        defer {
            if w.bytes.capacity <= keptCapacity { recordBuffer = w }
            if payload.bytes.capacity <= keptCapacity { payloadBuffer = payload }
            if extras.bytes.capacity <= keptCapacity { extrasBuffer = extras }
            if recordStarts.capacity <= keptCapacity / 32 { startBuffer = recordStarts }
            if batches.count <= 64 && total <= keptCapacity / 8 { idBuffers = ids }
        }
        try write(w.bytes)

        for s in newStreams {
            builder.addStream(s)
            streamIDs[StreamKey(type: s.type, device: s.device)] = s.id
        }
        for (identity, id) in resolver.newByIdentity { streamsByIdentity[identity] = id }
        swap(&recentStreams, &resolver.recent)
        for (off, a, c) in recordStarts { builder.recordStart(offset: offset + off, anchor: a, chain: c) }
        builder.chain = chain
        let first = nextAnchor
        base = first
        for (samples, batchIDs) in zip(batches, ids) {
            builder.add(samples, ids: batchIDs, firstAnchor: base)
            base += UInt64(samples.count)
        }
        advance(bytes: w.bytes.count, items: total, newStreams: !newStreams.isEmpty)
        return first
    }

    func appendTombstone(_ ranges: [RecordCodec.DeletedRange]) throws(StrapError) -> UInt64 {
        confinement.assertHeld()
        let items = ranges.reduce(0) { $0 + Int($1.count) }
        try rollIfNeeded(baseTime: Millis(Self.now() * 1000))
        var w = ByteWriter()
        Frame.append(kind: .tombstone, items: items, payload: RecordCodec.encodeTombstone(ranges), to: &w)
        try write(w.bytes)
        builder.recordStart(offset: offset, anchor: nextAnchor, chain: builder.chain)
        builder.addTombstone(ranges)
        let first = nextAnchor
        advance(bytes: w.bytes.count, items: items, newStreams: false)
        return first
    }

    func appendWorkout(_ workout: Workout) throws(StrapError) -> UInt64 {
        confinement.assertHeld()
        try rollIfNeeded(baseTime: workout.start)
        var w = ByteWriter()
        Frame.append(kind: .workout, items: 1, payload: RecordCodec.encodeWorkout(workout), to: &w)
        try write(w.bytes)
        builder.recordStart(offset: offset, anchor: nextAnchor, chain: builder.chain)
        let first = nextAnchor
        advance(bytes: w.bytes.count, items: 1, newStreams: false)
        return first
    }

    private func advance(bytes: Int, items: Int, newStreams: Bool) {
        offset += bytes
        nextAnchor += UInt64(items)
        builder.finish(nextAnchor: nextAnchor, length: offset)
        let streams = builder.streams, checkpoints = builder.checkpoints
        segment.live.withLock { d in
            if newStreams { d.streams = streams }
            if d.checkpoints.count != checkpoints.count { d.checkpoints = checkpoints }
        }
        if config.sync == .none { shared.publishDurable(position) }
    }

    /// Writes at the end of the open segment. On failure (ENOSPC above all) the partial
    /// write is cut off again, so the log stays a clean prefix, and the store turns degraded.
    private func write(_ bytes: [UInt8]) throws(StrapError) {
        do throws(SystemCallError) {
            try segment.file.appendable.pwriteAll(bytes, at: offset)
            shared.clearDegraded()
        } catch {
            try? segment.file.appendable.truncate(to: offset)
            throw shared.degrade(error)
        }
    }

    // MARK: segments

    private func rollIfNeeded(baseTime: Millis) throws(StrapError) {
        let items = Int(nextAnchor - segment.firstAnchor)
        guard items > 0 else {
            if offset == Format.headerSize, abs(baseTime &- segment.header.baseTime) > 3_600_000 { try rebase(baseTime) }
            return
        }
        if items >= config.segmentMaxItems || offset >= config.segmentMaxBytes
            || Self.now() - openedAt >= config.segmentMaxAge {
            try roll(baseTime: baseTime)
        }
    }

    /// Rewrites the header of the still empty open segment with a time base near its first
    /// sample, so record times stay short deltas (a segment created at open time takes the
    /// wall clock, which may be far from imported or replayed samples). No record is touched.
    private func rebase(_ baseTime: Millis) throws(StrapError) {
        let header = SegmentHeader(storeID: storeID, firstAnchor: segment.firstAnchor, baseTime: baseTime)
        do throws(SystemCallError) {
            try segment.file.appendable.pwriteAll(header.encode(), at: 0)
            try segment.file.dataSync()
        } catch {
            throw shared.degrade(error)
        }
        let open = Segment(header: header, file: segment.file, indexPath: segment.indexPath, sealed: nil,
                           indexHeader: nil, detail: nil, durableLength: Format.headerSize)
        shared.replaceEmptyOpenSegment(open)
        segment = open
        builder = SegmentBuilder(header: header)
    }

    /// Seals the open segment and starts the next: the old log is fsynced, the new segment
    /// exists (header fsynced), then the old index is written. A crash at any point leaves
    /// either no index (rebuilt at open) or a complete one.
    func roll(baseTime: Millis) throws(StrapError) {
        confinement.assertHeld()
        let dir = config.directory
        let header = SegmentHeader(storeID: storeID, firstAnchor: nextAnchor, baseTime: baseTime)
        let path = dir + "/" + Format.segmentName(nextAnchor)
        let sys = config.syscalls
        let newFile: OpenFile
        do throws(SystemCallError) {
            try segment.file.dataSync()
            newFile = try OpenFile(path: path, flags: O_RDWR | O_CREAT | O_TRUNC, syscalls: sys)
            do throws(SystemCallError) {
                try newFile.pwriteAll(header.encode(), at: 0)
                try newFile.dataSync()
                var b = builder
                let detail = b.detail()
                // Its directory fsync also makes the new segment's creation durable.
                try sys.writeFileAtomically(IndexFile.encode(storeID: storeID, summary: b.summary, detail: detail),
                                            to: segment.indexPath)
                let ih = IndexFile.readSummary(path: segment.indexPath, syscalls: sys)
                // Read back from the index when first needed, then cached within the store's bound
                // (StoreShared.detail(of:)); held from here it would stay in memory for good.
                let sealed = Segment(header: segment.header, file: segment.file.sealedFile, indexPath: segment.indexPath,
                                     sealed: b.summary, indexHeader: ih, detail: ih == nil ? detail : nil, durableLength: offset)
                let open = Segment(header: header, file: SegmentFile(appending: newFile), indexPath: dir + "/" + Format.indexName(nextAnchor),
                                   sealed: nil, indexHeader: nil, detail: nil, durableLength: Format.headerSize)
                shared.replaceOpenSegment(sealed: sealed, open: open, durableNext: nextAnchor)
                segment = open
            } catch {
                try? sys.removeFile(path)
                throw error
            }
        } catch {
            throw shared.degrade(error)
        }
        builder = SegmentBuilder(header: header)
        offset = Format.headerSize
        streamIDs = [:]
        streamsByIdentity.removeAll()
        identityDevices.removeAll()
        recentStreams = StreamResolver.Recent()
        openedAt = Self.now()
        shared.clearDegraded()
    }
}

/// One append's stream lookup: each sample's segment-local stream id, defining streams the
/// segment does not have yet.
private struct StreamResolver {
    typealias IdentityKey = StoreWriter.IdentityKey
    struct Resolved { var identity: IdentityKey; var id: Int }
    /// The last identities resolved, compared before any hashing; the oldest is replaced.
    /// Sixteen hold every stream of a few sensors whose notifications take turns (four did
    /// not: four sensors' turns replaced each entry before it was used again).
    struct Recent {
        static let capacity = 16
        private var entries: [Resolved] = []
        private var next = 0

        func id(of identity: IdentityKey) -> Int? {
            entries.withUnsafeBufferPointer { b in
                for r in b where r.identity == identity { return r.id }
                return nil
            }
        }

        mutating func remember(_ r: Resolved) {
            if entries.count < Self.capacity { entries.append(r); return }
            entries[next] = r
            next = (next + 1) % Self.capacity
        }
    }
    /// Stream ids by device object and type, from earlier appends (the fast path).
    var byIdentity: [IdentityKey: Int]
    /// Streams this append defines, by identity too: they join `byIdentity` only once the
    /// write succeeded. Without it, every sample of a new stream (all of a new segment's
    /// first batch) hashed its device and scanned `newStreams`.
    var newByIdentity: [IdentityKey: Int] = [:]
    var newStreams: [StreamDef] = []
    var nextStreamID: Int
    /// Checked before any hashing; carried across batches and, through the writer, appends.
    var recent = Recent()

    init(known: [IdentityKey: Int], nextStreamID: Int) {
        byIdentity = known
        self.nextStreamID = nextStreamID
    }

    /// Stream ids ride in a parallel array: an array of (id, sample) tuples copied every
    /// sample through generic value witnesses. Devices newly cached go to `held`.
    /// `ids` is emptied and filled, its capacity kept (the writer reuses it).
    mutating func fillIDs(_ ids: inout [Int], for samples: [Sample], streamIDs: [StoreWriter.StreamKey: Int],
                          holding held: inout [Device]) {
        ids.removeAll(keepingCapacity: true)
        ids.reserveCapacity(samples.count)
        // Runs of one sensor's samples of one type are the rule: the previous sample's stream
        // is checked first, then the recent ones.
        var previous: Resolved?
        // Borrowed in place: `samples[k].device` retained and released each sample's device.
        samples.withUnsafeBufferPointer { sp in
            for k in sp.indices {
                let p = UnsafePointer(sp.baseAddress! + k)
                let identity = IdentityKey(device: Sample.identities(at: p).device, type: p.pointee.type)
                if let previous, previous.identity == identity {
                    ids.append(previous.id); continue
                }
                if let known = recent.id(of: identity) {
                    ids.append(known)
                    previous = Resolved(identity: identity, id: known)
                    continue
                }
                if let known = byIdentity[identity] ?? (newByIdentity.isEmpty ? nil : newByIdentity[identity]) {
                    ids.append(known)
                    previous = Resolved(identity: identity, id: known)
                    recent.remember(previous!)
                    continue
                }
                let s = p.pointee
                let id: Int
                if let existing = streamIDs[StoreWriter.StreamKey(type: s.type, device: s.device)] {
                    id = existing
                    byIdentity[identity] = id
                } else if let defined = newStreams.first(where: { $0.type == s.type && $0.device == s.device })?.id {
                    id = defined
                    newByIdentity[identity] = id
                } else {
                    id = nextStreamID
                    newStreams.append(StreamDef(id: nextStreamID, type: s.type, device: s.device))
                    nextStreamID += 1
                    newByIdentity[identity] = id
                }
                held.append(s.device)
                ids.append(id)
                previous = Resolved(identity: identity, id: id)
                recent.remember(previous!)
            }
        }
    }
}
