import Glibc
import StrapModel
import StrapOS

/// Where the log ends after a write: what a sync must cover.
struct LogPosition {
    var segment: Segment
    var offset: Int
    var nextAnchor: UInt64
}

/// The single owner of the open segment. Confined to the store's serial write queue; it
/// never blocks readers, who see only what `Store` publishes after durability.
final class StoreWriter: @unchecked Sendable {
    private struct StreamKey: Hashable { var type: QuantityType; var device: Device }

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
    private struct IdentityKey: Hashable { var device: ObjectIdentifier; var type: QuantityType }
    private var streamsByIdentity: [IdentityKey: Int] = [:]
    private var identityDevices: [Device] = []
    private var openedAt: Double

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

    var position: LogPosition { LogPosition(segment: segment, offset: offset, nextAnchor: nextAnchor) }

    // MARK: appends

    /// Appends samples as one write; returns the first anchor. On failure nothing is appended.
    func append(_ samples: [Sample]) throws(StrapError) -> UInt64 {
        guard !samples.isEmpty else { return nextAnchor }
        try rollIfNeeded(baseTime: samples[0].start)
        var newStreams: [StreamDef] = []
        var nextStreamID = builder.streams.count
        // Stream ids ride in a parallel array: an array of (id, sample) tuples copied every
        // sample through generic value witnesses.
        var ids: [Int] = []
        ids.reserveCapacity(samples.count)
        // Runs of one sensor's samples of one type are the rule (a notification's samples, a
        // sensor's batch): the previous sample's stream is checked before any hashing.
        var previous: (identity: IdentityKey, id: Int)?
        // Borrowed in place: `samples[k].device` retained and released each sample's device.
        samples.withUnsafeBufferPointer { sp in
        for k in sp.indices {
            let p = UnsafePointer(sp.baseAddress! + k)
            let identity = IdentityKey(device: ObjectIdentifier(p.pointee.device), type: p.pointee.type)
            if let previous, previous.identity == identity {
                ids.append(previous.id); continue
            }
            if let known = streamsByIdentity[identity] {
                ids.append(known)
                previous = (identity, known)
                continue
            }
            let s = p.pointee
            let key = StreamKey(type: s.type, device: s.device)
            var id = streamIDs[key] ?? newStreams.first(where: { $0.type == s.type && $0.device == s.device })?.id
            if id == nil {
                id = nextStreamID
                newStreams.append(StreamDef(id: nextStreamID, type: s.type, device: s.device))
                nextStreamID += 1
            }
            ids.append(id!)
            if streamIDs[key] != nil {
                // Bounded: devices re-created on every identity change must not pile up.
                if streamsByIdentity.count >= 4096 {
                    streamsByIdentity.removeAll(keepingCapacity: true)
                    identityDevices.removeAll(keepingCapacity: true)
                }
                streamsByIdentity[identity] = id!
                identityDevices.append(s.device)
            }
        }
        }

        var w = ByteWriter(capacity: samples.count * 6 + 64)
        var recordStarts: [(Int, UInt64, Chain)] = []
        var chain = builder.chain
        for s in newStreams {
            recordStarts.append((w.bytes.count, nextAnchor, chain))
            Frame.append(kind: .stream, items: 0, payload: RecordCodec.encodeStream(s), to: &w)
        }
        var i = 0
        let chunk = max(1, config.recordMaxSamples)
        while i < samples.count {
            let j = min(samples.count, i + chunk)
            recordStarts.append((w.bytes.count, nextAnchor + UInt64(i), chain))
            var payload = ByteWriter(capacity: (j - i) * 5 + 8)
            RecordCodec.encodeSamples(samples, ids: ids, range: i..<j, chain: &chain, into: &payload)
            Frame.append(kind: .samples, items: j - i, payload: payload.bytes, to: &w)
            i = j
        }
        try write(w.bytes)

        for s in newStreams {
            builder.addStream(s)
            streamIDs[StreamKey(type: s.type, device: s.device)] = s.id
        }
        for (off, a, c) in recordStarts { builder.recordStart(offset: offset + off, anchor: a, chain: c) }
        builder.chain = chain
        let first = nextAnchor
        builder.add(samples, ids: ids, firstAnchor: first)
        advance(bytes: w.bytes.count, items: samples.count, newStreams: !newStreams.isEmpty)
        return first
    }

    func appendTombstone(_ ranges: [RecordCodec.DeletedRange]) throws(StrapError) -> UInt64 {
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
        openedAt = Self.now()
        shared.clearDegraded()
    }
}
