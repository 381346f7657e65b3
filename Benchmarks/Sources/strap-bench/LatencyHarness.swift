import Glibc
import Synchronization

/// What both live-latency runs (strapd's socket and the mosquitto peer) share: the workload,
/// the pacer, the send-time table and the per-subscriber tallies, so the two sides differ
/// only in the transport.
struct LatencyWorkload: Sendable, CustomStringConvertible {
    var rate: Int
    var subscribers: Int
    /// Messages sent before measuring (connections, caches and queues settle).
    var warmup: Int
    var measured: Int
    /// Sequence numbers run 1…total and travel as the uint16 heart rate: never wrap.
    var total: Int { warmup + measured }

    var description: String {
        "\(rate >= 1000 ? "\(rate / 1000) k" : "\(rate)")/s, \(subscribers) subscriber\(subscribers == 1 ? "" : "s")"
    }

    /// How long to wait after the last send for it to reach every subscriber; whatever has
    /// not arrived by then is reported missing.
    var drainLimit: Double

    /// `STRAP_BENCH_LIVE=1000x100,10000x1` picks configurations (to reproduce one quickly).
    static func chosen(quick: Bool) -> [LatencyWorkload] {
        let all = all(quick: quick)
        guard let spec = getenv("STRAP_BENCH_LIVE").map({ String(cString: $0) }) else { return all }
        let picks = spec.split(separator: ",").map { $0.split(separator: "x").compactMap { Int($0) } }
        return all.filter { w in picks.contains { $0 == [w.rate, w.subscribers] } }
    }

    static func all(quick: Bool) -> [LatencyWorkload] {
        // 3 s measured per configuration (1 s with --quick), after 0.5 s of warm-up. 10 k/s to
        // 100 subscribers is a million deliveries a second: 1 s of it is plenty to measure, and
        // a backlog, if any, must drain within the run's time budget.
        [(1_000, 1), (1_000, 100), (10_000, 1), (10_000, 100)].map { rate, subs in
            let seconds = quick || rate * subs >= 1_000_000 ? 1 : 3
            return LatencyWorkload(rate: rate, subscribers: subs, warmup: rate / 2, measured: rate * seconds,
                                   drainLimit: quick ? 10 : 30)
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the one clock both the pacer and the subscribers read.
@inline(__always) func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Send time per sequence number. The pacer stores with release ordering before it hands
/// the message on; a subscriber loads with acquire ordering after receiving it, so no lock
/// sits on the measured path.
final class SendTimes: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count + 1)
        for i in 0...count { (slots + i).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: count + 1)
        slots.deallocate()
    }

    func record(_ seq: Int, _ nanos: UInt64) { slots[seq].store(nanos, ordering: .releasing) }
    func sent(_ seq: Int) -> UInt64 { seq >= 1 && seq <= count ? slots[seq].load(ordering: .acquiring) : 0 }
}

/// Flags the measuring thread and the subscriber threads share.
final class RunFlags: Sendable {
    let stop = Atomic<Bool>(false)
    let failures = Atomic<Int>(0)
    /// CPU time the subscriber threads used, nanoseconds (CLOCK_THREAD_CPUTIME_ID at exit).
    let subscriberCPU = Atomic<UInt64>(0)

    func addThreadCPU() {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        subscriberCPU.add(UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec), ordering: .relaxed)
    }
}

/// CPU seconds this process has used so far (all threads).
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// One subscriber's results; written only by the thread that receives for it, read after
/// that thread has finished.
final class SubscriberTally: @unchecked Sendable {
    let workload: LatencyWorkload
    let times: SendTimes
    /// Latencies of the measured messages, nanoseconds.
    var latencies: [UInt64] = []
    var received = 0
    /// What the daemon said it had to drop (`dropped` events); mosquitto never says.
    var reportedDropped = 0
    /// Polled by the measuring thread while the receiving thread sets it.
    private let last = Atomic<Bool>(false)
    var sawLast: Bool { last.load(ordering: .relaxed) }

    init(workload: LatencyWorkload, times: SendTimes) {
        self.workload = workload
        self.times = times
        latencies.reserveCapacity(workload.measured)
    }

    @inline(__always) func arrived(_ seq: Int, at now: UInt64) {
        if seq > workload.warmup, seq <= workload.total {
            let sent = times.sent(seq)
            if sent > 0, now >= sent { latencies.append(now - sent); received += 1 }
        }
        if seq == workload.total { last.store(true, ordering: .relaxed) }
    }
}

