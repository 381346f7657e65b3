import Testing
import Foundation
import StrapModel
@testable import StrapStore
@testable import StrapWorkout

/// A daemon restart mid-session: journal files + the store's samples rebuild the session.
@Suite struct RecoveryTests {
    /// Forwards to the real journal, but "crashes" (throws, having done nothing) at one step.
    final class CrashingJournal: WorkoutJournal {
        let inner: WorkoutJournalFile
        var crashOnSave = false
        var crashOnRemove = false
        struct Crash: Error {}
        init(_ inner: WorkoutJournalFile) { self.inner = inner }
        func append(_ e: SessionJournalEntry, session: UUID, durably: Bool) throws(StrapError) {
            try inner.append(e, session: session, durably: durably)
        }
        func sync(session: UUID) throws(StrapError) { try inner.sync(session: session) }
        func save(_ w: Workout, session: UUID) throws(StrapError) -> Workout {
            if crashOnSave { throw .internal("crash") }
            return try inner.save(w, session: session)
        }
        func remove(session: UUID) throws(StrapError) {
            if crashOnRemove { throw .internal("crash") }
            try inner.remove(session: session)
        }
    }

    struct Daemon {
        let store: Store
        let journal: CrashingJournal
        let engine: WorkoutEngine
        let clock: TestClock

        init(_ dir: TempDir, clock: TestClock) throws {
            store = try Store.open(StoreConfig(directory: dir.path, sync: .always))
            journal = CrashingJournal(try WorkoutJournalFile(store: store))
            self.clock = clock
            engine = WorkoutEngine(journal: journal, profiles: { _ in W.male35 }, now: { clock.now })
        }

        /// What the daemon does on the ingest path: store, then the engine.
        func ingest(_ samples: [Sample]) throws {
            try store.append(samples)
            for s in samples { engine.add(s) }
        }

        /// Start-up: read the journals, recover, re-feed the stored samples in time order.
        func recover() throws -> WorkoutJournalFile.Scan {
            let scan = try journal.inner.openSessions()
            for log in scan.sessions {
                let s = try engine.recover(log.entries)
                guard let p = s.replayPredicate else { continue }
                for sample in try store.samples(matching: p, sort: SampleSort(.start)) { try engine.add(sample, to: s.id) }
            }
            return scan
        }
    }

    func workouts(_ store: Store) throws -> [Workout] {
        try readAll(store).added.compactMap { if case .workout(let w) = $0 { w } else { nil } }
    }

    /// 2 minutes of a run with a pause, a lap and energy from the strap.
    func live(_ d: Daemon) throws -> UUID {
        let id = try d.engine.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id, W.footpod.id]),
                                    connectedDevices: []).id
        for s in 1...120 {
            let t = W.t0 + Millis(s) * 1000
            d.clock.now = t
            var batch = [W.hr(Double(120 + s % 40), t),
                         Sample(type: .runningSpeed, value: 3 + Double(s % 7) / 10, start: t, device: W.footpod),
                         Sample(type: .runningDistance, value: 3.2, start: t - 1000, end: t, device: W.footpod)]
            if s % 10 == 0 { batch.append(W.sensorEnergy(2.4, t - 10_000, t)) }
            try d.ingest(batch)
            if s == 40 { try d.engine.pause(id) }
            if s == 55 { try d.engine.resume(id) }
            if s == 80 { try d.engine.lap(id, metadata: ["km": "1"]) }
        }
        return id
    }

    @Test func restartMidSessionRebuildsTheSameStatistics() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let clock = TestClock()
        let before: WorkoutSessionInfo
        let id: UUID
        do {
            let d = try Daemon(dir, clock: clock)
            id = try live(d)
            before = try d.engine.get(id)
            d.store.close()  // the process dies here
        }
        let d = try Daemon(dir, clock: clock)
        let scan = try d.recover()
        #expect(scan.sessions.map(\.session) == [id])
        #expect(try d.engine.get(id) == before)
        #expect(before.statistics.activeEnergySource == "sensor")
        #expect(before.statistics.laps.count == 2)
        // …and it continues.
        clock.now = W.t0 + 125_000
        try d.engine.stop(id)
        let w = try d.engine.end(id)
        #expect(try workouts(d.store).map(\.uuid) == [w.uuid])
        #expect(try d.journal.inner.openSessions().sessions.isEmpty)
    }

    @Test func crashAfterEndBeforeSaveSavesOnRestart() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let clock = TestClock()
        let id: UUID
        do {
            let d = try Daemon(dir, clock: clock)
            id = try live(d)
            clock.now = W.t0 + 121_000
            d.journal.crashOnSave = true
            #expect(throws: StrapError.internal("crash")) { try d.engine.end(id) }
            #expect(try d.engine.get(id).session.state == .ended)
            d.store.close()
        }
        let d = try Daemon(dir, clock: clock)
        _ = try d.recover()
        #expect(d.engine.sessionsAwaitingSave == [id])
        let w = try d.engine.end(id)
        #expect(w.end == W.t0 + 121_000 && w.sessionID == id)
        #expect(w.summary["elapsedTime"] == 106, "121 s less the 15 s pause")
        #expect(try workouts(d.store).count == 1)
        #expect(try d.journal.inner.openSessions().sessions.isEmpty)
    }

    @Test func crashAfterSaveBeforeRemoveDoesNotSaveAgain() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }  // the directory outlives the store
        let clock = TestClock()
        let id: UUID
        let saved: Workout
        do {
            let d = try Daemon(dir, clock: clock)
            id = try live(d)
            clock.now = W.t0 + 121_000
            d.journal.crashOnRemove = true
            saved = try d.engine.end(id)  // the removal's failure does not undo the end
            #expect(FileManager.default.fileExists(atPath: d.journal.inner.path(id)))
            d.store.close()
        }
        let d = try Daemon(dir, clock: clock)
        let scan = try d.recover()
        #expect(scan.alreadySaved == [id] && scan.sessions.isEmpty)
        #expect(d.engine.list().isEmpty)
        #expect(try workouts(d.store).map(\.uuid) == [saved.uuid])
    }
}
