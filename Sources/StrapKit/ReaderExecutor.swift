import Dispatch
import Glibc
import Synchronization

/// The thread that reads the store's socket, as a task executor (``StrapStore/executor``).
///
/// By default a stream's consumer runs on Swift's cooperative pool: the reader thread reads an
/// event and yields it, and the consuming task is woken on another thread. That second wake-up
/// is what StrapKit adds to a followed sample's latency, and on a loaded machine its tail is
/// long. A task that prefers this executor (`withTaskExecutorPreference(store.executor)`) runs
/// on the reader thread instead: the event is read, yielded and consumed on one thread, with no
/// hand-over in between. The price is that the consumer's work holds up the reading of every
/// other reply and stream of the store; work that blocks the thread (a semaphore, a blocking
/// call) stalls the connection.
///
/// Between connections (before the first, during a reconnect, after `close`) jobs run on
/// Dispatch's global queue, so a task preferring this executor never waits for a reader.
final class ReaderExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `wake` is set once in init; everything else is under `state`.
    private struct State {
        var jobs: [UnownedJob] = []
        /// The reader thread driving the executor, if one is.
        var driver: pthread_t?
    }

    private let state = Mutex(State())
    /// A pipe's read end the reader polls, and its write end, written when a job arrives from
    /// another thread while the reader sleeps in `poll` (-1 when no pipe could be had).
    let wake: Int32
    private let wakeWriter: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
        } else {
            ends = [-1, -1]
        }
        (wake, wakeWriter) = (ends[0], ends[1])
    }

    deinit {
        if wake >= 0 { Glibc.close(wake); Glibc.close(wakeWriter) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let signal = state.withLock { s -> Bool? in
            guard let driver = s.driver, wake >= 0 else { return nil }
            s.jobs.append(job)
            // The reader runs its queue after each read; only a sleeping one needs a wake-up.
            return s.jobs.count == 1 && pthread_equal(driver, pthread_self()) == 0
        }
        switch signal {
        case nil:
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
        case true?:
            var one: UInt8 = 1
            _ = Glibc.write(wakeWriter, &one, 1)
        case false?:
            break
        }
    }

    /// On a reader thread: it drives the executor until `resign`. False when another reader
    /// still does (a connection closing while the next one opens) or no pipe was had.
    func adopt() -> Bool {
        guard wake >= 0 else { return false }
        return state.withLock { s in
            guard s.driver == nil else { return false }
            s.driver = pthread_self()
            return true
        }
    }

    /// On the driving reader thread, as it ends: queued jobs go to the global queue.
    func resign() {
        let left = state.withLock { s -> [UnownedJob] in
            guard let driver = s.driver, pthread_equal(driver, pthread_self()) != 0 else { return [] }
            s.driver = nil
            defer { s.jobs = [] }
            return s.jobs
        }
        let executor = asUnownedTaskExecutor()
        for job in left { DispatchQueue.global().async { job.runSynchronously(on: executor) } }
    }

    /// On the driving reader thread: runs queued jobs (and those they queue) until none is left;
    /// `woken` after `poll` saw the pipe, which is then read back to zero.
    func runJobs(woken: Bool) {
        if woken {
            var drained = (UInt64(0), UInt64(0))
            while Glibc.read(wake, &drained, 16) > 0 {}
        }
        while true {
            let jobs = state.withLock { s -> [UnownedJob] in
                defer { s.jobs.removeAll(keepingCapacity: true) }
                return s.jobs
            }
            if jobs.isEmpty { return }
            let executor = asUnownedTaskExecutor()
            for job in jobs { job.runSynchronously(on: executor) }
        }
    }
}
