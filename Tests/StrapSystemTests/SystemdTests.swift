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

/// These tests set NOTIFY_SOCKET/WATCHDOG_* in the process environment, which is what
/// sd_notify and sd_watchdog_enabled read; serialized so they never overlap each other,
/// and each restores the environment before returning.
@Suite(.serialized) struct SystemdNotifyTests {
    @Test func withoutNotifySocketNotifyIsANoOp() throws {
        unsetenv("NOTIFY_SOCKET")
        #expect(try SystemdNotifier.notify(.ready) == false)
        #expect(SystemdNotifier.watchdogInterval() == nil)
    }

    @Test func readyStatusAndStoppingReachTheNotifySocket() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        setenv("NOTIFY_SOCKET", listener.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(try SystemdNotifier.notify(.ready, .status("store open,\nlistening")))
        #expect(listener.receive() == "READY=1\nSTATUS=store open, listening")
        #expect(try SystemdNotifier.notify(.stopping))
        #expect(listener.receive() == "STOPPING=1")
    }

    @Test func watchdogPingerSendsWatchdogAtHalfTheInterval() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        setenv("NOTIFY_SOCKET", listener.path, 1)
        setenv("WATCHDOG_USEC", "200000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        defer { unsetenv("NOTIFY_SOCKET"); unsetenv("WATCHDOG_USEC"); unsetenv("WATCHDOG_PID") }
        #expect(SystemdNotifier.watchdogInterval() == .milliseconds(200))

        let pinger = try #require(WatchdogPinger(queue: DispatchQueue(label: "watchdog")))
        #expect(pinger.interval == .milliseconds(200))
        pinger.start()
        defer { pinger.stop() }
        // NOTIFY_SOCKET is the process's: another suite running at the same time may notify
        // READY=1 or STATUS through it. Only the pinger's datagrams are this test's.
        func nextWatchdog() -> String? {
            for _ in 0..<20 {
                guard let m = listener.receive() else { return nil }
                if m.hasPrefix("WATCHDOG") { return m }
            }
            return nil
        }
        #expect(nextWatchdog() == "WATCHDOG=1")
        #expect(nextWatchdog() == "WATCHDOG=1")
    }

    /// A notification socket nobody reads fills after net.unix.max_dgram_qlen datagrams and
    /// sd_notify then blocks: the pinged queue must keep running and excess sends be dropped.
    @Test func aStalledNotifySocketDoesNotWedgeThePingedQueue() throws {
        let listener = try NotifyListener()
        setenv("NOTIFY_SOCKET", listener.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let checks = Atomic(0)
        let queue = DispatchQueue(label: "wd-stalled")
        let pinger = WatchdogPinger(interval: .milliseconds(4), queue: queue) {
            checks.add(1, ordering: .relaxed)
            return true
        }
        pinger.start()
        // Far more pings than the socket can hold, and the queue still answers.
        #expect(eventually { checks.load(ordering: .relaxed) >= 200 })
        #expect(queue.sync { true })
        #expect(!SystemdNotifier.notifyInBackground(.status("still here")))
        pinger.stop()
        listener.close()  // wakes the blocked send with an error
        #expect(eventually { SystemdNotifier.notifyInBackground(.status("drained")) })
        unsetenv("NOTIFY_SOCKET")
        SystemdNotifier.sendQueue.sync {}  // nothing of this test reaches the next one's socket
    }

    @Test func watchdogForAnotherPidIsNotOurs() {
        setenv("WATCHDOG_USEC", "200000", 1)
        setenv("WATCHDOG_PID", String(getpid() + 1), 1)
        defer { unsetenv("WATCHDOG_USEC"); unsetenv("WATCHDOG_PID") }
        #expect(SystemdNotifier.watchdogInterval() == nil)
    }

    @Test func socketActivationMeantForAnotherProcessIsIgnoredAndConsumed() throws {
        // LISTEN_PID names another process (a parent that forgot to unset it): not ours.
        setenv("LISTEN_FDS", "1", 1)
        setenv("LISTEN_PID", String(getpid() + 1), 1)
        defer { unsetenv("LISTEN_FDS"); unsetenv("LISTEN_PID") }
        #expect(try UnixListener.activated() == nil)
        // sd_listen_fds(1) unset the variables so children do not inherit them.
        #expect(getenv("LISTEN_FDS") == nil)
        #expect(getenv("LISTEN_PID") == nil)
    }

    @Test func unhealthyDaemonWithholdsPings() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        setenv("NOTIFY_SOCKET", listener.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let healthy = Atomic(false)
        let checks = Atomic(0)
        let pinger = WatchdogPinger(interval: .milliseconds(20), queue: DispatchQueue(label: "wd")) {
            checks.add(1, ordering: .relaxed)
            return healthy.load(ordering: .relaxed)
        }
        pinger.start()
        defer { pinger.stop() }
        #expect(eventually { checks.load(ordering: .relaxed) >= 3 })
        healthy.store(true, ordering: .relaxed)
        // Only pings sent after recovery exist: nothing was queued while unhealthy.
        #expect(listener.receive() == "WATCHDOG=1")
        #expect(checks.load(ordering: .relaxed) >= 4)
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