/// The merged result of one configuration on one transport.
struct LatencyResult {
    var p50: Double
    var p99: Double
    var expected: Int
    var received: Int
    var reportedDropped: Int
    /// Seconds from the last send until every subscriber had it (or the drain limit).
    var drained: Double

    /// True when some messages never arrived (see `init`).
    var lowerBound: Bool { received < expected }

    /// `end` is when waiting stopped (monotonic ns). A message that never reached a
    /// subscriber (dropped, or still queued) ranks above every delivered one, valued at
    /// `end − sent` (a lower bound; both transports deliver in order, so a subscriber's missing
    /// messages are taken as its last ones) but never below the slowest delivered message.
    /// So an overloaded run cannot look fast by reporting only what got through.
    init?(_ tallies: [SubscriberTally], drained: Double, end: UInt64) {
        self.drained = drained
        var all: [UInt64] = []
        for t in tallies { all += t.latencies }
        let delivered = all.count
        guard delivered > 0 else { return nil }
        // Ranked above every delivered message, whether dropped or still queued.
        let slowest = all.max()!
        for t in tallies {
            let w = t.workload
            for seq in stride(from: w.total, to: w.total - (w.measured - t.latencies.count), by: -1) {
                all.append(max(slowest, end - min(end, t.times.sent(seq))))
            }
        }
        all.sort()
        func pct(_ q: Double) -> Double {
            let i = min(all.count - 1, max(0, Int((Double(all.count) * q).rounded(.up)) - 1))
            return Double(all[i]) / 1e6
        }
        p50 = pct(0.50)
        p99 = pct(0.99)
        expected = tallies.reduce(0) { $0 + $1.workload.measured }
        received = delivered
        reportedDropped = tallies.reduce(0) { $0 + $1.reportedDropped }
    }

    var accounting: String {
        let missing = expected - received
        return "delivered \(received)/\(expected)" + (missing > 0 ? ", missing \(missing)" : "") +
            (reportedDropped > 0 ? ", daemon reported \(reportedDropped) dropped" : "") +
            String(format: ", all in %.2f s after the last send", drained)
    }
}

enum Pacer {
    /// Calls `publish(seq)` for seq 1…total at `rate` per second on the calling thread,
    /// recording each send time just before. Sleeps to absolute deadlines rather than
    /// spinning: the machine has two cores and the subscribers need them. A late wake-up
    /// (timer slack is 50 µs) sends what is due at once, so the mean rate holds and each
    /// message still carries its own send time.
    /// Returns once everything is sent; then `waitDelivered` waits for the last message.
    static func run(_ workload: LatencyWorkload, times: SendTimes, publish: (Int) -> Void) {
        let interval = 1e9 / Double(workload.rate)
        let start = monotonicNanos() + 1_000_000
        for seq in 1...workload.total {
            let due = start + UInt64(Double(seq - 1) * interval)
            if monotonicNanos() < due {
                var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
            }
            times.record(seq, monotonicNanos())
            publish(seq)
        }
    }
}

extension LatencyWorkload {
    /// Waits until every tally saw the last message or the drain limit passed; returns the
    /// wait in seconds and when it ended.
    func waitDelivered(_ tallies: [SubscriberTally]) -> (seconds: Double, end: UInt64) {
        let start = monotonicNanos()
        let deadline = start + UInt64(drainLimit * 1e9)
        while monotonicNanos() < deadline, !tallies.allSatisfy({ $0.sawLast }) { usleep(2_000) }
        return (Double(monotonicNanos() - start) / 1e9, monotonicNanos())
    }
}

/// Finds `"key":` in `bytes[from..<to]` and parses the unsigned integer after it.
@inline(__always) func jsonInteger(after key: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
    let n = key.count
    var i = from
    while i + n <= to {
        if bytes[i] == key[0] {
            var k = 1
            while k < n && bytes[i + k] == key[k] { k += 1 }
            if k == n {
                var j = i + n, v = 0, digits = 0
                while j < to, bytes[j] >= 48, bytes[j] <= 57 { v = v * 10 + Int(bytes[j] - 48); j += 1; digits += 1 }
                return digits > 0 ? v : nil
            }
        }
        i += 1
    }
    return nil
}

let valueKey = Array(#""value":"#.utf8)
let droppedKey = Array(#""event":"dropped""#.utf8)
let countKey = Array(#""count":"#.utf8)
