import Glibc
import Synchronization
import StrapModel
import StrapOS

/// A read-only mapping of a file prefix; unmapped when the last query holding it is done.
final class MappedFile: @unchecked Sendable {
    let base: UnsafeRawPointer?
    let count: Int

    init(_ file: OpenFile, length: Int) throws(SystemCallError) {
        count = length
        guard length > 0 else { base = nil; return }
        let p = mmap(nil, length, PROT_READ, MAP_SHARED, file.descriptor.rawValue, 0)
        guard let p, p != MAP_FAILED else { throw SystemCallError("mmap", .current, path: file.path) }
        base = UnsafeRawPointer(p)
    }

    deinit { if let base { munmap(UnsafeMutableRawPointer(mutating: base), count) } }

    var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Bytes before this offset were handed back to the kernel (one reader owns a mapping).
    private var dropped = 0

    /// Lets the kernel drop the pages before `offset` from this mapping: a long scan (a day's
    /// export) then keeps a few hundred KiB of the file resident instead of all it has read.
    /// The pages stay in the page cache and would fault back in from it; nothing reads them.
    func dropPages(before offset: Int) {
        guard let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let aligned = min(offset, count) / page * page
        guard aligned > dropped else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base) + dropped, aligned - dropped, MADV_DONTNEED)
        dropped = aligned
    }
}

/// One segment file as queries see it. Sealed segments are immutable; the open one grows
/// and readers stop at the durable length the writer publishes.
final class Segment: Sendable {
    let header: SegmentHeader
    let file: SegmentFile
    let indexPath: String
    /// Set for sealed segments (from the index file or a rebuild).
    let sealed: SegmentSummary?
    private let indexHeader: IndexFile.Header?
    private let detailCache: Mutex<SegmentDetail?>
    /// Open segment only: bytes known durable (readable), and the live stream table/checkpoints.
    let durableLength: Atomic<Int>
    let live: Mutex<SegmentDetail>
    /// Record starts where recent anchored reads stopped: a reader that comes back (a
    /// follower, the MQTT publisher) resumes there instead of decoding forward from the last
    /// checkpoint, up to 32 KiB of small records at the tail. Valid for good: the records
    /// before the durable end never change.
    private let resumeHints = Mutex<[Checkpoint]>([])

    init(header: SegmentHeader, file: SegmentFile, indexPath: String, sealed: SegmentSummary?,
         indexHeader: IndexFile.Header?, detail: SegmentDetail?, durableLength: Int) {
        self.header = header
        self.file = file
        self.indexPath = indexPath
        self.sealed = sealed
        self.indexHeader = indexHeader
        detailCache = Mutex(detail)
        self.durableLength = Atomic(durableLength)
        live = Mutex(detail ?? SegmentDetail())
    }

    func remember(_ c: Checkpoint) {
        resumeHints.withLock { h in
            guard !h.contains(c) else { return }
            h.append(c)
            if h.count > 16 { h.removeFirst(h.count - 16) }
        }
    }

    /// The latest remembered record start not after `anchor`.
    func hint(atOrBefore anchor: UInt64) -> Checkpoint? {
        resumeHints.withLock { h in
            var best: Checkpoint?
            for c in h where c.anchor <= anchor && c.anchor > (best?.anchor ?? 0) { best = c }
            return best
        }
    }

    var firstAnchor: UInt64 { header.firstAnchor }
    var isSealed: Bool { sealed != nil }

    /// Readable length: the whole sealed file, or the durable prefix of the open one.
    var readableLength: Int { sealed?.length ?? durableLength.load(ordering: .acquiring) }

