import Glibc
import StrapModel
import StrapOS

/// Why a store could not be opened.
enum StoreOpenError: Error, CustomStringConvertible {
    /// Another process (a second strapd) has the store open for writing.
    case inUse(directory: String, pid: Int32?)
    case system(SystemCallError)
    /// A file claims a format newer than this build reads; nothing was touched.
    case newerFormat(NewerFormat)

    var description: String {
        switch self {
        case let .inUse(dir, pid):
            "\(dir) is in use by another strapd\(pid.map { " (pid \($0))" } ?? ""); a store has one writer: stop that process, or give this one another --state-dir"
        case let .system(e): "\(e)"
        case let .newerFormat(f): f.description
        }
    }
}

/// Start-up: finds the segments, trusts sealed ones through their index files (rebuilding
/// a missing index), verifies only the open tail and truncates a torn one.
struct StoreOpener {
    /// The segment appends go to, and where its log ends.
    private typealias OpenTail = (segment: Segment, builder: SegmentBuilder, offset: Int)

    let config: StoreConfig
    var dir: String { config.directory }
    var sys: Syscalls { config.syscalls }
    var problems: [String] = []
    private var segments: [Segment] = []
    private var deleted = DeletedSet()
    private var tail: OpenTail? = nil
    /// The anchor after everything found so far.
    private var nextAnchor: UInt64 = 1

    init(config: StoreConfig) { self.config = config }

    mutating func open() throws(StoreOpenError) -> Store {
        do throws(SystemCallError) { try sys.makeDirectories(dir) } catch { throw .system(error) }
        // Only reads: a store a newer strapd wrote is refused before even the lock file is written.
        try FormatVersionGate.check(directory: dir, syscalls: sys)
        // Before anything in the directory is touched: a second writer would append to the
        // same open segment and each would truncate the other's records as a torn tail.
        let lock: LockFile
        do throws(LockFile.Failure) { lock = try LockFile(path: dir + "/" + Format.lockName, syscalls: sys) } catch {
            switch error {
            case let .held(_, pid): throw .inUse(directory: dir, pid: pid)
            case let .system(e): throw .system(e)
            }
        }
        do throws(SystemCallError) { return try load(lock: lock) } catch { throw .system(error) }
    }

    private mutating func load(lock: LockFile) throws(SystemCallError) -> Store {
        let anchors = try prepareDirectory()
        let storeID = try loadStoreID(segmentAnchors: anchors)
        for (i, first) in anchors.enumerated() {
            try loadSegment(first, storeID: storeID, isLast: i == anchors.count - 1)
        }
        let open: OpenTail
        if let tail { open = tail } else { open = try createOpenSegment(storeID: storeID) }
        return assemble(storeID: storeID, open, lock: lock)
    }

    /// Creates the directory if needed, removes temporary files an interrupted atomic write
    /// left, and returns the first anchors of the segment files present, in order.
    private func prepareDirectory() throws(SystemCallError) -> [UInt64] {
        let names = try sys.listDirectory(dir)
        for n in names where n.hasSuffix(".tmp") { try? sys.removeFile(dir + "/" + n) }
        return names.compactMap(Format.parseSegmentName).sorted()
    }

    /// One segment file: a sealed one with a sound index is trusted as the index says; the
    /// last one (the open tail) and sealed ones without a usable index are scanned.
    private mutating func loadSegment(_ first: UInt64, storeID: UInt64, isLast: Bool) throws(SystemCallError) {
        let path = dir + "/" + Format.segmentName(first)
        let file = try OpenFile(path: path, flags: isLast ? O_RDWR : O_RDONLY, syscalls: sys)
        let size = try file.size()
        guard let header = try checkedHeader(file, first: first, storeID: storeID, size: size, isLast: isLast) else { return }
        if adoptIndexed(header, file: file, size: size) { return }
        let map = try MappedFile(file, length: size)
        var builder = SegmentBuilder(header: header)
        let scan = SegmentScan.recover(map.buffer, header: header, into: &builder)
        if isLast && header.version < Format.version {
            try retireTail(header, file: file, size: size, builder: builder, scan: scan, storeID: storeID)
        } else if isLast {
            try recoverTail(header, file: file, size: size, builder: builder, scan: scan)
        } else {
            rebuildIndex(header, file: file, size: size, builder: builder, scan: scan, storeID: storeID)
        }
        deleted.insert(builder.summary.tombstones)
        nextAnchor = max(nextAnchor, scan.anchor)
    }

