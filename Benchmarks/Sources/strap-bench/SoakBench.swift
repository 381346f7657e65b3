import CShims
import Foundation
import StrapKit
import Synchronization

/// `strap-bench soak` (issue 16): the shipped strapd with ten simulated sensors at many times
/// real time (`--simulate=10 --simulate-speed S`), two live subscribers and two anchored
/// followers attached from the start, until 10 M notifications went through the whole
/// daemon (1 M with --quick). At 1 M and at 10 M (100 k and 1 M with --quick): the RSS (page tables) and the
/// number of open descriptors. At the end: the followers saw every stored item exactly once,
/// anchors 1…N without a gap or a repeat, and the store holds every decoded sample.
enum SoakBench: BenchSection {
    static let name = "soak"
    static let summary = "10 M notifications through the daemon with subscribers and followers: RSS, fds, exactly once"

    static func run(quick: Bool) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  soak: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        let (first, last) = quick ? (100_000, 1_000_000) : (1_000_000, 10_000_000)
        let speed = ProcessInfo.processInfo.environment["STRAP_BENCH_SOAK_SPEED"].flatMap(Double.init) ?? 5000
        let run = try DaemonFootprint.freshRunDirectory("soak")
        defer { try? FileManager.default.removeItem(atPath: run) }
        let notify = try NotifyListener(path: run + "/notify.sock")
        let socket = run + "/soak.sock", log = run + "/soak.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--simulate=10", "--simulate-speed", String(speed), "--state-dir", run + "/state",
                                                        "--socket", socket], notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 60) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let pid = daemon.processIdentifier
        let readers = try (0..<2).map { _ in try StreamReader(socket: socket, request: #"{"id":1,"op":"live.subscribe"}"#, anchors: false) }
            + (0..<2).map { _ in try StreamReader(socket: socket, request: #"{"id":1,"op":"samples.anchored","anchor":0,"limit":1000,"follow":true}"#, anchors: true) }
        let status = try StrapStore.connected(socket)
        let t0 = DecodeBench.now()
        var marks: [(events: Int, rss: Int, anon: Int, fds: Int)] = []
        var events = 0, lastPrint = 0.0
        while marks.count < 2 {
            usleep(200_000)
            let s = try status.requestNow("status")
            events = s.object("pipeline")?.int("events") ?? 0
            let target = marks.isEmpty ? first : last
            if events >= target {
                marks.append((events, DaemonFootprint.rssKiB(pid) ?? -1, DaemonFootprint.anonKiB(pid) ?? -1, openDescriptors(pid)))
                print(String(format: "  soak: %d notifications after %.0f s: RSS %.2f MB (anonymous %.2f MB), %d fds", events, DecodeBench.now() - t0,
                             Double(marks.last!.rss) / 1024, Double(marks.last!.anon) / 1024, marks.last!.fds))
            }
            if DecodeBench.now() - lastPrint > 30 {
                lastPrint = DecodeBench.now()
                print(String(format: "  soak: %.0f s: %d notifications, RSS %.2f MB, load %@", lastPrint - t0, events,
                             Double(DaemonFootprint.rssKiB(pid) ?? 0) / 1024, loadAverage()))
            }
            if !daemon.isRunning { throw DaemonFootprint.failure("strapd stopped", log: log) }
        }
        let seconds = DecodeBench.now() - t0
        // The sensors are disconnected (the simulator honours devices.disconnect), so the store
        // stops growing and the followers can be checked against its final end.
        let devices = try ClientBench.blocking { [status] in try await status.deviceAddresses() }
        for a in devices { _ = try? ClientBench.blocking { [status] in try await status.deviceCommand(.disconnect, address: a) } }
        usleep(2_000_000)
        let end = try status.requestNow("status")
        let pipeline = end.object("pipeline") ?? [:]
        let latest = end.object("store")?.int("latestAnchor") ?? 0
        let caughtUp = DecodeBench.now()
        for r in readers where r.anchors { r.wait(until: latest, seconds: 300) }
        print(String(format: "  soak: followers caught up %.0f s after the sensors stopped; RSS then %.2f MB (anonymous %.2f MB), %d fds",
                     DecodeBench.now() - caughtUp, Double(DaemonFootprint.rssKiB(pid) ?? 0) / 1024,
                     Double(DaemonFootprint.anonKiB(pid) ?? 0) / 1024, openDescriptors(pid)))
        let decoded = pipeline.int("samples") ?? -1, dropped = pipeline.int("dropped") ?? -1
        var exactlyOnce = true
        for (i, r) in readers.enumerated() where r.anchors {
            let v = r.verdict(upTo: latest)
            print("  soak: follower \(i - 1): \(v.seen) items (the store had \(latest) when the run ended): \(v.repeats) repeated, \(v.gaps) missing")
            exactlyOnce = exactlyOnce && v.repeats == 0 && v.gaps == 0
        }
        for r in readers where !r.anchors { print("  soak: live subscriber: \(r.lines) events (dropped notices: \(r.droppedNotices))") }
        print(String(format: "  soak: %d notifications in %.0f s (%.0f/s); decoded %d samples, dropped at the door %d, stored up to anchor %d",
                     events, seconds, Double(events) / seconds, decoded, dropped, latest))
        for r in readers { r.close() }
        let growth = Double(marks[1].rss - marks[0].rss) / 1024
        return [
            BenchFigure(section: name, name: "RSS after \(marks[0].events / 1000) k notifications", unit: "MB", ours: Double(marks[0].rss) / 1024, higherIsBetter: false),
            BenchFigure(section: name, name: "RSS after \(marks[1].events / 1000) k notifications", unit: "MB", ours: Double(marks[1].rss) / 1024, higherIsBetter: false),
            BenchFigure(section: name, name: "RSS growth between them (target ≤ 2 MB)", unit: "MB", ours: growth, higherIsBetter: false),
            BenchFigure(section: name, name: "RssAnon (heap) growth between them", unit: "MB", ours: Double(marks[1].anon - marks[0].anon) / 1024,
                        higherIsBetter: false),
            BenchFigure(section: name, name: "open descriptors at the first and the second mark (equal = flat)", unit: "fds",
                        ours: Double(marks[1].fds - marks[0].fds), higherIsBetter: false),
            BenchFigure(section: name, name: "followers saw every stored item exactly once (1 = yes)", unit: "", ours: exactlyOnce ? 1 : 0, higherIsBetter: true),
        ]
    }

    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }
}

/// One stream connection read on its own thread, lines scanned in place (no JSON parsing:
/// the readers must not be what limits the run). Followers note each item's anchor.
final class StreamReader: @unchecked Sendable {
    let anchors: Bool
    private let fd: Int32
    private let state = Mutex<(lines: Int, dropped: Int, highest: Int, seen: Int, repeats: Int)>((0, 0, 0, 0, 0))
    private let done = DispatchSemaphore(value: 0)

    init(socket path: String, request: String, anchors: Bool) throws {
        self.anchors = anchors
        fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, cshims_unix_connect(fd, path) == 0 else { throw BenchFailure("cannot connect to \(path)") }
        let line = Array((request + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Thread { [self] in loop(); done.signal() }.start()
    }

    var lines: Int { state.withLock { $0.lines } }
    var droppedNotices: Int { state.withLock { $0.dropped } }

    func wait(until anchor: Int, seconds: Double) {
        let deadline = DecodeBench.now() + seconds
        while state.withLock({ $0.highest }) < anchor, DecodeBench.now() < deadline { usleep(100_000) }
    }

    /// Items seen, repeats, and anchors missing up to the highest seen (the store has no
    /// deletions, so its anchors are 1…N without a hole), and whether it reached `upTo`.
    func verdict(upTo: Int) -> (seen: Int, repeats: Int, gaps: Int) {
        state.withLock { s in (s.seen, s.repeats, s.highest < upTo ? upTo - s.highest : s.highest - (s.seen - s.repeats)) }
    }

    func close() { shutdown(fd, Int32(SHUT_RDWR)); done.wait(); Glibc.close(fd) }

    private static let anchorKey = Array(#""anchor":"#.utf8)
    private static let dropped = Array(#""event":"dropped""#.utf8)
    private static let okReply = Array(#""ok":true"#.utf8)

    private func loop() {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var filled = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, $0.count - filled, 0) }
            if n <= 0 { return }
            filled += n
            var start = 0
            var (lines, dropped, highest, seen, repeats) = (0, 0, 0, 0, 0)
            buffer.withUnsafeBufferPointer { b in
                while let nl = b[start..<filled].firstIndex(of: 0x0A) {
                    lines += 1
                    let line = b[start..<nl]
                    if anchors {
                        var found = Self.anchors(in: line)
                        // The first page's reply ends with the page's own anchor, not an item's.
                        if Self.contains(line, Self.okReply) { found.removeLast() }
                        for a in found {
                            if a <= highest { repeats += 1 } else { highest = a }
                            seen += 1
                        }
                    } else if Self.contains(line, Self.dropped) {
                        dropped += 1
                    }
                    start = nl + 1
                }
            }
            state.withLock { s in
                s.lines += lines; s.dropped += dropped; s.seen += seen; s.repeats += repeats
                s.highest = max(s.highest, highest)
            }
            if start > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    let base = raw.baseAddress!
                    memmove(base, base + start, filled - start)
                }
                filled -= start
            }
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
        }
    }

    /// Every `"anchor":N` of a line, in order.
    private static func anchors(in line: Slice<UnsafeBufferPointer<UInt8>>) -> [Int] {
        var i = line.startIndex, found: [Int] = []
        while i + anchorKey.count < line.endIndex {
            if line[i] == anchorKey[0], line[i..<(i + anchorKey.count)].elementsEqual(anchorKey) {
                var j = i + anchorKey.count, v = 0
                while j < line.endIndex, line[j] >= 0x30, line[j] <= 0x39 { v = v * 10 + Int(line[j] - 0x30); j += 1 }
                found.append(v)
                i = j
            } else { i += 1 }
        }
        return found
    }

    private static func contains(_ line: Slice<UnsafeBufferPointer<UInt8>>, _ needle: [UInt8]) -> Bool {
        var i = line.startIndex
        while i + needle.count <= line.endIndex {
            if line[i] == needle[0], line[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}
