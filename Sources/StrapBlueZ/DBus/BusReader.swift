import Dispatch
import Glibc
import StrapOS
import Synchronization

/// The bus connection's read side on a thread of its own: it sleeps in `poll` on the bus
/// socket and, when a message is there, runs the bus's `pump` on the bus queue through
/// `queue.sync` (on this thread, when the queue is idle). A Dispatch read source for the same
/// job woke libdispatch's manager thread, which then woke a worker to run the handler: two
/// wake-ups per D-Bus message, and with BlueZ's StartNotify every notification is one
/// (docs/benchmarks.md, "strapd beside a bleak logger"). A pipe wakes the thread to end.
final class BusReader: @unchecked Sendable {
    private let busFD: Int32
    /// A pipe: its write end wakes the thread to end.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let stopped = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    /// Nil when no pipe or thread could be made (the caller falls back to a read source).
    init?(fd: Int32, queue: DispatchQueue, pump: @escaping @Sendable () -> Void) {
        busFD = fd
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeFD = ends[0]
        wakeWriteFD = ends[1]
        let started = DetachedThread.spawn(name: "strapd-bus") { [self] in
            run(queue: queue, pump: pump)
        }
        if !started { return nil }        // deinit closes the pipe
    }

    private func run(queue: DispatchQueue, pump: @escaping @Sendable () -> Void) {
        var fds = [pollfd(fd: busFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        while !stopped.load(ordering: .acquiring) {
            fds[0].revents = 0
            fds[1].revents = 0
            let r = poll(&fds, 2, -1)
            // Not a reason to stop reading the bus: EINTR, or ENOMEM for a moment.
            if r < 0 {
                if errno != EINTR { usleep(10_000) }
                continue
            }
            if stopped.load(ordering: .acquiring) { break }
            if fds[0].revents != 0 { queue.sync { pump() } }
        }
        exited.signal()
    }

    /// Wakes the thread to end; it no longer pumps once it sees this.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }

    /// Runs `done` on another thread once the thread has ended (at once if it has): it may be
    /// waiting for the bus queue, which the caller may hold, so this never waits itself.
    func afterExit(_ done: @escaping @Sendable () -> Void) {
        let exited = exited
        DispatchQueue.global().async {
            exited.wait()
            exited.signal()         // for the next one who asks
            done()
        }
    }

    deinit {
        Glibc.close(wakeFD)
        Glibc.close(wakeWriteFD)
    }
}
