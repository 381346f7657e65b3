import Foundation
import StrapKit
import StrapModel
import Synchronization

/// The shipped strapd's resident memory while it streams a 24 h FIT export: spawned over the
/// state directory holding the workout (`--simulate=4`, as the footprint figures), its resident
/// set (page tables) sampled every 10 ms from /proc before and during `workout.export`, read
/// through StrapKit's `exportWorkout`, which decodes and checks every chunk as strapctl does.
/// Three exports in a row on the same daemon; the first is the figure. Every 20 ms the sampler
/// also sums, from /proc/PID/smaps, the resident pages of the store's files mapped into the
/// daemon: how much of the resident set is store pages.
enum ExportDaemonMemory {
    static func figures(section: String, state: String, workout: Workout, hours: Int) throws -> [BenchFigure] {
        guard let strapd = DaemonFootprint.strapdPath() else {
            print("  daemon: skipped, no strapd next to strap-bench (make bench puts strapd-shipped there)")
            return []
        }
        let run = try DaemonFootprint.freshRunDirectory("ex")
        defer { try? FileManager.default.removeItem(atPath: run) }
        print("  export daemon: measuring \(strapd) (\(DaemonFootprint.linkage(strapd)))")
        let notify = try NotifyListener(path: run + "/notify.sock")
        let socket = run + "/ex.sock", log = run + "/ex.log"
        let daemon = try DaemonFootprint.spawn(strapd, ["--simulate=4", "--state-dir", state, "--socket", socket],
                                               notify: notify.path, log: log)
        defer { DaemonFootprint.terminate(daemon); notify.close() }
        guard notify.waitReady(seconds: 30) != nil else { throw DaemonFootprint.failure("strapd did not become READY", log: log) }
        let pid = daemon.processIdentifier
        sleep(2)
        let client = try StrapStore.connected(socket)
        var increases: [Double] = [], heap: [Double] = []
        for attempt in 1...3 {
            // A second of the idle daemon first: the baseline and its own wobble.
            let sampler = RSSSampler(pid: pid, mappedUnder: state)
            usleep(1_000_000)
            let marked = sampler.mark()
            let t0 = DecodeBench.now()
            let uuid = workout.uuid.uuidString
            let (announced, received, chunks) = try ClientBench.blocking { [client] in
                let file = try await client.exportWorkout(uuid, format: .fit)
                var received = 0, chunks = 0
                for try await chunk in file.chunks {
                    received += chunk.count
                    chunks += 1
                }
                return (file.byteCount, received, chunks)
            }
            let seconds = DecodeBench.now() - t0
            let r = sampler.stop(after: marked)
            guard received == announced else { throw BenchFailure("export announced \(announced) bytes, delivered \(received)") }
            let increase = Double(r.maxDuring.rss - r.before.rss) / 1024
            increases.append(increase)
            heap.append(Double(r.maxAnonDuring - r.before.anon) / 1024)
            print(String(format: "  export daemon: export %d: %d bytes in %d chunks in %.0f ms; RSS %.2f MB before (%.2f–%.2f MB in the "
                         + "second before), max %.2f MB during (%d readings) → +%.2f MB (at that peak: anon %+.2f, file %+.2f; "
                         + "anonymous's own peak %+.2f MB); load %@",
                         attempt, received, chunks, seconds * 1000, Double(r.before.rss) / 1024, Double(r.idleMin) / 1024,
                         Double(r.idleMax) / 1024, Double(r.maxDuring.rss) / 1024, r.readings, increase,
                         Double(r.maxDuring.anon - r.before.anon) / 1024, Double(r.maxDuring.file - r.before.file) / 1024,
                         heap.last!, loadAverage()))
            print(String(format: "  export daemon: export %d: store files mapped and resident: %.2f MB before, at most %.2f MB during",
                         attempt, Double(r.storeMappedBefore) / 1024, Double(r.storeMappedMax) / 1024))
        }
        return [
            BenchFigure(section: section, name: "daemon RSS increase streaming a \(hours) h FIT export (first export)", unit: "MB",
                        ours: increases[0], higherIsBetter: false),
            BenchFigure(section: section, name: "daemon RSS increase streaming a \(hours) h FIT export (later exports, max)", unit: "MB",
                        ours: increases.dropFirst().max() ?? increases[0], higherIsBetter: false),
            BenchFigure(section: section, name: "daemon RssAnon (heap) increase streaming a \(hours) h FIT export (first export)",
                        unit: "MB", ours: heap[0], higherIsBetter: false),
        ]
    }
}

