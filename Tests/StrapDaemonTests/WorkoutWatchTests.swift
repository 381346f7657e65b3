import ProtocolDriver
import Foundation
import Glibc
import StrapControl
import StrapModel
import StrapOS
import StrapWire
import Synchronization
import Testing
@testable import StrapDaemon

/// `workout.watch` (every session's creation, state changes, save, discard) and the `failed`
/// event of `workout.live` and `workout.watch` when a journal write or a save fails, made to
/// fail through the store's syscall table, which the session journals use too.
@Suite struct WorkoutWatchTests {
    /// Writes and syncs of the session journals (`…/sessions/*.journal`) fail with EIO while
    /// `failing` is set; every other file works.
    /// `beforeSync`, when set, runs (on the syncing thread) before each journal sync: a test
    /// holds the disk there.
    final class JournalFaults: Sendable {
        private let state = Mutex<(failing: Bool, journals: Set<CInt>, beforeSync: (@Sendable () -> Void)?)>((false, [], nil))

        var failing: Bool {
            get { state.withLock { $0.failing } }
            set { state.withLock { $0.failing = newValue } }
        }

        var beforeSync: (@Sendable () -> Void)? {
            get { state.withLock { $0.beforeSync } }
            set { state.withLock { $0.beforeSync = newValue } }
        }

        private func fails(_ fd: CInt) -> Bool { state.withLock { $0.failing && $0.journals.contains(fd) } }

        var syscalls: Syscalls {
            var sys = Syscalls.live
            sys.open = { [self] path, flags, mode in
                let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
                if fd >= 0 { state.withLock { s in if path.hasSuffix(".journal") { s.journals.insert(fd) } else { s.journals.remove(fd) } } }
                return fd
            }
            sys.pwrite = { [self] fd, buffer, count, offset in
                if fails(fd) { Errno.current = .ioError; return -1 }
                return Glibc.pwrite(fd, buffer, count, offset)
            }
            sys.fdatasync = { [self] fd in
                if let hold = state.withLock({ $0.journals.contains(fd) ? $0.beforeSync : nil }) { hold() }
                if fails(fd) { Errno.current = .ioError; return -1 }
                return Glibc.fdatasync(fd)
            }
            return sys
        }
    }

    typealias Clock = WorkoutProtocolTests.TestClock

    func session(_ reply: JSONObject) throws -> String {
        guard case .object(let s)? = reply.result["session"], let id = s.string("session") else {
            Issue.record("no session in \(reply)")
            throw ClientError.closed
        }
        return id
    }

    /// Events of stream `id` up to and including the first that `last` accepts.
    func events(_ c: RawProtocolDriver, id: String, until last: (JSONObject) -> Bool) throws -> [JSONObject] {
        let (match, before) = try c.read { $0.string("id") == id && $0.event != nil && last($0) }
        return before.filter { $0.string("id") == id && $0.event != nil } + [match]
    }

