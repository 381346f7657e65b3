import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// Several sessions at once, device ownership, journaling before changing, saving.
@Suite struct EngineTests {
    @Test func twoSessionsOnDisjointDevices() throws {
        let f = EngineFixture()
        f.profiles["ana"] = AthleteProfile(maximumHeartRate: 200)
        let e = f.engine
        let a = try e.start(WorkoutConfiguration(activityType: .running, athlete: "default", deviceIDs: [W.strap.id]),
                            connectedDevices: []).id
        let b = try e.start(WorkoutConfiguration(activityType: .cycling, athlete: "ana", deviceIDs: [W.strap2.id, W.csc.id]),
                            connectedDevices: []).id
        for i in 1...10 {
            let t = W.t0 + Millis(i) * 1000
            #expect(e.add(W.hr(120, t, W.strap)) == a)
            #expect(e.add(W.hr(160, t, W.strap2)) == b)
            #expect(e.add(Sample(type: .cyclingSpeed, value: 8, start: t, device: W.csc)) == b)
            #expect(e.add(Sample(type: .cyclingDistance, value: 8, start: t - 1000, end: t, device: W.csc)) == b)
            #expect(e.add(W.hr(100, t, W.footpod)) == nil, "no session uses it")
        }
        f.clock.now = W.t0 + 10_000
        let sa = try e.statistics(a), sb = try e.statistics(b)
        #expect(sa.totals.heartRateAverage == 120 && sa.totals.distance == nil)
        #expect(sb.totals.heartRateAverage == 160 && sb.totals.distance == 80 && sb.totals.speedAverage == 8)
        #expect(sb.heartRateZones?.bpm.last == 200, "each session uses its athlete's profile")
        #expect(e.session(holding: W.strap.id) == a && e.session(holding: W.csc.id) == b)
    }

