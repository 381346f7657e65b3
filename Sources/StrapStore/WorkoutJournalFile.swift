import FoundationEssentials
import Glibc
import StrapModel
import StrapOS
import Synchronization

/// The durable `WorkoutJournal`: one file per open workout session,
/// `<store directory>/sessions/<uuid>.journal`, each record synced (fdatasync) before
/// `append` returns (or, for `append(_:session:durably: false)`, before `sync(session:)`
/// returns); workouts go to the store. Layout and crash analysis: docs/storage.md
/// ("Workout session journals") and docs/workouts.md ("Journal and recovery").
///
/// A save first journals the store's latest anchor (a save mark), so a restart after a crash
/// between storing the workout and removing the journal finds the workout (the session id it
/// carries, past that anchor) instead of saving it twice.
///
/// Calls for one session come one at a time (the engine's lock, or the end's save that holds
/// the session `busy`), but different sessions' calls may overlap: the daemon syncs and saves
/// an ending session outside the engine's lock. So the per-session state sits behind `state`,
/// which is never held across a system call (a slow disk must not stall another session's
/// command, nor the ingest path waiting on the engine's lock behind it).
public final class WorkoutJournalFile: WorkoutJournal {
    /// A session's journal as read back.
    public struct SessionLog: Sendable, Hashable {
        public var session: UUID
        public var entries: [SessionJournalEntry]
        /// The store's latest anchor before the first save was attempted, if one was.
        public var savedAfterAnchor: UInt64?
        /// Bytes up to the end of the last whole record (a torn tail is cut off on next append).
        public var validLength: Int
    }

    /// What start-up found.
    public struct Scan: Sendable {
        /// Sessions to recover (`WorkoutEngine.recover`), oldest first.
        public var sessions: [SessionLog] = []
        /// Sessions whose workout was already stored: their journals were removed now.
        public var alreadySaved: [UUID] = []
        /// Files that could not be read, with why; left in place for inspection.
        public var damaged: [(file: String, problem: String)] = []
    }

    public let directory: String
    let store: Store
    /// An open journal file, with what was written to it but not synced yet.
    struct Handle {
        var file: OpenFile
        var size: Int
        /// Records appended with `durably: false` since the last sync, from `offset`.
        var unsynced: (offset: Int, bytes: [UInt8])?
        /// A sync failed since: Linux may drop the dirty pages it could not write and report
        /// that only once, so the next sync writes those bytes again first.
        var syncFailed = false
    }
    private struct State {
        var handles: [UUID: Handle] = [:]
        /// Save marks by session (the first one counts: a workout of the session is after it).
        var savedAfter: [UUID: UInt64] = [:]
    }
    private let state = Mutex(State())
    /// The store's system-call table: its tests make journal writes fail on demand too.
    private var sys: Syscalls { store.config.syscalls }

    static let magic: [UInt8] = Array("STRPJNL1".utf8)
    static let version: UInt16 = 1
    static let headerSize = 16
    static let maxRecordBody = 1 << 20
    enum Kind: UInt8 { case entry = 1, saveMark = 2 }

    public init(store: Store) throws(StrapError) {
        self.store = store
        directory = store.config.directory + "/sessions"
        do throws(SystemCallError) { try store.config.syscalls.makeDirectories(directory) } catch {
            throw .unavailable("cannot create the session journal directory: \(error)")
        }
    }

    func path(_ session: UUID) -> String { directory + "/" + session.uuidString.lowercased() + ".journal" }

    // MARK: WorkoutJournal

    public func append(_ entry: SessionJournalEntry, session: UUID, durably: Bool) throws(StrapError) {
        let enc = JSONEncoder()
        enc.outputFormatting = .sortedKeys
        guard let json = try? enc.encode(entry) else { throw .internal("cannot encode journal entry \(entry.kind)") }
        try write(.entry, Array(json), session: session, creating: { if case .created = entry { true } else { false } }(),
                  durably: durably)
    }

    public func sync(session: UUID) throws(StrapError) {
        guard var h = state.withLock({ $0.handles[session] }), h.unsynced != nil else { return }
        do throws(SystemCallError) { try syncPending(&h) } catch {
            h.syncFailed = true
            state.withLock { $0.handles[session] = h }
            throw .unavailable("session journal: \(error)")
        }
        state.withLock { $0.handles[session] = h }
    }

    public func save(_ workout: Workout, session: UUID) throws(StrapError) -> Workout {
        let mark = state.withLock { $0.savedAfter[session] }
        if let after = mark, let w = savedWorkout(session: session, after: after) { return w }
        if mark == nil {
            let after = store.latestAnchor
            var w = ByteWriter(capacity: 8)
            w.u64(after)
            try write(.saveMark, w.bytes, session: session, creating: false, durably: true)
            state.withLock { $0.savedAfter[session] = after }
        }
        var w = workout
        w.sessionID = session
        return try store.save(w)
    }

