import Testing
import Foundation
import Glibc
import StrapOS
import StrapModel
import StrapSimulator
@testable import StrapStore
@testable import StrapWorkout

/// The durable session journal: round trip, torn tail, damage, and the crash windows of `end`.
@Suite struct JournalFileTests {
    static let id = UUID(uuidString: "6F9619FF-8B86-4D11-B42D-00C04FC964FF")!
    static let config = WorkoutConfiguration(activityType: .running, locationType: .outdoor, deviceIDs: [W.strap.id])

    static let entries: [SessionJournalEntry] = [
        .created(session: id, time: W.t0, configuration: config),
        .prepared(time: W.t0 + 500, deviceIDs: [W.strap.id]),
        .started(time: W.t0 + 1000, deviceIDs: [W.strap.id], profile: W.male35),
        .lap(time: W.t0 + 60_000, metadata: ["split": "1"]),
        .paused(time: W.t0 + 70_000),
        .marker(time: W.t0 + 75_000, metadata: ["note": "shoelace"]),
        .resumed(time: W.t0 + 80_000),
        .stopped(time: W.t0 + 90_000),
        .ended(time: W.t0 + 95_000),
    ]

    func openStore(_ dir: TempDir) throws -> Store { try Store.open(StoreConfig(directory: dir.path, sync: .always)) }

    func fileURL(_ j: WorkoutJournalFile, _ id: UUID = id) -> URL { URL(fileURLWithPath: j.path(id)) }