    @Test func deviceHeldByAnotherSessionIsBusyNamingIt() throws {
        let f = EngineFixture()
        let e = f.engine
        let a = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        let b = try e.create(WorkoutConfiguration(activityType: .rowing, athlete: "ben", deviceIDs: [W.strap2.id, W.strap.id])).id
        let before = try e.get(b), journal = f.journal.entries[b]
        #expect(throws: StrapError.busy("device dev-h10 is used by workout session \(a) (athlete default)")) {
            try e.start(b, connectedDevices: [])
        }
        #expect(throws: StrapError.busy("device dev-h10 is used by workout session \(a) (athlete default)")) {
            try e.prepare(b, connectedDevices: [])
        }
        #expect(try e.get(b) == before && f.journal.entries[b] == journal, "nothing changed")
        // The one-step start drops the session it created.
        #expect(throws: StrapError.self) {
            try e.start(WorkoutConfiguration(activityType: .rowing, deviceIDs: [W.strap.id]), connectedDevices: [])
        }
        #expect(e.list().count == 2)
    }

    @Test func withoutDevicesTakesTheFreeConnectedOnes() throws {
        let e = EngineFixture().engine
        let a = try e.start(WorkoutConfiguration(activityType: .running), connectedDevices: [W.strap.id]).id
        #expect(try e.get(a).session.deviceIDs == [W.strap.id])
        let b = try e.start(WorkoutConfiguration(activityType: .cycling), connectedDevices: [W.strap.id, W.csc.id]).id
        #expect(try e.get(b).session.deviceIDs == [W.csc.id])
        #expect(throws: StrapError.busy("no device named and every connected device is in use: dev-h10 by workout session \(a), "
            + "dev-csc by workout session \(b)")) {
            try e.start(WorkoutConfiguration(activityType: .walking), connectedDevices: [W.strap.id, W.csc.id])
        }
        let lonely = try e.start(WorkoutConfiguration(activityType: .walking), connectedDevices: []).id
        #expect(try e.get(lonely).session.deviceIDs == [], "nothing connected: a time-only session")
    }

    @Test func stopFreesDevicesAndLateSamplesStillReachTheStoppedSession() throws {
        let f = EngineFixture()
        let e = f.engine
        let a = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        f.clock.now = W.t0 + 10_000
        try e.stop(a)
        #expect(e.session(holding: W.strap.id) == nil)
        f.clock.now = W.t0 + 11_000
        let b = try e.start(WorkoutConfiguration(activityType: .running, athlete: "ben", deviceIDs: [W.strap.id]),
                            connectedDevices: []).id
        #expect(e.add(W.hr(130, W.t0 + 9_000)) == a, "stamped before a's stop, delivered after b took the strap")
        #expect(e.add(W.hr(140, W.t0 + 12_000)) == b)
        try e.end(a)
        #expect(e.add(W.hr(140, W.t0 + 13_000)) == b)
    }

    /// A lap taken while paused, then the end: every lap of the saved workout lies inside it,
    /// none ends before it starts (such a lap trapped the exports' range check, and with it
    /// strapd at `workout.end` once power figures were added there).
    @Test func aLapTakenWhilePausedStaysInsideTheWorkout() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [W.strap.id]), connectedDevices: []).id
        f.clock.now = W.t0 + 10_000
        _ = try e.pause(id)
        f.clock.now = W.t0 + 15_000
        _ = try e.lap(id)
        f.clock.now = W.t0 + 20_000
        let w = try e.end(id)
        #expect(w.laps.count == 2)
        for lap in w.laps {
            #expect(lap.start <= lap.end && lap.start >= w.start && lap.end <= w.end, "lap \(lap.start)…\(lap.end) in \(w.start)…\(w.end)")
        }
    }

    @Test func failedJournalWriteChangesNothing() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        let before = try e.get(id), changes = f.changes.count
        f.journal.failNextAppend = .unavailable("disk full")
        #expect(throws: StrapError.unavailable("disk full")) { try e.pause(id) }
        #expect(try e.get(id) == before)
        #expect(f.changes.count == changes, "no change reported")
        f.journal.failNextAppend = .unavailable("disk full")
        #expect(throws: StrapError.unavailable("disk full")) { try e.create(WorkoutConfiguration(activityType: .other)) }
        #expect(e.list().count == 1)
        f.journal.failNextRemove = .unavailable("read-only")
        #expect(throws: StrapError.unavailable("read-only")) { try e.discard(id) }
        #expect(try e.get(id) == before)
    }

    @Test func theEndEntryIsSyncedBeforeTheSaveAndAFailedSyncIsRetriedByEnd() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        f.clock.now = W.t0 + 10_000
        // beginEnd (what the daemon calls under its lock) writes the entry without syncing it:
        // a crash now would leave the session running, and no client was told it ended.
        _ = try e.beginEnd(id)
        #expect(f.journal.entries[id]?.last?.kind == "ended")
        #expect(f.journal.durableEntries(id).last?.kind == "started")
        e.abandonEnd(id)
        // end syncs before it saves; a failed sync saves nothing and leaves the end to retry.
        f.journal.failNextSync = .unavailable("EIO")
        #expect(throws: StrapError.unavailable("EIO")) { try e.end(id) }
        #expect(f.journal.saveCount == 0 && f.journal.durableEntries(id).last?.kind == "started")
        #expect(try e.get(id).session.state == .ended && e.sessionsAwaitingSave == [id])
        let w = try e.end(id)
        #expect(f.journal.saveCount == 1 && f.journal.entries[id] == nil && w.sessionID == id)
    }

    @Test func endSavesTheWorkoutOnceAndRetriesAFailedSave() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .cycling, locationType: .indoor, deviceIDs: [W.strap.id],
                                                  metadata: ["bike": "trainer"]), connectedDevices: []).id
        for s in W.steadyHR(150, from: W.t0, to: W.t0 + 30_000) { e.add(s) }
        f.clock.now = W.t0 + 30_000; try e.lap(id)
        for s in W.steadyHR(150, from: W.t0 + 31_000, to: W.t0 + 60_000) { e.add(s) }
        f.clock.now = W.t0 + 60_000; try e.stop(id)
        f.clock.now = W.t0 + 65_000
        f.journal.failNextSave = .unavailable("store degraded")
        #expect(throws: StrapError.unavailable("store degraded")) { try e.end(id) }
        #expect(try e.get(id).session.state == .ended)
        #expect(e.sessionsAwaitingSave == [id])
        let w = try e.end(id)
        #expect(f.journal.saveCount == 1 && f.journal.entries[id] == nil)
        #expect(e.sessionsAwaitingSave.isEmpty)
        #expect(throws: StrapError.invalidTransition("workout session \(id) is ended: no command is allowed")) { try e.end(id) }
        #expect(try e.get(id).workout == w)

        #expect(w.sessionID == id && w.athlete == "default" && w.activityType == "cycling" && w.locationType == .indoor)
        #expect(w.start == W.t0 && w.end == W.t0 + 60_000, "the workout ends at the stop")
        #expect(w.deviceIDs == [W.strap.id] && w.metadata == ["bike": "trainer"])
        #expect(w.events.map(\.kind) == ["lap"])
        #expect(w.laps.map(\.start) == [W.t0, W.t0 + 30_000] && w.laps.map(\.end) == [W.t0 + 30_000, W.t0 + 60_000])
        #expect(w.summary["elapsedTime"] == 60 && w.summary["heartRateAverage"] == 150)
        #expect(w.summary["activeEnergy"]!.isClose(to: 14.93824, within: 1e-3), "60 one-second spans = 1 min")
        #expect(w.summary["timeInZone3"] == 60 && w.summary["timeBelowZone1"] == 0, "150 bpm is 79 % of 190")
        #expect(w.summary["heartRateZoneBound5"] == 190 && w.summary["maximumHeartRate"] == 190)
        #expect(w.info == ["activeEnergySource": "keytel", "heartRateZoneMethod": "percentMaxHR",
                           "heartRateZoneScheme": "default", "maximumHeartRateSource": "profile"])
        #expect(w.laps[0].summary["elapsedTime"] == 30 && w.laps[1].summary["timeInZone3"] == 30)
        // And through JSON as the store keeps it.
        let back = try JSONDecoder().decode(Workout.self, from: JSONEncoder().encode(w))
        #expect(back == w)
    }

    @Test func discardLeavesNothing() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        try e.discard(id)
        #expect(f.journal.entries[id] == nil && f.journal.saveCount == 0)
        #expect(e.add(W.hr(120, W.t0 + 1000)) == nil)
        #expect(e.session(holding: W.strap.id) == nil)
        #expect(e.list().isEmpty)
    }

    @Test func sendIsRelayedNotPersisted() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .running), connectedDevices: []).id
        let journaled = f.journal.entries[id]
        try e.send(id, message: "eyJjbWQiOiJoaSJ9")
        #expect(f.changes.last == SessionChange(session: id, time: W.t0, kind: .message("eyJjbWQiOiJoaSJ9")))
        #expect(f.journal.entries[id] == journaled)
        #expect(throws: StrapError.invalidOption("a message takes at most 4096 bytes, got 4097")) {
            try e.send(id, message: String(repeating: "a", count: 4097))
        }
        try e.end(id)
        #expect(throws: StrapError.self) { try e.send(id, message: "late") }
    }

    @Test func observerSeesEveryChangeInOrder() throws {
        let f = EngineFixture()
        let e = f.engine
        let config = WorkoutConfiguration(activityType: .rowing, deviceIDs: [W.strap.id])
        let id = try e.create(config).id
        try e.prepare(id, connectedDevices: [])
        try e.start(id, connectedDevices: [])
        try e.marker(id, metadata: ["note": "start line"])
        try e.pause(id)
        try e.resume(id)
        let w = try e.end(id)
        let kinds = f.changes.map(\.kind)
        #expect(kinds == [
            .created(config),
            .state(from: .notStarted, to: .prepared),
            .state(from: .prepared, to: .running),
            .event(Workout.Event(kind: "marker", time: W.t0, metadata: ["note": "start line"])),
            .state(from: .running, to: .paused),
            .state(from: .paused, to: .running),
            .state(from: .running, to: .ended),
            .saved(w),
        ])
    }

    @Test func endedSessionsKeptAreBounded() throws {
        let f = EngineFixture()
        let e = f.engine
        var ids: [UUID] = []
        for _ in 0..<20 {
            let id = try e.start(WorkoutConfiguration(activityType: .walking), connectedDevices: []).id
            try e.end(id)
            ids.append(id)
        }
        #expect(e.list().map(\.session.id) == Array(ids.suffix(16)))
        #expect(throws: StrapError.notFound("no workout session \(ids[0])")) { try e.get(ids[0]) }
    }

    @Test func aFailedCreateAndPrepareLeavesNoSessionOrJournal() throws {
        let f = EngineFixture()
        let e = f.engine
        let a = try e.start(WorkoutConfiguration(activityType: .running, deviceIDs: [W.strap.id]), connectedDevices: []).id
        #expect(throws: StrapError.busy("device dev-h10 is used by workout session \(a) (athlete default)")) {
            try e.prepare(WorkoutConfiguration(activityType: .rowing, deviceIDs: [W.strap.id]), connectedDevices: [])
        }
        #expect(e.list().map(\.session.id) == [a])
        #expect(Array(f.journal.entries.keys) == [a])
        #expect(f.changes.last?.kind == .discarded)
        let prepared = try e.prepare(WorkoutConfiguration(activityType: .rowing, deviceIDs: [W.strap2.id]), connectedDevices: [])
        #expect(prepared.state == .prepared && e.session(holding: W.strap2.id) == prepared.id)
    }

    @Test func openSessionsAreBoundedAndTheRefusalSaysHowMany() throws {
        let f = EngineFixture()
        let e = WorkoutEngine(journal: f.journal, profiles: { _ in nil }, now: { W.t0 }, maximumOpenSessions: 2)
        let first = try e.create(WorkoutConfiguration(activityType: .walking)).id
        try e.create(WorkoutConfiguration(activityType: .walking))
        #expect(throws: StrapError.busy("2 workout sessions are open, the most strapd keeps (2); end or discard one first")) {
            try e.create(WorkoutConfiguration(activityType: .walking))
        }
        #expect(f.journal.entries.count == 2)
        try e.discard(first)
        try e.create(WorkoutConfiguration(activityType: .walking))
        #expect(e.openSessionCount == 2)
    }

    @Test func aSessionBeingSavedRefusesCommandsUntilTheSaveEnds() throws {
        let f = EngineFixture()
        let e = f.engine
        let id = try e.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [W.strap.id]), connectedDevices: []).id
        for s in W.steadyHR(140, from: W.t0, to: W.t0 + 10_000) { e.add(s) }
        f.clock.now = W.t0 + 10_000
        let draft = try e.beginEnd(id)
        #expect(draft.end == W.t0 + 10_000 && draft.summary["heartRateAverage"] == 140)
        #expect(e.session(holding: W.strap.id) == nil, "the devices are free while the workout is saved")
        #expect(throws: StrapError.busy("workout session \(id) is being saved; wait for its workout.end")) { try e.discard(id) }
        #expect(throws: StrapError.self) { try e.end(id) }
        // A failed save leaves it ended and unsaved; `end` retries.
        e.abandonEnd(id)
        #expect(e.sessionsAwaitingSave == [id])
        let saved = try e.end(id)
        #expect(saved.summary["heartRateAverage"] == 140 && f.journal.saveCount == 1)
    }
}
