import Dispatch
import Glibc
import StrapOS

/// Writes to many connections that leave together, from more than one thread.
///
/// Why: the live fan-out sends the same event to every subscriber, and on a virtual machine
/// most of each `send` is the kernel waking the reader on another CPU (an inter-processor
/// interrupt, a VM exit), about 5 µs each: with 100 subscribers the last one waited for 99
/// such wake-ups on one thread (docs/benchmarks.md, live latency). The batch takes the bytes
/// of connections whose output is empty (`Connection.write(_:in:)` holds them back), then
/// sends them from the calling thread and Dispatch's other workers at once.
///
/// Confinement is kept: the batch is built and finished on the server queue, in one turn of
/// it, so no connection's state can change while the sends run; the other threads only call
/// `send` on descriptors that cannot close before that turn ends (closing happens on the
/// server queue). What the sends leave behind (a partial write, EAGAIN, a failure) goes back
/// to each connection on the server queue, as its own `write` would have handled it.
public struct WriteBatch: ~Copyable {
    private var connections: [Connection] = []
    /// Below this many connections the sends stay on the calling thread: waking a worker
    /// costs about as much as a few sends.
    public static let parallelThreshold = 16

    public init() {}

    public var isEmpty: Bool { connections.isEmpty }

    mutating func hold(_ connection: Connection) { connections.append(connection) }

    /// On the server queue: sends everything held, then lets each connection deal with what
    /// is left. Must be called before the turn of the queue that built the batch ends.
    public mutating func send() {
        guard !connections.isEmpty else { return }
        if connections.count < Self.parallelThreshold {
            // One thread: each connection sends its held bytes itself and settles them, without
            // the arrays of jobs and outcomes the threads share, nor a `HeldWrite` (a copy of the
            // connection's system calls) per send: the live fan-out's usual case, one batch per
            // notification (docs/benchmarks.md, "Instructions and allocations per notification").
            for i in connections.indices { connections[i].sendHeldHere() }
            connections.removeAll(keepingCapacity: true)
            return
        }
        defer { connections.removeAll(keepingCapacity: true) }
        let jobs = connections.compactMap { $0.takeHeldForSend() }
        let outcomes = Outcomes(count: jobs.count)
        defer { outcomes.release() }
        let ways = Self.threads(for: jobs.count)
        if ways > 1 {
            // Contiguous shares: each thread wakes its own readers, in the fan-out's order.
            let share = (jobs.count + ways - 1) / ways
            DispatchQueue.concurrentPerform(iterations: ways) { w in
                for i in (w * share)..<min(jobs.count, (w + 1) * share) { outcomes.set(i, jobs[i].run()) }
            }
        } else {
            for i in jobs.indices { outcomes.set(i, jobs[i].run()) }
        }
        for i in jobs.indices { jobs[i].connection.finishHeld(jobs[i].bytes, outcomes[i]) }
    }

    static func threads(for count: Int) -> Int {
        guard count >= parallelThreshold else { return 1 }
        return max(1, min(ProcessInfoCPUs.active, count / (parallelThreshold / 2)))
    }

    deinit {
        precondition(connections.isEmpty, "a WriteBatch was dropped without send(): its bytes would never leave")
    }
}

/// How much of one held write the kernel took.
enum SendOutcome {
    /// All of it, or the first `n` bytes before the socket buffer filled.
    case sent(Int)
    case failed(SystemCallError)
}

/// One slot per job, each written by exactly one thread of `concurrentPerform` and read
/// after it returns (which orders the writes before the reads): hence `@unchecked`.
private struct Outcomes: @unchecked Sendable {
    private let base: UnsafeMutablePointer<SendOutcome>
    private let count: Int

    init(count: Int) {
        self.count = count
        base = .allocate(capacity: count)
        base.initialize(repeating: .sent(0), count: count)
    }

    func set(_ i: Int, _ outcome: SendOutcome) { base[i] = outcome }
    subscript(i: Int) -> SendOutcome { base[i] }

    func release() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

/// One connection's held bytes and what is needed to send them from any thread: nothing of
/// the connection's own (confined) state.
struct HeldWrite: Sendable {
    let connection: Connection
    let fd: FileDescriptor
    let syscalls: Syscalls
    let bytes: [UInt8]

    func run() -> SendOutcome { Self.send(bytes, fd: fd, syscalls: syscalls) }

    /// Sends until done, EAGAIN or a failure: how much the kernel took.
    static func send(_ bytes: [UInt8], fd: FileDescriptor, syscalls: Syscalls) -> SendOutcome {
        var sent = 0
        while sent < bytes.count {
            let from = sent
            let result = bytes.withUnsafeBytes { b in
                Result { () throws(SystemCallError) -> IOResult in
                    try syscalls.send(fd, from: UnsafeRawBufferPointer(rebasing: b[from...]))
                }
            }
            switch result {
            case .success(.processed(let n)): sent += n
            case .success(.wouldBlock): return .sent(sent)
            case .failure(let error): return .failed(error)
            }
        }
        return .sent(sent)
    }
}

enum ProcessInfoCPUs {
    /// Online CPUs, read once.
    static let active: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}