    @Test func roundTrip() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries { try j.append(e, session: Self.id) }
        #expect(try j.read(session: Self.id).entries == Self.entries)
        // After a restart (a new instance) it appends after what is there.
        let k = try WorkoutJournalFile(store: store)
        let scan = try k.openSessions()
        #expect(scan.sessions.map(\.session) == [Self.id] && scan.sessions[0].entries == Self.entries)
        #expect(scan.alreadySaved.isEmpty && scan.damaged.isEmpty)
        try k.remove(session: Self.id)
        #expect(try k.openSessions().sessions.isEmpty)
        #expect(throws: StrapError.notFound("no journal for workout session \(Self.id)")) { try k.read(session: Self.id) }
    }

    /// fdatasync calls on journal files, failing on demand.
    final class SyncCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0, failing = false
        var syncs: Int { lock.withLock { count } }
        func fail(_ on: Bool) { lock.withLock { failing = on } }
        var syscalls: Syscalls {
            var sys = Syscalls.live
            sys.fdatasync = { [self] fd in
                let fails = lock.withLock { () -> Bool in count += 1; return failing }
                if fails { Errno.current = .ioError; return -1 }
                return Glibc.fdatasync(fd)
            }
            return sys
        }
    }

    @Test func aDeferredEntryIsSyncedBySyncAndWrittenAgainAfterAFailedSync() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }
        let counter = SyncCounter()
        var config = StoreConfig(directory: dir.path, sync: .always)
        config.syscalls = counter.syscalls
        let store = try Store.open(config)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries.dropLast() { try j.append(e, session: Self.id) }
        let synced = counter.syncs
        try j.append(Self.entries.last!, session: Self.id, durably: false)
        #expect(counter.syncs == synced, "written, not synced")
        #expect(try j.read(session: Self.id).entries == Self.entries, "readable before the sync")
        counter.fail(true)
        #expect(throws: StrapError.self) { try j.sync(session: Self.id) }
        counter.fail(false)
        // Linux may have dropped the pages the failed sync could not write: the record is
        // written again (same bytes, same place) before the next sync.
        let beforeRewrite = try Data(contentsOf: fileURL(j))
        try j.sync(session: Self.id)
        #expect(counter.syncs == synced + 2)
        #expect(try Data(contentsOf: fileURL(j)) == beforeRewrite)
        try j.sync(session: Self.id)
        #expect(counter.syncs == synced + 2, "nothing left to sync")
        let k = try WorkoutJournalFile(store: store)
        #expect(try k.openSessions().sessions.first?.entries == Self.entries)
    }

    @Test func tornTailIsCutOffAndWritingContinues() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries.prefix(3) { try j.append(e, session: Self.id) }
        let whole = try Data(contentsOf: fileURL(j))
        // A crash in the middle of the fourth record: only part of it reached the disk.
        let fourth = WorkoutJournalFile.frame(.entry, Array(try JSONEncoder().encode(Self.entries[3])))
        try (whole + Data(fourth.prefix(fourth.count / 2))).write(to: fileURL(j))
        let k = try WorkoutJournalFile(store: store)
        let log = try k.read(session: Self.id)
        #expect(log.entries == Array(Self.entries.prefix(3)))
        #expect(log.validLength == whole.count)
        try k.append(Self.entries[3], session: Self.id)
        #expect(try k.read(session: Self.id).entries == Array(Self.entries.prefix(4)))
        // Zeros past the last record (a crash while the file grew) are a torn tail too.
        try (try Data(contentsOf: fileURL(j)) + Data(count: 64)).write(to: fileURL(j))
        #expect(try WorkoutJournalFile(store: store).read(session: Self.id).entries.count == 4)
    }

    @Test func damagedRecordIsRefusedSayingWhere() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries.prefix(4) { try j.append(e, session: Self.id) }
        var bytes = [UInt8](try Data(contentsOf: fileURL(j)))
        let first = WorkoutJournalFile.frame(.entry, Array(try JSONEncoder().encode(Self.entries[0]))).count
        let at = WorkoutJournalFile.headerSize + first + 20  // inside record 2's body
        bytes[at] ^= 0x40
        try Data(bytes).write(to: fileURL(j))
        let k = try WorkoutJournalFile(store: store)
        let expected = StrapError.internal("session journal \(k.path(Self.id)): record 2 at byte \(WorkoutJournalFile.headerSize + first): checksum mismatch")
        #expect(throws: expected) { try k.read(session: Self.id) }
        let scan = try k.openSessions()
        #expect(scan.sessions.isEmpty)
        #expect(scan.damaged.map(\.file) == [Self.id.uuidString.lowercased() + ".journal"])
        #expect(scan.damaged.first?.problem == expected.description)
        #expect(FileManager.default.fileExists(atPath: k.path(Self.id)), "kept for inspection")
    }

    /// A bounded fuzz of the reader: flipped bits, cut files and inserted garbage at seeded
    /// random places. Reading never traps; it gives back a prefix of what was written (a torn
    /// tail cut off) or a clear error, never an entry that was not written.
    @Test func damagedFilesNeverCrashTheReaderNorInventEntries() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries { try j.append(e, session: Self.id) }
        let original = [UInt8](try Data(contentsOf: fileURL(j)))
        var rng = SimulationRandom(seed: 0x5EED_F00D)
        var outcomes = (prefix: 0, refused: 0)
        for round in 0..<600 {
            var bytes = original
            switch round % 3 {
            case 0: bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
            case 1: bytes.removeLast(Int.random(in: 1..<bytes.count, using: &rng))
            default:
                let junk = (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                bytes.insert(contentsOf: junk, at: Int.random(in: 0...bytes.count, using: &rng))
            }
            try Data(bytes).write(to: fileURL(j))
            do throws(StrapError) {
                let log = try WorkoutJournalFile(store: store).read(session: Self.id)
                #expect(Array(Self.entries.prefix(log.entries.count)) == log.entries, "round \(round): entries not written")
                outcomes.prefix += 1
            } catch {
                outcomes.refused += 1
            }
        }
        // Both outcomes happen: the test exercises the torn-tail path and the damage path.
        #expect(outcomes.prefix > 50 && outcomes.refused > 50, "\(outcomes)")
    }

    @Test func journalWithoutAWholeFirstEntryIsDropped() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        try j.append(Self.entries[0], session: Self.id)
        let bytes = try Data(contentsOf: fileURL(j))
        try bytes.prefix(WorkoutJournalFile.headerSize + 5).write(to: fileURL(j))
        let scan = try WorkoutJournalFile(store: store).openSessions()
        #expect(scan.sessions.isEmpty && scan.damaged.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: j.path(Self.id)))
    }

    @Test func crashBetweenSaveAndRemoveDoesNotSaveTwice() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries { try j.append(e, session: Self.id) }
        let session = try WorkoutSession(rebuildingFrom: Self.entries)
        #expect(session.state == .ended)
        var builder = LiveWorkoutBuilder()
        for e in Self.entries { builder.apply(e) }
        _ = try j.save(builder.workout(for: session), session: Self.id)
        // …crash: the journal was not removed. A saved workout in the journal's session and
        // past its save mark tells the restart it is done.
        store.close()
        let reopened = try openStore(dir)
        let k = try WorkoutJournalFile(store: reopened)
        let scan = try k.openSessions()
        #expect(scan.alreadySaved == [Self.id] && scan.sessions.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: k.path(Self.id)))
        let workouts = try readAll(reopened).added.compactMap { if case .workout(let w) = $0 { w } else { nil } }
        #expect(workouts.count == 1 && workouts[0].sessionID == Self.id)
    }

    @Test func saveMarkWithoutAStoredWorkoutRecoversAndSavesOnce() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries { try j.append(e, session: Self.id) }
        var b = LiveWorkoutBuilder()
        for e in Self.entries { b.apply(e) }
        let w = try j.save(b.workout(for: try WorkoutSession(rebuildingFrom: Self.entries)), session: Self.id)
        // Make it as if the store write had not happened: the workout is gone (a tombstone).
        try store.delete(uuids: [w.uuid])
        let k = try WorkoutJournalFile(store: store)
        let scan = try k.openSessions()
        #expect(scan.alreadySaved.isEmpty && scan.sessions.map(\.session) == [Self.id])
        #expect(scan.sessions[0].savedAfterAnchor != nil)
        let engine = WorkoutEngine(journal: k, profiles: { _ in nil }, now: { W.t0 + 100_000 })
        try engine.recover(scan.sessions[0].entries)
        #expect(engine.sessionsAwaitingSave == [Self.id])
        let again = try engine.end(Self.id)
        #expect(again.anchor > w.anchor && again.sessionID == Self.id)
        #expect(!FileManager.default.fileExists(atPath: k.path(Self.id)))
        let live = try readAll(store).added.compactMap { if case .workout(let w) = $0 { w } else { nil } }
        #expect(live.map(\.anchor) == [again.anchor])
    }

    @Test func saveIsIdempotentPerSession() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let store = try openStore(dir)
        let j = try WorkoutJournalFile(store: store)
        for e in Self.entries { try j.append(e, session: Self.id) }
        var b = LiveWorkoutBuilder()
        for e in Self.entries { b.apply(e) }
        let workout = b.workout(for: try WorkoutSession(rebuildingFrom: Self.entries))
        let first = try j.save(workout, session: Self.id)
        let second = try j.save(workout, session: Self.id)  // a retry after an unclear failure
        #expect(first == second)
        #expect(try readAll(store).added.count == 1)
    }
}

/// Reads everything with repeated anchored calls.
func readAll(_ store: Store) throws -> AnchoredResult {
    var all = AnchoredResult(added: [], deleted: [], anchor: 0)
    while true {
        let r = try store.anchored(anchor: all.anchor, limit: 1000)
        all.added += r.added
        all.deleted += r.deleted
        if r.anchor == all.anchor { return all }
        all.anchor = r.anchor
    }
}
