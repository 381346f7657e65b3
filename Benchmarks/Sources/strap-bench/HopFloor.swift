import Foundation
import Glibc
import Synchronization

/// The floor under any socket client's follow latency on this machine, measured in process in
/// the same run as `strap-bench client`: a thread writes its clock into a socketpair every 2 ms;
/// a reader thread blocked in `read` takes it (the kernel's socket wake-up, what the raw client
/// pays too), then yields it into an `AsyncStream` whose consuming task notes when it resumed
/// (the hand-over to Swift's cooperative pool, what StrapKit's default path adds).
enum HopFloor {
    struct Figures {
        var wake: (p50: Double, p99: Double)
        var hop: (p50: Double, p99: Double)
        var count: Int
    }

    static func measure(seconds: Double) throws -> Figures {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw BenchFailure("socketpair: errno \(errno)") }
        let (writeEnd, readEnd) = (pair[0], pair[1])
        let wakes = Mutex<[Double]>([]), hops = Mutex<[Double]>([])
        let (stream, sink) = AsyncStream<Double>.makeStream()
        let reader = Thread {
            var sent: Double = 0
            while read(readEnd, &sent, 8) == 8 {
                let t = DecodeBench.now()
                wakes.withLock { $0.append(t - sent) }
                sink.yield(t)
            }
            sink.finish()
        }
        reader.start()
        let consumer = Task.detached {
            for await yielded in stream { let t = DecodeBench.now(); hops.withLock { $0.append(t - yielded) } }
        }
        let end = DecodeBench.now() + seconds
        while DecodeBench.now() < end {
            var t = DecodeBench.now()
            _ = write(writeEnd, &t, 8)
            usleep(2_000)
        }
        Glibc.close(writeEnd)
        while !reader.isFinished { usleep(1_000) }
        Glibc.close(readEnd)
        ClientBench.blockingResult { await consumer.value }
        let w = wakes.withLock { $0 }.sorted(), h = hops.withLock { $0 }.sorted()
        guard !w.isEmpty, !h.isEmpty else { throw BenchFailure("no ping went through") }
        func p(_ v: [Double], _ q: Double) -> Double { v[min(v.count - 1, Int(Double(v.count) * q))] }
        return Figures(wake: (p(w, 0.5), p(w, 0.99)), hop: (p(h, 0.5), p(h, 0.99)), count: h.count)
    }
}
