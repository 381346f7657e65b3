import CShims
import Dispatch
import Glibc
import StrapOS
@testable import StrapSystem
import Synchronization
import Testing

/// A datagram socket standing in for systemd's NOTIFY_SOCKET.
struct NotifyListener {
    let directory: TempDirectory
    let path: String
    let fd: CInt

    init() throws {
        directory = try TempDirectory()
        path = directory.path + "/notify"
        fd = cshims_unix_socket(Int32(SOCK_DGRAM.rawValue))
        guard fd >= 0, cshims_unix_bind(fd, path) == 0 else { throw Errno.current }
    }

    /// The next datagram, waiting up to 20 s (a bound for failures, not a timing check).
    func receive() -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 20_000) == 1 else { return nil }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? String(decoding: buf[..<n], as: UTF8.self) : nil
    }

    func close() {
        Glibc.close(fd)
        directory.remove()
    }
}

/// sd_notify, sd_watchdog_enabled and sd_listen_fds read NOTIFY_SOCKET, WATCHDOG_* and
/// LISTEN_* from the process environment, which no test may change (docs/testing.md, "The
/// environment"). Each test runs SystemdNotifier, WatchdogPinger or UnixListener.activated()
/// in `strap-env-probe`, spawned with the environment the test means, and judges what reaches
/// its notification socket and what the child reports.
@Suite struct SystemdNotifyTests {
    @Test func withoutNotifySocketNotifyIsANoOp() throws {
        #expect(try probe(["notify", "ready"]) == ["no socket"])
        #expect(try probe(["watchdog-interval"]) == ["off"])
    }

    @Test func readyStatusAndStoppingReachTheNotifySocket() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        let environment = ["NOTIFY_SOCKET": listener.path]
        #expect(try probe(["notify", "ready", "status=store open,\nlistening"], environment: environment) == ["sent"])
        #expect(listener.receive() == "READY=1\nSTATUS=store open, listening")
        #expect(try probe(["notify", "stopping"], environment: environment) == ["sent"])
        #expect(listener.receive() == "STOPPING=1")
    }

    @Test func watchdogPingerSendsWatchdogAtHalfTheInterval() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        // WATCHDOG_PID is the child's own pid, as systemd sets it for the service's main process.
        let environment = ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000"]
        #expect(try probe(["watchdog-interval"], environment: environment, ownPID: ["WATCHDOG_PID"]) == ["200000"])

        let pinger = try ProbeChild(["pinger"], environment: environment, ownPID: ["WATCHDOG_PID"])
        #expect(pinger.readLine() == "interval 200000")
        // The socket is this test's and only the pinger sends through it.
        #expect(listener.receive() == "WATCHDOG=1")
        #expect(listener.receive() == "WATCHDOG=1")
        let end = pinger.finish()
        #expect(end.lines == ["stopped"])
        #expect(end.exitStatus == 0)
    }

    /// A notification socket nobody reads fills after net.unix.max_dgram_qlen datagrams and
    /// sd_notify then blocks: the pinged queue must keep running and excess sends be dropped.
    @Test func aStalledNotifySocketDoesNotWedgeThePingedQueue() throws {
        let listener = try NotifyListener()
        let child = try ProbeChild(["stalled"], environment: ["NOTIFY_SOCKET": listener.path])
        // Far more pings than the socket can hold, and the queue still answers.
        #expect(child.readLine() == "pinged 200 times")
        #expect(child.readLine() == "queue answers")
        #expect(child.readLine() == "dropped")
        listener.close()  // wakes the blocked send with an error
        let end = child.finish()
        #expect(end.lines == ["drained"])
        #expect(end.exitStatus == 0)
    }

    @Test func watchdogForAnotherPidIsNotOurs() throws {
        // WATCHDOG_PID names the test process, the child's parent: not the child.
        let environment = ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": String(getpid())]
        #expect(try probe(["watchdog-interval"], environment: environment) == ["off"])
    }

    @Test func socketActivationMeantForAnotherProcessIsIgnoredAndConsumed() throws {
        // LISTEN_PID names another process (a parent that forgot to unset it): not ours.
        // sd_listen_fds(1) unset the variables so children do not inherit them.
        let lines = try probe(["activated"], environment: ["LISTEN_FDS": "1", "LISTEN_PID": String(getpid())])
        #expect(lines == ["not activated", "LISTEN_FDS=unset LISTEN_PID=unset"])
    }

    @Test func unhealthyDaemonWithholdsPings() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        let child = try ProbeChild(["unhealthy"], environment: ["NOTIFY_SOCKET": listener.path])
        #expect(child.readLine() == "withheld 3 pings")
        // Only pings sent after recovery exist: nothing was queued while unhealthy.
        #expect(listener.receive() == "WATCHDOG=1")
        let end = child.finish()
        let checks = end.lines.first.flatMap { $0.hasPrefix("checks ") ? Int($0.dropFirst("checks ".count)) : nil }
        #expect(checks.map { $0 >= 4 } == true, "\(end.lines)")
        #expect(end.exitStatus == 0)
    }
}

@Suite struct SignalWatcherTests {
    @Test func unstartedOrTwiceStoppedSourcesAreReleasedSafely() {
        // libdispatch traps on releasing an inactive source; these would crash the run.
        do { _ = WatchdogPinger(interval: .seconds(1), queue: DispatchQueue(label: "wd")) }
        do {
            let pinger = WatchdogPinger(interval: .seconds(1), queue: DispatchQueue(label: "wd"))
            pinger.stop()
            pinger.start()  // after stop: stays stopped
            pinger.stop()
        }
        do { _ = SignalWatcher(signals: [SIGWINCH], queue: DispatchQueue(label: "s")) { _ in } }
        // A later watcher takes the signal over and works.
        let seen = Mutex(0)
        let watcher = SignalWatcher(signals: [SIGWINCH], queue: DispatchQueue(label: "s")) { _ in seen.withLock { $0 += 1 } }
        watcher.start()
        watcher.start()
        kill(getpid(), SIGWINCH)
        #expect(eventually { seen.withLock { $0 } == 1 })
        watcher.cancel()
        watcher.cancel()
    }

    @Test func signalsArriveOnTheQueue() {
        let seen = Mutex<[Int32]>([])
        let queue = DispatchQueue(label: "signals")
        let watcher = SignalWatcher(signals: [SIGUSR1, SIGUSR2], queue: queue) { signo in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.withLock { $0.append(signo) }
        }
        watcher.start()
        defer { watcher.cancel() }
        kill(getpid(), SIGUSR2)
        #expect(eventually { seen.withLock { $0 } == [SIGUSR2] })
        kill(getpid(), SIGUSR1)
        #expect(eventually { seen.withLock { $0 } == [SIGUSR2, SIGUSR1] })
    }
}
