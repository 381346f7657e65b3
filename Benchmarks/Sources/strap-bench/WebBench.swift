import Foundation

/// `strap-bench web`: the real strapd-web in front of the real `strapd --simulate=4` (issue 34,
/// docs/benchmarks.md): Server-Sent Events fan-out latency over strapd's own live latency, the
/// time a sample takes to reach a dashboard's stream, strapd-web's memory and CPU with one
/// dashboard open, and each page's weight and first contentful paint in Chromium.
enum WebBench: BenchSection {
    static let name = "web"
    static let summary = "strapd-web: SSE fan-out latency (100 clients), idle RSS/CPU, page weight, first contentful paint"

    static func run(quick: Bool) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  web: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there; STRAP_BENCH_STRAPD=PATH)")
            return []
        }
        guard let web = strapdWebPath() else {
            print("  web: skipped, no strapd-web next to strap-bench (make bench puts strapd-web-shipped there; STRAP_BENCH_STRAPD_WEB=PATH)")
            return []
        }
        print("  web: strapd \(strapd) (\(DaemonFootprint.linkage(strapd)))")
        print("  web: strapd-web \(web) (\(DaemonFootprint.linkage(web)))")
        var figures: [BenchFigure] = []
        do {
            let rig = try WebRig(strapd: strapd, web: web, tag: "web-idle")
            defer { rig.stop() }
            figures += try WebIdle.figures(rig, seconds: quick ? 10 : 30, section: name)
            figures += try WebPages.figures(rig, section: name, quick: quick)
            figures += try WebDOM.figures(rig, seconds: quick ? 10 : 30, section: name)
        }
        do {
            let rig = try WebRig(strapd: strapd, web: web, tag: "web-fan")
            defer { rig.stop() }
            figures += try WebFanOut.figures(rig, fanOut: 100, seconds: quick ? 15 : 60, section: name)
        }
        return figures
    }

    /// `STRAP_BENCH_STRAPD_WEB=PATH`, else strapd-web-shipped (the `--static-swift-stdlib` one
    /// `make bench` builds, as `make install` ships it) or strapd-web next to strap-bench.
    static func strapdWebPath() -> String? {
        if let path = getenv("STRAP_BENCH_STRAPD_WEB").map({ String(cString: $0) }) {
            return FileManager.default.isExecutableFile(atPath: path) ? path : nil
        }
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let directory = (exe as NSString).deletingLastPathComponent
        return [directory + "/strapd-web-shipped", directory + "/strapd-web"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// `strapd --simulate=4` and strapd-web in front of it on 127.0.0.1:0, each with its state in
/// a fresh run directory; strapd-web's port and token come from the URL file it writes.
final class WebRig {
    let run: String
    let daemon: Process
    let web: Process
    let notify: NotifyListener
    let socket: String
    let port: UInt16
    let token: String
    let webLog: String

    init(strapd: String, web webPath: String, tag: String) throws {
        run = try DaemonFootprint.freshRunDirectory(tag)
        socket = run + "/strapd.sock"
        let log = run + "/strapd.log"
        notify = try NotifyListener(path: run + "/notify.sock")
        daemon = try DaemonFootprint.spawn(strapd, ["--simulate=4", "--state-dir", run + "/state", "--socket", socket],
                                           notify: notify.path, log: log)
        guard notify.waitReady(seconds: 10) != nil else {
            DaemonFootprint.terminate(daemon)
            notify.close()
            throw DaemonFootprint.failure("strapd did not become READY", log: log)
        }
        let webState = run + "/web-state"
        try FileManager.default.createDirectory(atPath: webState, withIntermediateDirectories: true)
        webLog = run + "/web.log"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: webPath)
        p.arguments = ["--listen", "127.0.0.1:0", "--socket", socket, "--state-dir", webState]
        var env = ProcessInfo.processInfo.environment
        for k in ["LISTEN_FDS", "LISTEN_PID", "STATE_DIRECTORY", "NOTIFY_SOCKET"] { env[k] = nil }
        p.environment = env
        _ = FileManager.default.createFile(atPath: webLog, contents: nil)
        let handle = FileHandle(forWritingAtPath: webLog)
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        web = p
        // strapd-web writes the URL file last, once it listens (docs/web.md).
        let urlFile = webState + "/url"
        let deadline = monotonicNanos() + 30_000_000_000
        var url: URLComponents?
        while url == nil, monotonicNanos() < deadline {
            if let text = try? String(contentsOfFile: urlFile, encoding: .utf8), text.hasSuffix("\n") {
                url = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines))
            } else {
                usleep(20_000)
            }
        }
        guard let url, let p = url.port, let t = url.queryItems?.first(where: { $0.name == "token" })?.value else {
            DaemonFootprint.terminate(web)
            DaemonFootprint.terminate(daemon)
            notify.close()
            throw DaemonFootprint.failure("strapd-web wrote no URL file within 30 s", log: webLog)
        }
        port = UInt16(p)
        token = t
    }

    /// The session cookie a browser gets: the token URL answers 303 with Set-Cookie
    /// (WebSecurity), and every later request carries the cookie instead of the token.
    func sessionCookie() throws -> String {
        let answer = try WebHTTP.get(port: port, path: "/?token=\(token)")
        guard answer.status == 303, let set = answer.header("Set-Cookie"),
              let pair = set.split(separator: ";").first else {
            throw BenchFailure("the token URL answered \(answer.status) without a session cookie")
        }
        return String(pair)
    }

    var tokenURL: String { "http://127.0.0.1:\(port)/?token=\(token)" }

    func stop() {
        DaemonFootprint.terminate(web)
        DaemonFootprint.terminate(daemon)
        notify.close()
        try? FileManager.default.removeItem(atPath: run)
    }
}

