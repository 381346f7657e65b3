import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing
@testable import StrapDaemon

/// The daemon's lifecycle: services start in order and stop in reverse, from one place.
@Suite struct ServiceGroupTests {
    /// Everything the services did, in order.
    final class Journal: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    final class Probe: LifecycleService {
        let serviceName: String
        let journal: Journal
        let failure: StartupError?
        init(_ name: String, _ journal: Journal, failing failure: StartupError? = nil) {
            serviceName = name
            self.journal = journal
            self.failure = failure
        }
        func start() throws(StartupError) {
            journal.add("start \(serviceName)")
            if let failure { throw failure }
        }
        func stop() { journal.add("stop \(serviceName)") }
    }

    @Test func startsInOrderAndStopsInReverseOnce() throws {
        let journal = Journal()
        let group = ServiceGroup(["store", "server", "pipeline", "source", "notifier"].map { Probe($0, journal) })
        try group.start()
        #expect(group.running == ["store", "server", "pipeline", "source", "notifier"])
        group.stop()
        group.stop()
        #expect(journal.all == ["start store", "start server", "start pipeline", "start source", "start notifier",
                                "stop notifier", "stop source", "stop pipeline", "stop server", "stop store"])
        #expect(group.running.isEmpty)
    }

    @Test func aFailedStartStopsWhatStartedInReverseAndStartsNothingMore() {
        let journal = Journal()
        let group = ServiceGroup([Probe("store", journal), Probe("server", journal),
                                  Probe("replay", journal, failing: .source("cannot replay x: no such file")),
                                  Probe("notifier", journal)])
        #expect(throws: StartupError.self) { try group.start() }
        // The failed one was not up, so it is not stopped; the notifier never started.
        #expect(journal.all == ["start store", "start server", "start replay", "stop server", "stop store"])
        group.stop()
        #expect(journal.all.count == 5)
    }

    @Test func aStopDuringStartWaitsForTheServiceStartingThenStopsAllAndNoMoreStart() throws {
        let journal = Journal()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let group = ServiceGroup([
            Probe("store", journal),
            ServiceSteps("source", start: {
                journal.add("start source")
                entered.signal()
                release.wait()
            }, stop: { journal.add("stop source") }),
            Probe("notifier", journal),
        ])
        let started = DispatchSemaphore(value: 0)
        Thread { try? group.start(); started.signal() }.start()
        entered.wait()
        let stopped = DispatchSemaphore(value: 0)
        Thread { group.stop(); stopped.signal() }.start()
        while !group.isStopping { usleep(1000) }
        // `stop` is waiting for the source's start; let it finish.
        release.signal()
        stopped.wait()
        started.wait()
        #expect(journal.all == ["start store", "start source", "stop source", "stop store"])
    }
}

/// A whole `Daemon` in this process, replaying a capture: its stop (what SIGTERM calls) ends
/// the replay before the final flush.
@Suite struct DaemonLifecycleTests {
    @Test func stopEndsTheReplayBeforeTheFinalFlush() throws {
        let directory = "/tmp/strapd-lc-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = directory + "/capture.jsonl"
        try simulatedEvents(count: 6, seconds: 4 * 3600, seed: 17).map(CaptureFormat.line).joined(separator: "\n")
            .write(toFile: capture, atomically: true, encoding: .utf8)
        try """
            [daemon]
            state_dir = \(directory)/state
            socket = \(directory)/s.sock
            socket_group =
            log_level = warning
            [store]
            sync = interval
            """.write(toFile: directory + "/strapd.conf", atomically: true, encoding: .utf8)
        var options = DaemonOptions()
        options.configPath = directory + "/strapd.conf"
        options.configExplicit = true
        options.replay = capture
        options.replaySpeed = 1000
        let daemon = try Daemon(options: options, environment: [:])
        try daemon.start()
        let context = try #require(daemon.context)
        while context.pipeline.counters.events < 3000 { usleep(5000) }
        let stopped = DispatchSemaphore(value: 0)
        daemon.onStopped = { _ in stopped.signal() }
        daemon.stop(exitCode: 0)
        stopped.wait()
        let atStop = context.pipeline.counters
        // A stretch in which a replay still running would submit hundreds of events.
        usleep(200_000)
        #expect(context.pipeline.counters == atStop, "nothing submitted after the stop")
        // Everything decoded was stored: the flush came after the last submission.
        #expect(Int(context.store.latestAnchor) == atStop.samples && atStop.samples > 0)
    }
}
