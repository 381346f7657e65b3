import CShims
import Foundation
import Synchronization

/// Context switches of all of a process's threads over a window, from
/// `/proc/PID/task/*/status` (`/proc/PID/status` counts the main thread only). Sampled every
/// second: a thread that exits during the window loses at most its last second, and one
/// born during it counts from zero. Voluntary switches are the thread blocking (each one a
/// wake-up later), involuntary ones preemption.
struct ContextSwitches {
    private var first: [Int: (Int, Int)] = [:]
    private var last: [Int: (Int, Int)] = [:]

    var voluntary: Int { last.reduce(0) { $0 + $1.value.0 - first[$1.key]!.0 } }
    var involuntary: Int { last.reduce(0) { $0 + $1.value.1 - first[$1.key]!.1 } }
    var total: Int { voluntary + involuntary }
    var threads: Int { last.count }

    /// The first sample sets the baseline of the threads alive then.
    mutating func sample(_ pid: Int32) {
        let baseline = last.isEmpty
        for (tid, counts) in Self.read(pid) {
            if first[tid] == nil { first[tid] = baseline ? counts : (0, 0) }
            last[tid] = counts
        }
    }

    static func read(_ pid: Int32) -> [Int: (Int, Int)] {
        let dir = "/proc/\(pid)/task"
        var out: [Int: (Int, Int)] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            guard let tid = Int(name),
                  let status = try? String(contentsOfFile: "\(dir)/\(name)/status", encoding: .utf8) else { continue }
            func field(_ key: String) -> Int {
                status.split(separator: "\n").first { $0.hasPrefix(key) }
                    .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).last }.flatMap { Int($0) } ?? 0
            }
            out[tid] = (field("voluntary_ctxt_switches:"), field("nonvoluntary_ctxt_switches:"))
        }
        return out
    }
}

/// Clients attached to strapd in `samples.anchored` follow mode, from anchor 0, that send
/// nothing more. A thread reads and drops what the daemon sends them, so no follower is
/// ever paused for a full buffer: what is measured is the daemon serving attached followers.
/// With `types`, the followers ask for those types only: `["workout"]` while no workout is
/// saved makes them idle followers, caught up and waiting, as a dashboard waiting for workouts.
final class AnchoredFollowers: @unchecked Sendable {
    private let fds: [Int32]
    private let stop = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(false)
    /// Bytes received per client; the reading thread's until `close()` returns.
    private var received: [Int]
    private let clientsServed = Atomic<Int>(0)

    init(socket path: String, count: Int, types: [String]? = nil) throws {
        var fds: [Int32] = []
        for i in 0..<count {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0, cshims_unix_connect(fd, path) == 0 else {
                for f in fds { Glibc.close(f) }
                throw BenchFailure("cannot connect a follower to \(path): errno \(errno)")
            }
            let filter = types.map { #","types":["# + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? ""
            let request = Array(#"{"id":"follower-\#(i)","op":"samples.anchored","anchor":0,"follow":true\#(filter)}"#.utf8) + [0x0A]
            guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
                for f in fds + [fd] { Glibc.close(f) }
                throw BenchFailure("cannot send a follow request: errno \(errno)")
            }
            fds.append(fd)
        }
        self.fds = fds
        received = Array(repeating: 0, count: count)
        guard count > 0 else { stopped.signal(); return }
        Thread { [self] in drain() }.start()
    }

    private func drain() {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stop.load(ordering: .relaxed) {
            guard poll(&polled, nfds_t(polled.count), 500) > 0 else { continue }
            for i in polled.indices where polled[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(polled[i].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    if received[i] == 0 { clientsServed.add(1, ordering: .relaxed) }
                    received[i] += n
                } else if n == 0 {
                    polled[i].fd = -1  // the daemon closed it; poll ignores negative fds
                }
            }
        }
        stopped.signal()
    }

    /// Followers that have been sent something (their first page at least).
    var attached: Int { clientsServed.load(ordering: .relaxed) }

    /// Total bytes the followers were sent; read after `close()`.
    var bytesReceived: Int { received.reduce(0, +) }

    /// Stops reading and disconnects every follower; once.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        stop.store(true, ordering: .relaxed)
        stopped.wait()
        for fd in fds { Glibc.close(fd) }
    }
}
