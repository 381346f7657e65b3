import Glibc
import StrapModel

/// Start-up: finds the segments, trusts sealed ones through their index files (rebuilding
/// a missing index), verifies only the open tail and truncates a torn one.
struct StoreOpener {
    let config: StoreConfig
    var dir: String { config.directory }
    var problems: [String] = []

    init(config: StoreConfig) { self.config = config }

    mutating func open() throws(IOError) -> Store {
        try FS.makeDirectory(dir)
        let names = try FS.list(dir)
        for n in names where n.hasSuffix(".tmp") { FS.unlink(dir + "/" + n) }
        let anchors = names.compactMap(Format.parseSegmentName).sorted()
        let storeID = try loadStoreID(segmentAnchors: anchors)

        var segments: [Segment] = []
        var deleted = DeletedSet()
        var open: (Segment, SegmentBuilder, Int)? = nil
        var nextAnchor: UInt64 = 1
        for (i, first) in anchors.enumerated() {
            let isLast = i == anchors.count - 1
            let path = dir + "/" + Format.segmentName(first)
            let idxPath = dir + "/" + Format.indexName(first)
            let file = try FileHandleFD(path: path, flags: isLast ? O_RDWR : O_RDONLY)
            let size = try file.size()
            let headerBytes = try file.read(at: 0, count: Format.headerSize)
            let decoded = SegmentHeader.decode(headerBytes)
            guard case .success(let header) = decoded, header.firstAnchor == first, header.storeID == storeID else {
                if isLast && size < Format.headerSize {
                    // Crashed while creating it: nothing was ever stored there.
                    FS.unlink(path)
                    continue
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
                continue
            }
            if let ih = IndexFile.readSummary(path: idxPath), ih.storeID == storeID,
               ih.summary.firstAnchor == first, ih.summary.length <= size {
                segments.append(Segment(header: header, file: file, indexPath: idxPath, sealed: ih.summary,
                                        indexHeader: ih, detail: nil, durableLength: ih.summary.length))
                deleted.insert(ih.summary.tombstones)
                nextAnchor = max(nextAnchor, ih.summary.nextAnchor)
                continue
            }
            let map = try MappedFile(file, length: size)
            var b = SegmentBuilder(header: header)
            let r = SegmentScan.recover(map.buffer, header: header, into: &b)
            var detail = b.detail()
            if isLast {
                if r.offset < size {
                    problems.append("\(Format.segmentName(first)): \(r.stop == .torn ? "torn" : "damaged") tail truncated at byte \(r.offset) of \(size)")
                    try file.truncate(to: r.offset)
                    try file.sync()
                }
                detail.rollups = []
                let seg = Segment(header: header, file: file, indexPath: idxPath, sealed: nil,
                                  indexHeader: nil, detail: detail, durableLength: r.offset)
                open = (seg, b, r.offset)
                segments.append(seg)
            } else {
                if r.offset < size {
                    problems.append("\(Format.segmentName(first)): damaged at byte \(r.offset); the rest of the segment is skipped")
                } else {
                    problems.append("\(Format.segmentName(first)): index missing or damaged, rebuilt")
                }
                try? FS.writeAtomically(IndexFile.encode(storeID: storeID, summary: b.summary, detail: detail), to: idxPath)
                segments.append(Segment(header: header, file: file, indexPath: idxPath, sealed: b.summary,
                                        indexHeader: IndexFile.readSummary(path: idxPath), detail: detail,
                                        durableLength: r.offset))
            }
            deleted.insert(b.summary.tombstones)
            nextAnchor = max(nextAnchor, r.anchor)
        }

        if open == nil {
            let header = SegmentHeader(storeID: storeID, firstAnchor: nextAnchor, baseTime: Millis(StoreWriter.now() * 1000))
            let path = dir + "/" + Format.segmentName(nextAnchor)
            let file = try FileHandleFD(path: path, flags: O_RDWR | O_CREAT | O_TRUNC)
            try file.pwriteAll(header.encode(), at: 0)
            try file.sync()
            FS.syncDirectory(dir)
            let seg = Segment(header: header, file: file, indexPath: dir + "/" + Format.indexName(nextAnchor),
                              sealed: nil, indexHeader: nil, detail: nil, durableLength: Format.headerSize)
            segments.append(seg)
            open = (seg, SegmentBuilder(header: header), Format.headerSize)
        }
        let (seg, builder, offset) = open!
        let published = Published(segments: segments, durableNext: builder.summary.nextAnchor,
                                  oldest: segments.first?.firstAnchor ?? 1, deleted: deleted)
        let shared = StoreShared(published)
        for p in problems { shared.report(p) }
        let writer = StoreWriter(config: config, storeID: storeID, shared: shared, segment: seg,
                                 builder: builder, offset: offset)
        return Store(config: config, storeID: storeID, shared: shared, writer: writer)
    }

    /// The store id (for derived UUIDs) lives in `store.id`, written once; segments repeat it.
    private func loadStoreID(segmentAnchors: [UInt64]) throws(IOError) -> UInt64 {
        let path = dir + "/store.id"
        if let f = try? FileHandleFD(path: path, flags: O_RDONLY), let b = try? f.read(at: 0, count: 64),
           let s = String(validating: b, as: UTF8.self),
           let id = UInt64(s.filter { !$0.isWhitespace }, radix: 16) {
            return id
        }
        for first in segmentAnchors {
            if let f = try? FileHandleFD(path: dir + "/" + Format.segmentName(first), flags: O_RDONLY),
               let hb = try? f.read(at: 0, count: Format.headerSize),
               case .success(let h) = SegmentHeader.decode(hb) {
                try FS.writeAtomically(Array((Format.hex16(h.storeID) + "\n").utf8), to: path)
                return h.storeID
            }
        }
        let id = UInt64.random(in: 1..<(1 << 60))
        try FS.writeAtomically(Array((Format.hex16(id) + "\n").utf8), to: path)
        FS.syncDirectory(dir)
        return id
    }
}
