import CShims
import Foundation
import StrapModel
import StrapStore
import Synchronization

/// The figures measured on the real `strapd` executable (release build, next to strap-bench):
/// resident memory and CPU with 4 simulated sensors, and start-up to READY=1 over a store of
/// 10 M samples. No peer: these are targets, not comparisons (docs/benchmarks.md).
enum DaemonFootprint {
    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        guard let strapd = strapdPath() else {
            print("  footprint, start-up: skipped, no strapd next to strap-bench (make bench builds it: swift build -c release --product strapd)")
            return []
        }
        // sun_path holds 108 bytes: sockets in a short /tmp directory; the big store on /var/tmp.
        let run = try freshRunDirectory("fp")
        defer { try? FileManager.default.removeItem(atPath: run) }
        print("  footprint, start-up: measuring \(strapd) (\(linkage(strapd)))")
        // 120 s: /proc's CPU times count 10 ms ticks, and the target (0.2 %) is 240 ms of them.
        var figures = try footprint(strapd, run: run, seconds: quick ? 10 : 120, section: section)
        figures.append(try startup(strapd, run: run, samples: quick ? 1_000_000 : 10_000_000, section: section))
        return figures
    }

    /// Whether the Swift runtime is linked in (`--static-swift-stdlib`, what `make install`
    /// ships) or loaded from the toolchain's shared libraries: it moves RSS by several MB.
    static func linkage(_ path: String) -> String {
        guard let bytes = FileManager.default.contents(atPath: path) else { return "unknown linkage" }
        let dynamic = bytes.firstRange(of: Array("libswiftCore.so".utf8)) != nil
        return dynamic ? "Swift runtime from shared libraries" : "static Swift runtime, as make install ships"
    }

    /// `make bench` builds the `--static-swift-stdlib` strapd that `make install` ships as
    /// strapd-shipped next to strap-bench; else the plain strapd there; `STRAP_BENCH_STRAPD=PATH`
    /// measures another build.
    static func strapdPath() -> String? {
        if let path = getenv("STRAP_BENCH_STRAPD").map({ String(cString: $0) }) {
            return FileManager.default.isExecutableFile(atPath: path) ? path : nil
        }
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let directory = (exe as NSString).deletingLastPathComponent
        return [directory + "/strapd-shipped", directory + "/strapd"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// An empty `/tmp/strap-bench-TAG-PID` for a daemon run's sockets and logs (sun_path holds
    /// 108 bytes, so not under a long state directory); the caller removes it.
    static func freshRunDirectory(_ tag: String) throws -> String {
        let run = "/tmp/strap-bench-\(tag)-\(getpid())"
        try? FileManager.default.removeItem(atPath: run)
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        return run
    }

    // MARK: footprint

    /// What one steady-state run of the daemon measured.
    struct SteadyState {
        var maxRSS = 0
        var finalRSS = 0
        var cpuSeconds = 0.0
        var elapsed = 0.0
        var switches = ContextSwitches()

        var cpuPerHour: Double { cpuSeconds / elapsed * 3600 }
        var switchesPerHour: Double { Double(switches.total) / elapsed * 3600 }
    }

    static func footprint(_ strapd: String, run: String, seconds: Int, section: String) throws -> [BenchFigure] {
        let idle = try steadyState(strapd, run: run, seconds: seconds, followers: 0)
        let followed = try steadyState(strapd, run: run, seconds: seconds, followers: 10)
        let waiting = try steadyState(strapd, run: run, seconds: seconds, followers: 10, types: ["workout"])
        return [
            BenchFigure(section: section, name: "daemon RSS (max), 4 simulated sensors", unit: "MB",
                        ours: Double(idle.maxRSS) / 1024, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon RSS (final), 4 simulated sensors", unit: "MB",
                        ours: Double(idle.finalRSS) / 1024, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon CPU, 4 simulated sensors", unit: "CPU s/hour",
                        ours: idle.cpuPerHour, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon CPU share, 4 simulated sensors", unit: "% of one core",
                        ours: idle.cpuPerHour / 36, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon context switches, 4 simulated sensors", unit: "per hour",
                        ours: idle.switchesPerHour, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon CPU, 4 sensors at 1 Hz, 10 anchored followers", unit: "CPU s/hour",
                        ours: followed.cpuPerHour, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon context switches, 4 sensors at 1 Hz, 10 anchored followers",
                        unit: "per hour", ours: followed.switchesPerHour, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon CPU, 4 sensors at 1 Hz, 10 idle followers (workouts only, none saved)",
                        unit: "CPU s/hour", ours: waiting.cpuPerHour, higherIsBetter: false),
            BenchFigure(section: section, name: "daemon context switches, 4 sensors at 1 Hz, 10 idle followers (workouts only, none saved)",
                        unit: "per hour", ours: waiting.switchesPerHour, higherIsBetter: false),
        ]
    }

    /// `seconds` of `strapd --simulate=4` after a short settle, with `followers` clients
    /// attached in `samples.anchored` follow mode (of `types` only, when given) that send nothing more.
    static func steadyState(_ strapd: String, run: String, seconds: Int, followers: Int, types: [String]? = nil,
                            extra: [String] = [], tag suffix: String = "") throws -> SteadyState {
        let tag = "fp\(followers)" + (types == nil ? "" : "-idle") + suffix
        let log = run + "/\(tag).log"
        let notify = try NotifyListener(path: run + "/notify-\(tag).sock")
        let socket = run + "/\(tag).sock"
        let daemon = try spawn(strapd, ["--simulate=4", "--state-dir", run + "/\(tag)-state", "--socket", socket] + extra,
                               notify: notify.path, log: log)
        defer { terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 10) != nil else { throw failure("strapd did not become READY", log: log) }
        let clients = try AnchoredFollowers(socket: socket, count: followers, types: types)
        defer { clients.close() }
        // Start-up work is the start-up figure's; the steady state starts after a short settle.
        sleep(2)
        guard clients.attached == followers else {
            throw failure("\(followers - clients.attached) of \(followers) followers got no reply", log: log)
        }
        let pid = daemon.processIdentifier
        var m = SteadyState()
        guard let cpu0 = cpuSeconds(pid), let t0 = Optional(DecodeBench.now()) else { throw BenchFailure("cannot read /proc/\(pid)/stat") }
        m.switches.sample(pid)
        for _ in 0..<seconds {
            sleep(1)
            guard let rss = rssKiB(pid) else { throw failure("strapd exited during the footprint run", log: log) }
            m.switches.sample(pid)
            m.maxRSS = max(m.maxRSS, rss)
            m.finalRSS = rss
        }
        guard let cpu1 = cpuSeconds(pid) else { throw failure("strapd exited during the footprint run", log: log) }
        m.elapsed = DecodeBench.now() - t0
        m.cpuSeconds = cpu1 - cpu0
        let with = (extra.isEmpty ? "" : " " + extra.filter { !$0.hasPrefix("--") }.joined(separator: " "))
            + (followers == 0 ? "" : " and \(followers) anchored followers" + (types.map { " of \($0.joined(separator: ","))" } ?? ""))
        if followers == 0 {
            // Where the resident memory is: anonymous (heap, stacks) vs file-backed (mapped libraries).
            let split = [("anonymous", anonKiB(pid)), ("files", rssKiB(pid).flatMap { rss in anonKiB(pid).map { rss - $0 } })]
                .compactMap { name, kib in kib.map { "\(name) \(String(format: "%.1f", Double($0) / 1024)) MB" } }
                .joined(separator: ", ")
            print("  footprint: final RSS = \(split)")
        } else {
            clients.close()
            print("  footprint: the followers were handed \(clients.itemsReceived) items in all")
        }
        print("  footprint: \(seconds) s with --simulate=4\(with): " + String(format: "RSS max %.1f MB, final %.1f MB, CPU %.2f s → %.1f s/h (%.3f %% of a core)",
                     Double(m.maxRSS) / 1024, Double(m.finalRSS) / 1024, m.cpuSeconds, m.cpuPerHour, m.cpuPerHour / 36))
        print("  footprint: \(seconds) s with --simulate=4\(with): " + String(format: "%d context switches (%d voluntary, %d involuntary) in %d threads → %.0f/h, %.1f/s",
                     m.switches.total, m.switches.voluntary, m.switches.involuntary, m.switches.threads,
                     m.switchesPerHour, m.switchesPerHour / 3600))
        return m
    }

    /// `/proc/PID/stat` utime + stime (fields 14 and 15, after the parenthesised name), in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The resident set from /proc/PID/smaps_rollup, which walks the page tables. Not VmRSS:
    /// Linux before 6.2 folds a thread's page counts into it only every 64 faults of that
    /// thread, while strapd's hand-backs (CodePages, malloc_trim) leave it at once, so VmRSS
    /// undercounts strapd (docs/benchmarks.md, "Instructions, the floor …").
    static func rssKiB(_ pid: Int32) -> Int? { rollupKiB(pid, "Rss:") }

    /// Of it, anonymous memory (heap, stacks).
    static func anonKiB(_ pid: Int32) -> Int? { rollupKiB(pid, "Anonymous:") }

    static func rollupKiB(_ pid: Int32, _ key: String) -> Int? {
        guard let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8),
              let line = rollup.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// A `kB` line of /proc/PID/status.
    static func statusKiB(_ pid: Int32, _ key: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    // MARK: start-up

    static func startup(_ strapd: String, run: String, samples: Int, section: String) throws -> BenchFigure {
        var template = Array("/var/tmp/strap-bench-startup-XXXXXX".utf8CString)
        let root = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let t = DecodeBench.now()
        let store = try Store.open(StoreConfig(directory: root + "/state/store", sync: .none))
        var i = 0
        while i < samples {
            let n = min(100_000, samples - i)
            try store.appendBatch(StoreBench.heartRate(from: i, count: n))
            i += n
        }
        try store.sync()
        store.close()
        print(String(format: "  start-up: wrote %d samples in %.1f s (%.0f MB on disk)", samples, DecodeBench.now() - t,
                     Double(directoryBytes(root + "/state/store")) / 1e6))
        var best = Double.infinity
        var all: [String] = []
        for attempt in 1...3 {
            let notify = try NotifyListener(path: run + "/notify-su\(attempt).sock")
            let start = monotonicNanos()
            let daemon = try spawn(strapd, ["--simulate=4", "--state-dir", root + "/state", "--socket", run + "/su.sock"],
                                   notify: notify.path, log: run + "/su.log")
            let ready = notify.waitReady(seconds: 30)
            terminate(daemon)
            notify.close()
            guard let ready else { throw failure("strapd did not become READY over \(samples) samples", log: run + "/su.log") }
            let ms = Double(ready - start) / 1e6
            best = min(best, ms)
            all.append(String(format: "%.1f", ms))
        }
        print("  start-up to READY over \(samples) samples: \(all.joined(separator: ", ")) ms (best of 3 is the figure)")
        let count = samples >= 1_000_000 && samples % 1_000_000 == 0 ? "\(samples / 1_000_000) M" : "\(samples)"
        return BenchFigure(section: section, name: "start-up to READY, \(count) stored samples", unit: "ms",
                           ours: best, higherIsBetter: false)
    }

    static func directoryBytes(_ dir: String) -> Int {
        let names = FileManager.default.subpaths(atPath: dir) ?? []
        return names.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + $1)[.size] as? Int) ?? 0) }
    }

    // MARK: process

    static func spawn(_ strapd: String, _ args: [String], notify: String, log: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: strapd)
        // The socket group defaults to `strapd`, which need not exist here.
        p.arguments = args + ["--set", "daemon.socket_group="]
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notify
        for k in ["WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"] { env[k] = nil }
        p.environment = env
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = FileHandle(forWritingAtPath: log)
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        return p
    }

    /// SIGTERM, and SIGKILL after 10 s: a wedged daemon must not hang the benchmark.
    static func terminate(_ p: Process) {
        guard p.isRunning else { return }
        kill(p.processIdentifier, SIGTERM)
        let deadline = monotonicNanos() + 10_000_000_000
        while p.isRunning, monotonicNanos() < deadline { usleep(10_000) }
        if p.isRunning {
            print("  strapd \(p.processIdentifier) ignored SIGTERM for 10 s: killed")
            kill(p.processIdentifier, SIGKILL)
        }
        p.waitUntilExit()
    }

    static func failure(_ what: String, log: String) -> BenchFailure {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return BenchFailure(what + ": " + text.split(separator: "\n").suffix(3).joined(separator: " | "))
    }
}