    @Test func aWatcherHearsEverySessionCreatedChangedSavedAndDiscarded() throws {
        let clock = Clock()
        let h = try RouterHarness(workoutClock: clock.now)
        defer { h.close() }
        let control = try h.client(), watcher = try h.client()
        let (hrm, csc) = (h.identities[0].address, h.identities[1].address)
        let before = try control.call(#"{"id":1,"op":"workout.prepare","activityType":"walking","devices":["\#(csc)"]}"#)
        let early = try session(before)
        let ok = try watcher.call(#"{"id":"w","op":"workout.watch"}"#)
        #expect(ok.isOK, "\(ok)")
        // The sessions open when it began come with the `ok`; nothing needs polling after it.
        #expect(ok.result.objects("sessions").compactMap { ($0["session"].flatMap { if case .object(let s) = $0 { s } else { nil } })?.string("session") } == [early])

        // A start refused (the device is taken) leaves no session: nothing is announced.
        #expect(try control.call(#"{"id":9,"op":"workout.start","activityType":"rowing","devices":["\#(csc)"]}"#).errorCode == "busy")
        let started = try control.call(#"{"id":2,"op":"workout.start","activityType":"running","athlete":"ana","devices":["\#(hrm)"]}"#)
        let id = try session(started)
        clock.set(seconds: 5)
        #expect(try control.call(#"{"id":3,"op":"workout.lap","session":"\#(id)"}"#).isOK)
        #expect(try control.call(#"{"id":4,"op":"workout.pause","session":"\#(id)"}"#).isOK)
        clock.set(seconds: 8)
        let ended = try control.call(#"{"id":5,"op":"workout.end","session":"\#(id)"}"#)
        guard case .object(let workout)? = ended.result["workout"], let uuid = workout.string("uuid") else {
            Issue.record("no workout: \(ended)"); return
        }
        #expect(try control.call(#"{"id":6,"op":"workout.discard","session":"\#(early)"}"#).isOK)

        let seen = try events(watcher, id: "w") { $0.event == "discarded" }
        #expect(seen.compactMap(\.event) == ["created", "state", "state", "state", "saved", "discarded"])
        #expect(seen.dropLast().allSatisfy { $0.data.string("session") == id })
        #expect(id == id.uppercased())
        #expect(seen.compactMap { $0.data.string("state") } == ["notStarted", "running", "paused", "ended", "ended", "prepared"])
        #expect(seen[0].data["configuration"].flatMap { if case .object(let c) = $0 { c.string("athlete") } else { nil } } == "ana")
        #expect(seen[1].data.string("from") == "notStarted")
        #expect(seen[4].data.string("workout") == uuid)
        #expect(seen[5].data.string("session") == early)

        // `cancel` ends it like any stream; later sessions are not announced to it.
        try watcher.send(#"{"id":"w","op":"cancel"}"#)
        let cancelled = try watcher.read { $0.string("id") == "w" && $0.event == "cancelled" }
        #expect(cancelled.before.allSatisfy { $0.string("id") != "w" })
        #expect(try control.call(#"{"id":7,"op":"workout.prepare","activityType":"walking","devices":["\#(csc)"]}"#).isOK)
        // An announcement is on its way to the watcher's connection before the command's
        // reply: had the stream lived on, it would come before this reply.
        try watcher.send(#"{"id":"s","op":"status"}"#)
        let status = try watcher.read { $0.string("id") == "s" }
        #expect(status.match.isOK && status.before.isEmpty, "\(status.before)")
    }

    @Test func aJournalThatCannotBeWrittenIsAFailedEventForEveryFollowerAndWatcher() throws {
        let clock = Clock()
        let faults = JournalFaults()
        let h = try RouterHarness(workoutClock: clock.now, syscalls: faults.syscalls)
        defer { h.close() }
        let control = try h.client(), a = try h.client(), b = try h.client(), watcher = try h.client()
        let id = try session(try control.call(#"{"id":1,"op":"workout.start","activityType":"cycling","devices":[]}"#))
        for f in [a, b] { #expect(try f.call(#"{"id":"live","op":"workout.live","session":"\#(id)"}"#).isOK) }
        #expect(try watcher.call(#"{"id":"w","op":"workout.watch"}"#).isOK)

        clock.set(seconds: 3)
        faults.failing = true
        let refused = try control.call(#"{"id":2,"op":"workout.pause","session":"\#(id)"}"#)
        #expect(refused.errorCode == "unavailable", "\(refused)")
        faults.failing = false
        #expect(try control.call(#"{"id":3,"op":"workout.pause","session":"\#(id)"}"#).isOK)

        for f in [a, b] {
            let seen = try events(f, id: "live") { $0.event == "state" }.filter { $0.event != "statistics" }
            #expect(seen.compactMap(\.event) == ["failed", "state"], "\(seen)")
            let failed = seen[0].data
            #expect(failed.string("session") == id && failed.string("operation") == "pause" && failed.string("state") == "running")
            #expect(failed.string("code") == "unavailable")
            #expect(failed.string("message")?.contains("Input/output error") == true, "\(failed)")
            #expect(seen[1].data.string("to") == "paused")
        }
        let announced = try events(watcher, id: "w") { $0.event == "state" }
        #expect(announced.compactMap(\.event) == ["failed", "state"])
        #expect(announced[0].data.string("operation") == "pause" && announced[0].data.string("code") == "unavailable")
    }

    @Test func aSaveThatFailsIsAFailedEventAndEndRetriesIt() throws {
        let clock = Clock()
        let faults = JournalFaults()
        let h = try RouterHarness(workoutClock: clock.now, syscalls: faults.syscalls)
        defer { h.close() }
        let service = try #require(h.frontEnd.context.workouts)
        let control = try h.client(), follower = try h.client()
        let id = try session(try control.call(#"{"id":1,"op":"workout.start","activityType":"rowing","devices":[]}"#))
        #expect(try follower.call(#"{"id":"live","op":"workout.live","session":"\#(id)"}"#).isOK)
        clock.set(seconds: 4)
        // The end is journaled; the save (its mark in the journal, then the store) fails.
        service.beforeSave = { faults.failing = true }
        let refused = try control.call(#"{"id":2,"op":"workout.end","session":"\#(id)"}"#)
        #expect(refused.errorCode == "unavailable", "\(refused)")
        service.beforeSave = nil
        faults.failing = false
        let saved = try control.call(#"{"id":3,"op":"workout.end","session":"\#(id)"}"#)
        #expect(saved.isOK, "\(saved)")

        let seen = try events(follower, id: "live") { $0.event == "finished" }.filter { $0.event != "statistics" }
        #expect(seen.compactMap(\.event) == ["state", "failed", "saved", "finished"], "\(seen)")
        let failed = seen[1].data
        #expect(failed.string("operation") == "save" && failed.string("state") == "ended" && failed.string("code") == "unavailable")
    }
}
