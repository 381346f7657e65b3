import StrapModel
import StrapOS

/// When appended records are fsynced (docs/storage.md#durability-promise). What was fsynced
/// survives power loss; what was written survives a crash of the daemon.
public enum SyncPolicy: Sendable, Equatable {
    /// Every append returns only after its records are on disk (concurrent appenders share
    /// one fdatasync: group commit).
    case always
    /// fdatasync at most every `seconds` (default 0.1); appends return once written.
    case interval(Double)
    /// Never fsync; records are durable for readers as soon as written.
    case none
}

public struct StoreConfig: Sendable {
    public var directory: String
    public var sync: SyncPolicy = .interval(0.1)
    /// Drop whole segments whose newest sample ended longer ago than this; 0 keeps forever.
    public var retention: Millis = 0
    /// A segment is sealed at this many anchors, bytes or wall-clock seconds, whichever first.
    public var segmentMaxItems = 1 << 18
    public var segmentMaxBytes = 64 << 20
    public var segmentMaxAge: Double = 86_400
    /// Samples per record when a batch is appended at once.
    public var recordMaxSamples = 4096
    /// Bytes of sealed segments' index detail (streams, checkpoints, minute rollups) kept in
    /// memory, the most recently used; the rest is read again from the index files when a
    /// query or reader needs it. One detail is always kept, whatever its size.
    public var sealedDetailCacheBytes = 2 << 20
    /// Every system call the store makes goes through this table; tests pass one that fails
    /// on demand (ENOSPC, EIO) to reach the error paths without root or a small file system.
    public var syscalls: Syscalls = .live

    public init(directory: String, sync: SyncPolicy = .interval(0.1), retention: Millis = 0) {
        self.directory = directory
        self.sync = sync
        self.retention = retention
    }
}

/// What `status` reports about the store.
public struct StoreStatus: Sendable, Codable {
    /// Why the store cannot write (disk full, I/O error); nil when healthy.
    public var degraded: String?
    /// Damaged segments and records found (reported once each, skipped).
    public var damage: [String]
    public var oldestAnchor: UInt64
    public var latestAnchor: UInt64
    public var segments: Int
    /// The segments' durable records, in bytes (index files not counted).
    public var bytes: Int = 0
}

/// Anchors of deleted objects as sorted, merged, closed ranges.
struct DeletedSet: Sendable {
    private(set) var ranges: [ClosedRange<UInt64>] = []

    var isEmpty: Bool { ranges.isEmpty }

    mutating func insert(_ r: [RecordCodec.DeletedRange]) {
        guard !r.isEmpty else { return }
        var all = ranges + r.filter { $0.count > 0 }.map { $0.first...($0.first + $0.count - 1) }
        all.sort { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<UInt64>] = []
        for x in all {
            if let last = merged.last, x.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, x.upperBound)
            } else { merged.append(x) }
        }
        ranges = merged
    }

    mutating func drop(below anchor: UInt64) {
        ranges = ranges.compactMap { r in
            r.upperBound < anchor ? nil : max(r.lowerBound, anchor)...r.upperBound
        }
    }

    @inline(__always) func contains(_ a: UInt64) -> Bool {
        if ranges.isEmpty { return false }
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].upperBound < a { lo = mid + 1 } else { hi = mid }
        }
        return lo < ranges.count && ranges[lo].contains(a)
    }

    func intersects(_ lo: UInt64, _ hiExclusive: UInt64) -> Bool {
        ranges.contains { $0.lowerBound < hiExclusive && $0.upperBound >= lo }
    }
}