    public func remove(session: UUID) throws(StrapError) {
        state.withLock {
            $0.handles[session] = nil
            $0.savedAfter[session] = nil
        }
        let p = path(session)
        do throws(SystemCallError) { try sys.removeFile(p) } catch {
            guard error.errno == .noSuchFile else { throw .unavailable("cannot remove \(p): \(error)") }
        }
        try? sys.syncDirectory(directory)
    }

    // MARK: start-up

    /// Reads every session journal: sessions to recover, sessions already saved (their
    /// journals removed), damaged files (reported, kept). Journals without a whole first
    /// entry (a crash while creating one) are removed.
    public func openSessions() throws(StrapError) -> Scan {
        let names: [String]
        do throws(SystemCallError) { names = try sys.listDirectory(directory) } catch {
            throw .unavailable("cannot list \(directory): \(error)")
        }
        var scan = Scan()
        for name in names.sorted() where name.hasSuffix(".journal") {
            guard let id = UUID(uuidString: String(name.dropLast(".journal".count))) else {
                scan.damaged.append((name, "not named <uuid>.journal"))
                continue
            }
            let log: SessionLog
            do throws(StrapError) { log = try read(session: id) } catch {
                // A newer strapd's journal is not damage: refusing keeps it for that strapd.
                if case .newerFormat = error { throw error }
                scan.damaged.append((name, error.description))
                continue
            }
            if log.entries.isEmpty {
                try remove(session: id)
                continue
            }
            if let after = log.savedAfterAnchor {
                state.withLock { $0.savedAfter[id] = after }
                if savedWorkout(session: id, after: after) != nil {
                    try remove(session: id)
                    scan.alreadySaved.append(id)
                    continue
                }
            }
            scan.sessions.append(log)
        }
        scan.sessions.sort { ($0.entries[0].time, $0.session.uuidString) < ($1.entries[0].time, $1.session.uuidString) }
        return scan
    }

    /// One session's journal. A record cut short at the end of the file (a crash while
    /// writing it) ends the journal; a record that fails its checksum or does not decode is
    /// damage and refused with where it is.
    public func read(session: UUID) throws(StrapError) -> SessionLog {
        let p = path(session)
        let bytes: [UInt8]
        do throws(SystemCallError) {
            let f = try OpenFile(path: p, flags: O_RDONLY, syscalls: sys)
            bytes = try f.read(at: 0, count: try f.size())
        } catch {
            if error.errno == .noSuchFile { throw .notFound("no journal for workout session \(session)") }
            throw .unavailable("cannot read \(p): \(error)")
        }
        var log = SessionLog(session: session, entries: [], savedAfterAnchor: nil, validLength: 0)
        if bytes.count < Self.headerSize { return log }  // crashed while creating it
        guard Array(bytes[0..<8]) == Self.magic else { throw .internal("\(p): not a session journal (bad magic)") }
        if let v = FormatVersionGate.newerVersion(Array(bytes.prefix(Self.headerSize)), FormatVersionGate.journal) {
            throw .newerFormat(NewerFormat(file: p, kind: FormatVersionGate.journal.kind, version: v, supported: Int(Self.version)))
        }
        let problem: String? = bytes.withUnsafeBytes { raw -> String? in
            var r = CheckedByteReader(raw, from: 8, to: Self.headerSize)
            let version = r.fixed(UInt16.self)!
            _ = r.fixed(UInt16.self)
            let crc = r.fixed(UInt32.self)!
            guard crc == crc32(UnsafeRawBufferPointer(rebasing: raw[0..<12])) else { return "header fails its checksum" }
            guard version == Self.version else { return "journal format version \(version) is not supported" }
            var pos = Self.headerSize, index = 0
            log.validLength = pos
            while pos < raw.count {
                index += 1
                switch Self.parseRecord(raw, at: pos) {
                case .incomplete:
                    return nil
                case .damaged(let why):
                    // A crash while extending the file may leave zeros past the last record.
                    if raw[pos...].allSatisfy({ $0 == 0 }) { return nil }
                    return "record \(index) at byte \(pos): \(why)"
                case let .record(kind, body, next):
                    switch Kind(rawValue: kind) {
                    case .entry?:
                        guard let e = try? JSONDecoder().decode(SessionJournalEntry.self, from: Data(body)) else {
                            return "record \(index) at byte \(pos): not a journal entry"
                        }
                        log.entries.append(e)
                    case .saveMark?:
                        guard body.count == 8 else { return "record \(index) at byte \(pos): bad save mark" }
                        let anchor = UInt64(littleEndian: UnsafeRawBufferPointer(rebasing: body).loadUnaligned(as: UInt64.self))
                        if log.savedAfterAnchor == nil { log.savedAfterAnchor = anchor }
                    case nil:
                        return "record \(index) at byte \(pos): unknown kind \(kind)"
                    }
                    pos = next
                    log.validLength = pos
                }
            }
            return nil
        }
        if let problem { throw .internal("session journal \(p): \(problem)") }
        return log
    }

    // MARK: records

