import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import StrapModel
import StrapOS

/// The append-only sample store (docs/product.md §4). One writer (confined by its lock, which
/// owns the open segment), any number of concurrent readers over immutable sealed segments and
/// the durable prefix of the open one.
public final class Store: Sendable {
    public let config: StoreConfig
    let shared: StoreShared
    let uuids: UUIDScheme
    /// Reached only through `onWriter` (and `writerPosition`), under `writer.confinement`: every
    /// use is synchronous, so a lock does what the serial queue did without its `sync`'s two
    /// allocations per append.
    private let writer: StoreWriter
    /// Held by whoever fsyncs; the group-commit leader syncs for everyone waiting.
    private let syncLock = Mutex<Void>(())
    private let deleteLock = Mutex<Void>(())
    /// `sync = interval`: armed by the first append after a sync, so an idle store never wakes
    /// up (a repeating timer woke the daemon ten times a second for nothing) and nothing
    /// appended waits longer than the interval.
    private let syncer: IntervalSyncer?
    /// When the last fdatasync started, monotonic nanoseconds.
    private let lastSync = Atomic<Int64>(0)

    /// The store's exclusive lock (`store.lock`); given back by `close()`.
    private let lock: Mutex<LockFile?>

    init(config: StoreConfig, storeID: UInt64, shared: StoreShared, writer: StoreWriter, lock: LockFile) {
        self.lock = Mutex(lock)
        self.config = config
        self.shared = shared
        self.writer = writer
        uuids = UUIDScheme(storeID: storeID)
        if case .interval(let seconds) = config.sync { syncer = IntervalSyncer(interval: seconds) } else { syncer = nil }
    }

    /// Opens (creating if needed) the store in `config.directory`: sealed segments are
    /// trusted through their indexes, only the open tail is verified and a torn tail cut off.
    public static func open(_ config: StoreConfig) throws(StrapError) -> Store {
        let store: Store
        do throws(StoreOpenError) { var opener = StoreOpener(config: config); store = try opener.open() } catch {
            if case .newerFormat(let f) = error { throw .newerFormat(f) }
            throw .unavailable("cannot open store: \(error)")
        }
        store.syncer?.start { [weak store] in try? store?.sync() }
        try? store.applyRetention()
        return store
    }

    /// Makes everything written durable and wakes followers; a scheduled sync then does nothing.
    public func close() {
        syncer?.stop(wait: true)
        try? sync()
        shared.close()
        lock.withLock { $0 = nil }
    }

    deinit { syncer?.stop(wait: false) }

    static func monotonicNanos() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// After an append with `sync = interval`. Appends sparser than the interval (a few
    /// sensors at 1 Hz) are synced right here, on the appending thread: the interval has
    /// already passed since the last sync, and handing the fdatasync to the syncer thread
    /// only added two thread wake-ups to it. Denser appends arm the syncer, which syncs them
    /// together one interval after the first; so does every append made with `deferSync`
    /// (a caller that must not wait for the disk), which keeps the same bound: nothing
    /// waits longer than one interval for its sync.
    private func scheduleSync(deferred: Bool = false) {
        guard let syncer else { return }
        if !deferred && Self.monotonicNanos() - lastSync.load(ordering: .relaxed) >= syncer.intervalNanos || !syncer.arm() {
            try? sync()
        }
    }

    // MARK: writing

    /// Appends samples in order and returns them with their UUIDs and anchors. Durable on
    /// return with `sync = always`. Throws `unavailable` (store degraded) when the disk is full;
    /// then nothing of this batch is stored.
    @discardableResult
    public func append(_ samples: [Sample]) throws(StrapError) -> [Sample] {
        let first = try onWriter { w throws(StrapError) in try w.append(samples) }
        if config.sync == .always { try sync() } else { scheduleSync() }
        var out = samples
        for i in out.indices {
            out[i].anchor = first + UInt64(i)
            out[i].uuid = uuids.uuid(for: out[i].anchor)
        }
        return out
    }

    /// Appends without building the returned samples (the daemon's and benchmark's path).
    /// Returns the first anchor assigned.
    @discardableResult
    public func appendBatch(_ samples: [Sample]) throws(StrapError) -> UInt64 {
        try appendBatches([samples])
    }

    /// Appends batches in order as one write, all or none, without building one array of them.
    /// Returns the first anchor assigned.
    @discardableResult
    /// `deferSync`: with `sync = interval`, leave the sync to the syncer thread even when it is
    /// due (`always` syncs regardless, `none` never).
    public func appendBatches(_ batches: [[Sample]], deferSync: Bool = false) throws(StrapError) -> UInt64 {
        let first = try onWriter { w throws(StrapError) in try w.append(batches: batches) }
        if config.sync == .always { try sync() } else { scheduleSync(deferred: deferSync) }
        return first
    }

    /// Stores a workout object; returns it with its UUID and anchor. Always synced.
    public func save(_ workout: Workout) throws(StrapError) -> Workout {
        let anchor = try onWriter { w throws(StrapError) in try w.appendWorkout(workout) }
        try sync()
        var out = workout
        out.anchor = anchor
        out.uuid = uuids.uuid(for: anchor)
        return out
    }