/// strapd-web with one dashboard's stream open, nothing else asked of it: resident memory
/// (VmHWM, VmRSS of /proc/PID/status, and the page-table walk of smaps_rollup) and CPU.
enum WebIdle {
    static func figures(_ rig: WebRig, seconds: Int, section: String) throws -> [BenchFigure] {
        let cookie = try rig.sessionCookie()
        let client = try SSEClient(port: rig.port, cookie: cookie, record: false)
        defer { client.close() }
        // Start-up and the first page's work are not the idle state.
        sleep(3)
        let pid = rig.web.processIdentifier
        guard let cpu0 = DaemonFootprint.cpuSeconds(pid) else { throw DaemonFootprint.failure("strapd-web exited", log: rig.webLog) }
        let run0 = runNanos(pid)
        let t0 = DecodeBench.now()
        var maxRollup = 0
        for _ in 0..<seconds {
            sleep(1)
            guard let rss = DaemonFootprint.rssKiB(pid) else { throw DaemonFootprint.failure("strapd-web exited", log: rig.webLog) }
            maxRollup = max(maxRollup, rss)
        }
        guard let cpu1 = DaemonFootprint.cpuSeconds(pid), let hwm = DaemonFootprint.statusKiB(pid, "VmHWM:"),
              let rss = DaemonFootprint.statusKiB(pid, "VmRSS:") else { throw DaemonFootprint.failure("strapd-web exited", log: rig.webLog) }
        let elapsed = DecodeBench.now() - t0
        let run1 = runNanos(pid)
        // Heap and stacks against mapped files (the binary, libmicrohttpd, libc): what a smaller
        // footprint would have to cut.
        if let anon = DaemonFootprint.anonKiB(pid), let all = DaemonFootprint.rssKiB(pid) {
            print(String(format: "  web idle: smaps_rollup Rss %.1f MB = anonymous %.1f MB + files %.1f MB; %d threads",
                         Double(all) / 1024, Double(anon) / 1024, Double(all - anon) / 1024,
                         threads(pid) ?? -1))
        }
        // /proc/PID/stat counts in 10 ms ticks (0.033 % of a core over 30 s); the threads'
        // scheduler run times are in ns, so they are the figure (a thread that ended within the
        // window would be missing from them: strapd-web's threads live as long as the stream).
        let tickShare = (cpu1 - cpu0) / elapsed * 100
        let share = run1 > run0 ? Double(run1 - run0) / 1e9 / elapsed * 100 : tickShare
        let events = client.eventCount
        print(String(format: "  web idle: %d s, one dashboard stream (%d events): VmHWM %.1f MB, VmRSS %.1f MB, smaps_rollup Rss max %.1f MB, CPU %.1f ms by the threads' run time (%.3f %% of a core; ticks: %.2f s, %.3f %%), %.0f µs per event",
                     seconds, events, Double(hwm) / 1024, Double(rss) / 1024, Double(maxRollup) / 1024, Double(run1 - run0) / 1e6, share,
                     cpu1 - cpu0, tickShare, events > 0 ? Double(run1 - run0) / 1e3 / Double(events) : .nan))
        guard events > 0 else { throw DaemonFootprint.failure("the dashboard stream got no event in \(seconds) s", log: rig.webLog) }
        return [
            BenchFigure(section: section, name: "strapd-web VmHWM, one dashboard stream", unit: "MB", ours: Double(hwm) / 1024, higherIsBetter: false),
            BenchFigure(section: section, name: "strapd-web VmRSS, one dashboard stream", unit: "MB", ours: Double(rss) / 1024, higherIsBetter: false),
            BenchFigure(section: section, name: "strapd-web CPU share, one dashboard stream", unit: "% of one core", ours: share, higherIsBetter: false),
        ]
    }

    /// The run time of the process's live threads in ns (the first field of each
    /// /proc/PID/task/TID/schedstat), 0 when unreadable.
    static func runNanos(_ pid: Int32) -> UInt64 {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return 0 }
        return tasks.reduce(0) { sum, tid in
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8),
                  let first = text.split(separator: " ").first, let ns = UInt64(first) else { return sum }
            return sum + ns
        }
    }

    /// `Threads:` of /proc/PID/status (tab-separated, no unit, unlike the kB lines).
    static func threads(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }) else { return nil }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
    }
}