/// The datagram socket systemd would listen on (NOTIFY_SOCKET): tells when READY=1 arrived.
/// It keeps reading after READY, as systemd does: strapd sends STATUS= every 2 s, and once
/// an unread datagram socket's queue is full (net.unix.max_dgram_qlen, 10 by default)
/// sd_notify blocks the daemon's lifecycle queue, SIGTERM handling included.
final class NotifyListener: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let readyAt = Atomic<UInt64>(0)
    private let stop = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, cshims_unix_bind(fd, path) == 0 else { throw BenchFailure("cannot bind \(path): errno \(errno)") }
        var tv = timeval(tv_sec: 0, tv_usec: 50_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stop.load(ordering: .relaxed) {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                let now = monotonicNanos()
                if n > 0, readyAt.load(ordering: .relaxed) == 0,
                   String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").contains("READY=1") {
                    readyAt.store(now, ordering: .releasing)
                }
            }
            stopped.signal()
        }.start()
    }

    /// Joins the reading thread; call once the daemon has exited.
    func close() {
        stop.store(true, ordering: .relaxed)
        stopped.wait()
        Glibc.close(fd)
        unlink(path)
    }

    /// The monotonic time (ns) at which a datagram containing READY=1 arrived, or nil.
    func waitReady(seconds: Double) -> UInt64? {
        let deadline = monotonicNanos() + UInt64(seconds * 1e9)
        while monotonicNanos() < deadline {
            let t = readyAt.load(ordering: .acquiring)
            if t != 0 { return t }
            usleep(1_000)
        }
        return nil
    }
}
