import Dispatch
import Glibc
import StrapOS
import Synchronization

/// The bus connection's read side on a thread of its own: it sleeps in `epoll_wait` on the
/// bus socket and, when a message is there, runs the bus's `pump` on the bus queue through
/// `queue.sync` (on this thread, when the queue is idle). A Dispatch read source for the same
/// job woke libdispatch's manager thread, which then woke a worker to run the handler: two
/// wake-ups per D-Bus message, and with BlueZ's StartNotify every notification is one
/// (docs/benchmarks.md, "strapd beside a bleak logger"). The same thread watches the
/// AcquireNotify sockets (`watch`), whose every datagram is a notification. A pipe wakes the
/// thread to end.
final class BusReader: @unchecked Sendable {
    private let busFD: Int32
    private let epoll: Epoll
    /// A pipe: its write end wakes the thread to end.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let stopped = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    /// What runs, on the bus queue, for each watched descriptor's token. Changed on the bus
    /// queue and read there too (inside `queue.sync`), so a watch removed on the queue never
    /// runs again, even when its token was already in hand: tokens are never reused.
    private let watches = Mutex<[UInt64: @Sendable () -> Void]>([:])
    private let nextToken = Atomic<UInt64>(Token.firstWatch)
    /// What `epoll_wait` returned last, for the turn on the bus queue. The reader thread's
    /// alone: it fills them and runs the turn itself (`queue.sync` runs on the calling thread).
    private var ready = [UInt64](repeating: 0, count: 16)
    private var readyCount = 0

    private enum Token {
        static let bus: UInt64 = 0
        static let wake: UInt64 = 1
        static let firstWatch: UInt64 = 2
    }

    /// Nil when no epoll set, pipe or thread could be made (the caller falls back to a read
    /// source).
    init?(fd: Int32, queue: DispatchQueue, pump: @escaping @Sendable () -> Void) {
        busFD = fd
        guard let epoll = try? Epoll() else { return nil }
        self.epoll = epoll
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeFD = ends[0]
        wakeWriteFD = ends[1]
        guard (try? epoll.addReadable(fd, token: Token.bus)) != nil,
              (try? epoll.addReadable(wakeFD, token: Token.wake)) != nil else { return nil }
        let started = DetachedThread.spawn(name: "strapd-bus") { [self] in
            run(queue: queue, pump: pump)
        }
        if !started { return nil }        // deinit closes the pipe
    }

    private func run(queue: DispatchQueue, pump: @escaping @Sendable () -> Void) {
        // One work item for every turn: a closure handed to `sync` is a new heap block each time.
        var turn = RenewingWorkItem()
        while !stopped.load(ordering: .acquiring) {
            do { readyCount = try epoll.wait(into: &ready) } catch {
                // Not a reason to stop reading the bus: ENOMEM for a moment.
                usleep(10_000)
                continue
            }
            if stopped.load(ordering: .acquiring) { break }
            if readyCount == 0 { continue }
            queue.sync(execute: turn.item(on: queue) { DispatchWorkItem { [self] in serve(pump) } })
        }
        exited.signal()
    }

    /// On the bus queue, on the reader thread: what the last wait found ready.
    private func serve(_ pump: () -> Void) {
        for i in 0..<readyCount {
            let token = ready[i]
            if token == Token.bus {
                pump()
            } else if token != Token.wake, let handler = watches.withLock({ $0[token] }) {
                handler()
            }
        }
    }

    /// On the bus queue: runs `ready` there whenever `fd` is readable (level-triggered: until
    /// it is drained). Returns the token for `unwatch`, or nil when epoll refused the fd.
    func watch(_ fd: Int32, ready: @escaping @Sendable () -> Void) -> UInt64? {
        let token = nextToken.add(1, ordering: .relaxed).oldValue
        watches.withLock { $0[token] = ready }
        do { try epoll.addReadable(fd, token: token) } catch {
            watches.withLock { $0[token] = nil }
            return nil
        }
        return token
    }

    /// On the bus queue, before `fd` is closed: its handler never runs again.
    func unwatch(_ fd: Int32, token: UInt64) {
        try? epoll.remove(fd)
        watches.withLock { $0[token] = nil }
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