    /// Streams and checkpoints (and rollups when sealed). A sealed segment whose index detail
    /// is damaged is rescanned (an unreadable segment then has no streams and serves nothing).
    func detail(report: (String) -> Void) -> SegmentDetail {
        guard isSealed else { return live.withLock { $0 } }
        return detailCache.withLock { cached in
            if let cached { return cached }
            var d: SegmentDetail? = nil
            if let h = indexHeader { d = IndexFile.readDetail(path: indexPath, header: h, syscalls: file.syscalls) }
            if d == nil {
                report("\(indexPath): index detail damaged, rebuilt from the segment")
                if let map = try? file.mapped(length: sealed!.length) {
                    var b = SegmentBuilder(header: header)
                    _ = SegmentScan.recover(map.buffer, header: header, into: &b)
                    d = b.detail()
                }
            }
            cached = d ?? SegmentDetail()
            return cached!
        }
    }

    func map() throws(SystemCallError) -> MappedFile { try file.mapped(length: readableLength) }

    /// A sealed segment whose detail can be read again from its index file.
    var detailReloadable: Bool { isSealed && indexHeader != nil }

    /// Drops the cached detail of a sealed segment; the next `detail` reads the index again.
    func evictDetail() {
        guard detailReloadable else { return }
        detailCache.withLock { $0 = nil }
    }
}

enum SegmentScan {
    enum Stop: Equatable { case end, torn, damaged }

    /// Walks records from `offset` (whose first item has `anchor`) to `end`. `visit` gets each
    /// intact record and its first anchor; returning false stops. Returns where it stopped.
    @inline(__always)
    static func walk(_ buf: UnsafeRawBufferPointer, offset: Int, anchor: UInt64, end: Int,
                     visit: (Frame.Parsed, UInt64) -> Bool) -> (offset: Int, anchor: UInt64, stop: Stop) {
        var pos = offset, a = anchor
        while pos < end {
            switch Frame.parse(buf, at: pos, end: end) {
            case .incomplete: return (pos, a, .torn)
            case .damaged: return (pos, a, .damaged)
            case .record(let rec):
                if !visit(rec, a) { return (pos, a, .end) }
                a += UInt64(rec.items)
                pos = rec.next
            }
        }
        return (pos, a, .end)
    }

    /// Scans a whole segment into `builder` (open-tail recovery and index rebuild). Returns
    /// the end of the intact prefix and why the scan stopped. A record that frames correctly
    /// but whose payload does not decode ends the intact prefix too.
    static func recover(_ buf: UnsafeRawBufferPointer, header: SegmentHeader,
                        into b: inout SegmentBuilder) -> (offset: Int, anchor: UInt64, stop: Stop) {
        let uuids = UUIDScheme(storeID: header.storeID)
        var bad = false
        var chain = b.chain
        var pending: [(Sample, Int)] = []
        var r = walk(buf, offset: Format.headerSize, anchor: header.firstAnchor, end: buf.count) { rec, anchor in
            // Nothing of a record reaches the builder unless all of it decodes.
            var pr = CheckedByteReader(buf, from: rec.payload.lowerBound, to: rec.payload.upperBound)
            let before = chain
            switch RecordKind(rawValue: rec.kind) {
            case .stream:
                guard let s = RecordCodec.decodeStream(&pr) else { bad = true; return false }
                b.recordStart(offset: rec.start, anchor: anchor, chain: before)
                b.addStream(s)
            case .samples:
                pending.removeAll(keepingCapacity: true)
                var c = chain
                let ok = RecordCodec.decodeSamples(pr, count: rec.items, firstAnchor: anchor,
                                                   chain: &c, streams: b.streams,
                                                   uuids: uuids) { s, stream in
                    pending.append((s, stream)); return true
                }
                guard ok, pending.count == rec.items else { bad = true; return false }
                b.recordStart(offset: rec.start, anchor: anchor, chain: before)
                for (s, stream) in pending { b.add(s, stream: stream) }
                chain = c
            case .tombstone:
                guard let ranges = RecordCodec.decodeTombstone(&pr) else { bad = true; return false }
                b.recordStart(offset: rec.start, anchor: anchor, chain: before)
                b.addTombstone(ranges)
            case .workout, .none:
                b.recordStart(offset: rec.start, anchor: anchor, chain: before)
            }
            return true
        }
        if bad { r.stop = .damaged }
        b.chain = chain
        b.finish(nextAnchor: r.anchor, length: r.offset)
        return r
    }
}