    /// The segment's header when it belongs here; nil (and a reported problem, or the file
    /// removed when a crash interrupted its creation) when the segment is to be skipped.
    private mutating func checkedHeader(_ file: OpenFile, first: UInt64, storeID: UInt64, size: Int,
                                        isLast: Bool) throws(SystemCallError) -> SegmentHeader? {
        let decoded = SegmentHeader.decode(try file.read(at: 0, count: Format.headerSize))
        if case .success(let header) = decoded, header.firstAnchor == first, header.storeID == storeID { return header }
        if isLast && size < Format.headerSize {
            // Crashed while creating it: nothing was ever stored there.
            try? sys.removeFile(file.path)
            return nil
        }
        let why: String
        switch decoded {
        case .failure(.version(let v)): why = "format version \(v) is not supported (this build reads \(Format.version))"
        case .success: why = "segment of another store or misnamed"
        default: why = "damaged segment header"
        }
        problems.append("\(Format.segmentName(first)): \(why); segment skipped")
        // Every item takes at least one byte, so this bounds the anchors it held.
        nextAnchor = max(nextAnchor, first + UInt64(size))
        return nil
    }

    /// Takes a segment as its index file describes it, without reading the segment; false
    /// when there is no sound index for it.
    private mutating func adoptIndexed(_ header: SegmentHeader, file: OpenFile, size: Int) -> Bool {
        let idxPath = dir + "/" + Format.indexName(header.firstAnchor)
        guard let ih = IndexFile.readSummary(path: idxPath, syscalls: sys), ih.storeID == header.storeID,
              ih.summary.firstAnchor == header.firstAnchor, ih.summary.length <= size else { return false }
        segments.append(Segment(header: header, file: SegmentFile(sealed: file.path, syscalls: sys), indexPath: idxPath, sealed: ih.summary,
                                indexHeader: ih, detail: nil, durableLength: ih.summary.length))
        deleted.insert(ih.summary.tombstones)
        nextAnchor = max(nextAnchor, ih.summary.nextAnchor)
        return true
    }

    /// The open tail: whatever follows its intact prefix (a write torn by a crash) is cut off.
    private mutating func recoverTail(_ header: SegmentHeader, file: OpenFile, size: Int, builder: SegmentBuilder,
                                      scan: (offset: Int, anchor: UInt64, stop: SegmentScan.Stop)) throws(SystemCallError) {
        if scan.offset < size {
            problems.append("\(Format.segmentName(header.firstAnchor)): \(scan.stop == .torn ? "torn" : "damaged") tail truncated at byte \(scan.offset) of \(size)")
            try file.truncate(to: scan.offset)
            try file.dataSync()
        }
        var b = builder
        var detail = b.detail()
        detail.rollups = []
        let seg = Segment(header: header, file: SegmentFile(appending: file), indexPath: dir + "/" + Format.indexName(header.firstAnchor), sealed: nil,
                          indexHeader: nil, detail: detail, durableLength: scan.offset)
        tail = (seg, b, scan.offset)
        segments.append(seg)
    }

    /// An open tail an older strapd wrote is sealed, not appended to: its header promises an
    /// older reader that only that version's type codes follow. Its torn tail is cut off as
    /// `recoverTail` would; one holding no record is removed, its anchor taken by the new
    /// open segment, so the store never keeps an empty sealed segment.
    private mutating func retireTail(_ header: SegmentHeader, file: OpenFile, size: Int, builder: SegmentBuilder,
                                     scan: (offset: Int, anchor: UInt64, stop: SegmentScan.Stop),
                                     storeID: UInt64) throws(SystemCallError) {
        let name = Format.segmentName(header.firstAnchor)
        if scan.offset < size {
            problems.append("\(name): \(scan.stop == .torn ? "torn" : "damaged") tail truncated at byte \(scan.offset) of \(size)")
            try file.truncate(to: scan.offset)
            try file.dataSync()
        }
        if scan.offset <= Format.headerSize {
            try sys.removeFile(file.path)
            try sys.syncDirectory(dir)
            return
        }
        let idxPath = dir + "/" + Format.indexName(header.firstAnchor)
        var b = builder
        let detail = b.detail()
        try sys.writeFileAtomically(IndexFile.encode(storeID: storeID, summary: b.summary, detail: detail), to: idxPath)
        segments.append(Segment(header: header, file: SegmentFile(sealed: file.path, syscalls: sys), indexPath: idxPath, sealed: b.summary,
                                indexHeader: IndexFile.readSummary(path: idxPath, syscalls: sys), detail: detail,
                                durableLength: scan.offset))
    }