    /// Record: varint body length, u32 CRC-32 of the body, body = u8 kind + payload.
    static func frame(_ kind: Kind, _ payload: [UInt8]) -> [UInt8] {
        var body = ByteWriter(capacity: payload.count + 1)
        body.u8(kind.rawValue)
        body.bytes += payload
        var w = ByteWriter(capacity: body.bytes.count + 9)
        w.varint(UInt64(body.bytes.count))
        w.u32(crc32(body.bytes))
        w.bytes += body.bytes
        return w.bytes
    }

    enum Parsed {
        case record(kind: UInt8, body: Slice<UnsafeRawBufferPointer>, next: Int)
        case incomplete
        case damaged(String)
    }

    static func parseRecord(_ raw: UnsafeRawBufferPointer, at pos: Int) -> Parsed {
        var r = CheckedByteReader(raw, from: pos)
        guard let len = r.varint() else { return r.pos - pos >= 10 ? .damaged("bad length") : .incomplete }
        guard len > 0, len <= UInt64(maxRecordBody) else { return .damaged("bad length \(len)") }
        guard let crc = r.fixed(UInt32.self) else { return .incomplete }
        let start = r.pos, end = start + Int(len)
        guard end <= raw.count else { return .incomplete }
        guard crc32(UnsafeRawBufferPointer(rebasing: raw[start..<end])) == crc else { return .damaged("checksum mismatch") }
        return .record(kind: raw[start], body: raw[(start + 1)..<end], next: end)
    }

    private func header() -> [UInt8] {
        var w = ByteWriter(capacity: Self.headerSize)
        w.bytes += Self.magic
        w.u16(Self.version)
        w.u16(0)
        w.u32(crc32(w.bytes))
        return w.bytes
    }

    /// Appends one record, synced unless `durably` is false (then `sync(session:)` syncs it).
    /// A failed write is cut off again, so the next append does not land behind a
    /// half-written record.
    private func write(_ kind: Kind, _ payload: [UInt8], session: UUID, creating: Bool, durably: Bool) throws(StrapError) {
        var h = try handle(session, creating: creating)
        let record = Self.frame(kind, payload)
        do throws(SystemCallError) {
            try h.file.pwriteAll(record, at: h.size)
        } catch {
            try? h.file.truncate(to: h.size)
            throw .unavailable("session journal: \(error)")
        }
        if let u = h.unsynced { h.unsynced = (u.offset, u.bytes + record) } else { h.unsynced = (h.size, record) }
        h.size += record.count
        if durably {
            do throws(SystemCallError) { try syncPending(&h) } catch {
                // Neither this record nor anything unsynced before it is durable: cut this one
                // off (the command fails) and write the rest again at the next sync.
                try? h.file.truncate(to: h.size - record.count)
                h.size -= record.count
                if let u = h.unsynced { h.unsynced = u.bytes.count > record.count ? (u.offset, Array(u.bytes.dropLast(record.count))) : nil }
                h.syncFailed = h.unsynced != nil
                state.withLock { $0.handles[session] = h }
                throw .unavailable("session journal: \(error)")
            }
        }
        state.withLock { $0.handles[session] = h }
    }

    private func syncPending(_ h: inout Handle) throws(SystemCallError) {
        if h.syncFailed, let u = h.unsynced { try h.file.pwriteAll(u.bytes, at: u.offset) }
        try h.file.dataSync()
        h.unsynced = nil
        h.syncFailed = false
    }

    private func handle(_ session: UUID, creating: Bool) throws(StrapError) -> Handle {
        let p = path(session)
        if let h = state.withLock({ $0.handles[session] }) {
            if creating { throw .internal("workout session \(session) is already journaled") }
            return h
        }
        if !creating {
            // A recovered session: continue after its last whole record.
            let log = try read(session: session)
            guard log.validLength >= Self.headerSize else { throw .notFound("no journal for workout session \(session)") }
            do throws(SystemCallError) {
                let f = try OpenFile(path: p, flags: O_RDWR, syscalls: sys)
                try f.truncate(to: log.validLength)
                let h = Handle(file: f, size: log.validLength)
                state.withLock { $0.handles[session] = h }
                return h
            } catch {
                throw .unavailable("session journal: \(error)")
            }
        }
        do throws(SystemCallError) {
            let f = try OpenFile(path: p, flags: O_RDWR | O_CREAT | O_EXCL, syscalls: sys)
            do throws(SystemCallError) { try f.pwriteAll(header(), at: 0) } catch {
                try? sys.removeFile(p)
                throw error
            }
            try? sys.syncDirectory(directory)
            let h = Handle(file: f, size: Self.headerSize)
            state.withLock { $0.handles[session] = h }
            return h
        } catch {
            throw .unavailable("session journal: \(error)")
        }
    }

    /// The session's workout stored with an anchor above `anchor`, if any (not deleted).
    func savedWorkout(session: UUID, after anchor: UInt64) -> Workout? {
        let snap = store.shared.snapshot
        var cursor = LogCursor(store, from: max(anchor &+ 1, snap.oldest), snapshot: snap)
        while let item = cursor.next() {
            if case .workout(let w) = item, w.sessionID == session, !snap.deleted.contains(w.anchor) { return w }
        }
        return nil
    }
}