    /// Makes everything written so far durable (fdatasync) and visible to anchored readers.
    /// Concurrent callers share one fdatasync.
    public func sync() throws(StrapError) {
        let target = writerPosition
        if config.sync == .none {
            // Readers already see everything written; an explicit sync still reaches the disk.
            do throws(SystemCallError) { try target.segment.file.dataSync() } catch { throw shared.degrade(error) }
            return
        }
        if shared.published.withLock({ $0.durableNext >= target.nextAnchor }) { return }
        try syncLock.withLock { _ throws(StrapError) in
            if shared.published.withLock({ $0.durableNext >= target.nextAnchor }) { return }
            // Lead the group: cover everything written up to now, not only our own records.
            let pos = writerPosition
            lastSync.store(Self.monotonicNanos(), ordering: .relaxed)
            do throws(SystemCallError) { try pos.segment.file.dataSync() } catch { throw shared.degrade(error) }
            shared.publishDurable(pos)
        }
    }

    func onWriter<T>(_ body: (StoreWriter) throws(StrapError) -> T) throws(StrapError) -> T {
        try writer.confinement.withLock { () throws(StrapError) -> T in try body(writer) }
    }

    private var writerPosition: LogPosition { writer.confinement.withLock { writer.position } }

    // MARK: deletion

    /// Deletes objects by UUID (writes a tombstone, synced). Unknown or already deleted UUIDs
    /// are `notFound` when none of them exists; returns how many were deleted.
    @discardableResult
    public func delete(uuids list: [UUID]) throws(StrapError) -> Int {
        try deleteLock.withLock { _ throws(StrapError) -> Int in
            try sync()
            var targets: [(UInt8, UInt64)] = []
            for u in list {
                guard let a = uuids.anchor(of: u), let obj = try object(at: a) else { continue }
                switch obj {
                case .sample(let s): targets.append((s.type.code, a))
                case .workout: targets.append((0, a))
                }
            }
            if targets.isEmpty && !list.isEmpty { throw .notFound("no such object") }
            return try writeTombstone(targets)
        }
    }

    /// Deletes every sample matching `predicate`; returns how many.
    @discardableResult
    public func delete(matching predicate: SamplePredicate) throws(StrapError) -> Int {
        try deleteLock.withLock { _ throws(StrapError) -> Int in
            try sync()
            let found = try samples(matching: predicate)
            return try writeTombstone(found.map { ($0.type.code, $0.anchor) })
        }
    }

    private func writeTombstone(_ targets: [(UInt8, UInt64)]) throws(StrapError) -> Int {
        guard !targets.isEmpty else { return 0 }
        var ranges: [RecordCodec.DeletedRange] = []
        for (t, a) in Set(targets.map { [UInt64($0.0), $0.1] }).map({ (UInt8($0[0]), $0[1]) }).sorted(by: { $0.1 < $1.1 }) {
            if let last = ranges.last, last.typeCode == t, last.first + last.count == a {
                ranges[ranges.count - 1].count += 1
            } else {
                ranges.append(.init(typeCode: t, first: a, count: 1))
            }
        }
        _ = try onWriter { w throws(StrapError) in try w.appendTombstone(ranges) }
        try sync()
        shared.published.withLock { $0.deleted.insert(ranges) }
        return ranges.reduce(0) { $0 + Int($1.count) }
    }

    // MARK: retention and status

    /// Drops whole sealed segments whose newest sample ended before `now - retention`.
    public func applyRetention(now: Millis? = nil) throws(StrapError) {
        guard config.retention > 0 else { return }
        let cutoff = (now ?? Millis(StoreWriter.now() * 1000)) - config.retention
        let dropped = writer.confinement.withLock { () -> [Segment] in
            shared.published.withLock { s -> [Segment] in
                var n = 0
                while n < s.segments.count - 1, let sum = s.segments[n].sealed, sum.maxEnd < cutoff { n += 1 }
                guard n > 0 else { return [] }
                let gone = Array(s.segments[0..<n])
                s.segments.removeFirst(n)
                s.oldest = s.segments[0].firstAnchor
                s.deleted.drop(below: s.oldest)
                return gone
            }
        }
        let sys = config.syscalls
        for seg in dropped {
            try? sys.removeFile(seg.indexPath)
            try? sys.removeFile(config.directory + "/" + Format.segmentName(seg.firstAnchor))
        }
        if !dropped.isEmpty { try? sys.syncDirectory(config.directory) }
    }

    public var status: StoreStatus {
        let s = shared.snapshot
        return StoreStatus(degraded: shared.degraded, damage: shared.damage, oldestAnchor: s.oldest,
                           latestAnchor: s.durableNext - 1, segments: s.segments.count,
                           bytes: s.segments.reduce(0) { $0 + $1.readableLength })
    }

    /// The anchor of the newest durable item (0 when empty).
    public var latestAnchor: UInt64 { shared.snapshot.durableNext - 1 }

    /// Seals the open segment now (tests and tools; the writer rolls on its own).
    public func seal() throws(StrapError) {
        try onWriter { w throws(StrapError) in
            if w.nextAnchor > w.segment.firstAnchor { try w.roll(baseTime: Millis(StoreWriter.now() * 1000)) }
        }
        try sync()
    }
}