/// The resident set (and its anonymous/file split) of a process every 10 ms on a thread of its own.
final class RSSSampler: @unchecked Sendable {
    struct Reading { var rss = 0, anon = 0, file = 0 }

    private let pid: Int32
    private let mappedUnder: String
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Written by the sampling thread until `stop` has joined it.
    private var readings: [Reading] = []
    /// Resident KiB of mapped files under `mappedUnder`, with the index of the reading it followed.
    private var mapped: [(after: Int, kib: Int)] = []
    private let count = Atomic<Int>(0)

    init(pid: Int32, mappedUnder: String) {
        self.pid = pid
        self.mappedUnder = mappedUnder
        Thread { [self] in
            var n = 0
            while !stopFlag.load(ordering: .relaxed) {
                if let r = Self.read(pid) { readings.append(r); count.store(readings.count, ordering: .releasing) }
                if n % 2 == 0 { mapped.append((readings.count, Self.mappedKiB(pid, under: mappedUnder))) }
                n += 1
                usleep(10_000)
            }
            done.signal()
        }.start()
    }

    /// The `Rss:` of every mapping of a file under `directory` (/proc/PID/smaps).
    static func mappedKiB(_ pid: Int32, under directory: String) -> Int {
        // Read to the end with read(2): Foundation's file reading stops at the first 4 KiB of a
        // procfs file (whose size reads as 0).
        let fd = open("/proc/\(pid)/smaps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        let smaps = String(decoding: bytes, as: UTF8.self)
        var total = 0, inside = false
        for line in smaps.split(separator: "\n") {
            let range = line.prefix { $0 != " " }
            if range.contains("-"), range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inside = line.contains(directory)   // a mapping's header line: "start-end perms offset dev inode path"
            } else if inside && line.hasPrefix("Rss:") {
                total += line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? 0
            }
        }
        return total
    }

    /// How many readings were taken so far: those are "before".
    func mark() -> Int { count.load(ordering: .acquiring) }

    struct Result {
        var before: Reading
        var idleMin: Int
        var idleMax: Int
        var maxDuring: Reading
        var maxAnonDuring: Int
        var readings: Int
        var storeMappedBefore: Int
        var storeMappedMax: Int
    }

    func stop(after marked: Int) -> Result {
        stopFlag.store(true, ordering: .relaxed)
        done.wait()
        let idle = readings[..<marked], during = readings[marked...]
        let before = idle.last ?? Reading()
        let peak = during.max { $0.rss < $1.rss } ?? before
        return Result(before: before, idleMin: idle.map(\.rss).min() ?? 0, idleMax: idle.map(\.rss).max() ?? 0,
                      maxDuring: peak, maxAnonDuring: during.map(\.anon).max() ?? before.anon, readings: during.count,
                      storeMappedBefore: mapped.last { $0.after <= marked }?.kib ?? 0,
                      storeMappedMax: mapped.filter { $0.after > marked }.map(\.kib).max() ?? 0)
    }

    /// From /proc/PID/smaps_rollup (page tables), not VmRSS (DaemonFootprint.rssKiB says why).
    static func read(_ pid: Int32) -> Reading? {
        guard let rss = DaemonFootprint.rssKiB(pid), let anon = DaemonFootprint.anonKiB(pid) else { return nil }
        return Reading(rss: rss, anon: anon, file: rss - anon)
    }
}