    /// A sealed segment whose index is missing or damaged: served from a rescan, and the
    /// index written again (best effort: a full disk only means rescanning next time).
    private mutating func rebuildIndex(_ header: SegmentHeader, file: OpenFile, size: Int, builder: SegmentBuilder,
                                       scan: (offset: Int, anchor: UInt64, stop: SegmentScan.Stop), storeID: UInt64) {
        let name = Format.segmentName(header.firstAnchor)
        if scan.offset < size {
            problems.append("\(name): damaged at byte \(scan.offset); the rest of the segment is skipped")
        } else {
            problems.append("\(name): index missing or damaged, rebuilt")
        }
        let idxPath = dir + "/" + Format.indexName(header.firstAnchor)
        var b = builder
        let detail = b.detail()
        try? sys.writeFileAtomically(IndexFile.encode(storeID: storeID, summary: b.summary, detail: detail), to: idxPath)
        segments.append(Segment(header: header, file: SegmentFile(sealed: file.path, syscalls: sys), indexPath: idxPath, sealed: b.summary,
                                indexHeader: IndexFile.readSummary(path: idxPath, syscalls: sys), detail: detail,
                                durableLength: scan.offset))
    }

    /// A new, empty open segment after everything found (the store is new, or its last
    /// segment was sealed or skipped).
    private mutating func createOpenSegment(storeID: UInt64) throws(SystemCallError) -> OpenTail {
        let header = SegmentHeader(storeID: storeID, firstAnchor: nextAnchor, baseTime: Millis(StoreWriter.now() * 1000))
        let file = try OpenFile(path: dir + "/" + Format.segmentName(nextAnchor), flags: O_RDWR | O_CREAT | O_TRUNC, syscalls: sys)
        try file.pwriteAll(header.encode(), at: 0)
        try file.dataSync()
        try sys.syncDirectory(dir)
        let seg = Segment(header: header, file: SegmentFile(appending: file), indexPath: dir + "/" + Format.indexName(nextAnchor),
                          sealed: nil, indexHeader: nil, detail: nil, durableLength: Format.headerSize)
        segments.append(seg)
        return (seg, SegmentBuilder(header: header), Format.headerSize)
    }

    /// The store over what was loaded, with the problems found reported in its status.
    private func assemble(storeID: UInt64, _ open: OpenTail, lock: LockFile) -> Store {
        let published = Published(segments: segments, durableNext: open.builder.summary.nextAnchor,
                                  oldest: segments.first?.firstAnchor ?? 1, deleted: deleted)
        let shared = StoreShared(published, sealedDetailBudget: config.sealedDetailCacheBytes)
        for p in problems { shared.report(p) }
        let writer = StoreWriter(config: config, storeID: storeID, shared: shared, segment: open.segment,
                                 builder: open.builder, offset: open.offset)
        return Store(config: config, storeID: storeID, shared: shared, writer: writer, lock: lock)
    }

    /// The store id (for derived UUIDs) lives in `store.id`, written once; segments repeat it.
    private func loadStoreID(segmentAnchors: [UInt64]) throws(SystemCallError) -> UInt64 {
        let path = dir + "/store.id"
        if let f = try? OpenFile(path: path, flags: O_RDONLY, syscalls: sys), let b = try? f.read(at: 0, count: 64),
           let s = String(validating: b, as: UTF8.self),
           let id = UInt64(s.filter { !$0.isWhitespace }, radix: 16) {
            return id
        }
        for first in segmentAnchors {
            if let f = try? OpenFile(path: dir + "/" + Format.segmentName(first), flags: O_RDONLY, syscalls: sys),
               let hb = try? f.read(at: 0, count: Format.headerSize),
               case .success(let h) = SegmentHeader.decode(hb) {
                try sys.writeFileAtomically(Array((Format.hex16(h.storeID) + "\n").utf8), to: path)
                return h.storeID
            }
        }
        let id = UInt64.random(in: 1..<(1 << 60))
        try sys.writeFileAtomically(Array((Format.hex16(id) + "\n").utf8), to: path)
        return id
    }
}
