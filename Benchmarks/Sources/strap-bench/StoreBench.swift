import Foundation
import Glibc
import StrapModel
import StrapStore

/// `strap-bench store` (docs/product.md §8, issue 3): strapd's store against SQLite on the same
/// samples.
enum StoreBench: BenchSection {
    static let name = "store"
    static let summary = "append, anchored catch-up, hourly statistics over a year, bytes/sample, open time vs SQLite"

    static let device = Device(id: "bench-strap", address: "00:11:22:33:44:55", name: "Bench H10",
                               manufacturer: "Polar", model: "H10")
    static let t0: Millis = 1_735_689_600_000  // 2025-01-01T00:00:00Z

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// 1 Hz heart rate, a slow drift plus noise, as a strap produces.
    static func heartRate(from index: Int, count: Int) -> [Sample] {
        (index..<index + count).map { i in
            let v = 70 + 25 * sin(Double(i) / 3000) + Double((i &* 2_654_435_761) % 7)
            return Sample(type: .heartRate, value: v.rounded(), start: t0 + Millis(i) * 1000, device: device)
        }
    }

    static func directoryBytes(_ dir: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + $1)[.size] as? Int) ?? 0) }
    }

    static func log(_ s: String) {
        let line = Array(("store: " + s + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    static func run(quick: Bool) throws -> [BenchFigure] {
        var template = Array("/var/tmp/strap-bench-store-XXXXXX".utf8CString)
        let root = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var figures: [BenchFigure] = []
        let appendCount = quick ? 200_000 : 5_000_000
        let catchUp = quick ? 200_000 : 1_000_000
        let yearCount = quick ? 7 * 86_400 : 365 * 86_400
        let batch = 1000

        // 1. Durable append at the default sync interval (100 ms), batches of 1000.
        let storeDir = root + "/append"
        var cfg = StoreConfig(directory: storeDir, sync: .interval(0.1))
        var store: Store? = try Store.open(cfg)
        // Sample generation is outside the timed region; each batch is timed, then the final sync.
        var t = now()
        var i = 0
        var spent = 0.0
        while i < appendCount {
            let b = heartRate(from: i, count: batch)
            t = now()
            try store!.appendBatch(b)
            spent += now() - t
            i += batch
        }
        t = now()
        try store!.sync()
        spent += now() - t
        let ours = Double(appendCount) / spent
        let peer = try SQLitePeer(path: root + "/append.sqlite")
        i = 0
        spent = 0
        while i < appendCount {
            let b = heartRate(from: i, count: batch)
            t = now()
            try peer.insert(b, firstAnchor: Int64(i + 1))
            spent += now() - t
            i += batch
        }
        let theirs = Double(appendCount) / spent
        figures.append(BenchFigure(section: name, name: "durable append (1 Hz HR, batches of 1000, sync 100 ms)",
                                   unit: "samples/s", ours: ours, peer: "sqlite", peerValue: theirs, higherIsBetter: true))
        log("append \(appendCount): ours \(Int(ours))/s, sqlite \(Int(theirs))/s")

        // 2. Bytes on disk, indexes included: this batched store, and one fed a sample at a time
        //    (the daemon's pattern at 1 Hz), both sealed with their index files.
        try store!.seal()
        try peer.checkpoint()
        let oursBatched = Double(directoryBytes(storeDir)) / Double(appendCount)
        let theirsBytes = Double(peer.bytesOnDisk()) / Double(appendCount)
        figures.append(BenchFigure(section: name, name: "bytes on disk per sample (batched appends)", unit: "bytes",
                                   ours: oursBatched, peer: "sqlite", peerValue: theirsBytes, higherIsBetter: false))
        let singleDir = root + "/single"
        let singleCount = quick ? 20_000 : 200_000
        do {
            var scfg = StoreConfig(directory: singleDir, sync: .none)
            scfg.segmentMaxItems = 86_400
            let single = try Store.open(scfg)
            for s in heartRate(from: 0, count: singleCount) { try single.appendBatch([s]) }
            try single.seal()
            single.close()
        }
        let oursSingle = Double(directoryBytes(singleDir)) / Double(singleCount)
        figures.append(BenchFigure(section: name, name: "bytes on disk per sample (1 Hz, one append per sample)",
                                   unit: "bytes", ours: oursSingle, peer: "sqlite", peerValue: theirsBytes, higherIsBetter: false))
        log("bytes/sample: batched \(oursBatched), single \(oursSingle), sqlite \(theirsBytes)")

        // 3. Anchored catch-up of 1 M samples, pages of 10 000.
        cfg.sync = .none
        store = nil
        store = try Store.open(cfg)
        var bestOurs = 0.0, bestTheirs = 0.0
        for _ in 0..<3 {
            t = now()
            var anchor: UInt64 = 0, n = 0
            while n < catchUp {
                let r = try store!.anchored(anchor: anchor, limit: min(10_000, catchUp - n))
                n += r.added.count
                anchor = r.anchor
            }
            bestOurs = max(bestOurs, Double(n) / (now() - t))
            t = now()
            let m = try peer.catchUp(total: catchUp, page: 10_000, device: device)
            bestTheirs = max(bestTheirs, Double(m) / (now() - t))
        }
        figures.append(BenchFigure(section: name, name: "anchored catch-up of \(catchUp / 1000)k samples (best of 3)",
                                   unit: "samples/s", ours: bestOurs, peer: "sqlite", peerValue: bestTheirs, higherIsBetter: true))
        log("catch-up: ours \(Int(bestOurs))/s, sqlite \(Int(bestTheirs))/s")
        store = nil
        try? FileManager.default.removeItem(atPath: storeDir)
        try? FileManager.default.removeItem(atPath: singleDir)

        // 4. A year (or, quick, a week) of 1 Hz heart rate: hourly average, warm; open time.
        let yearDir = root + "/year"
        let ycfg = StoreConfig(directory: yearDir, sync: .none)
        let year = try Store.open(ycfg)
        let ypeer = try SQLitePeer(path: root + "/year.sqlite")
        i = 0
        var loadOurs = 0.0, loadTheirs = 0.0
        while i < yearCount {
            let n = min(10_000, yearCount - i)
            let b = heartRate(from: i, count: n)
            var t1 = now()
            try year.appendBatch(b)
            loadOurs += now() - t1
            t1 = now()
            try ypeer.insert(b, firstAnchor: Int64(i + 1))
            loadTheirs += now() - t1
            i += n
            if i % 5_000_000 == 0 { log("year load \(i)/\(yearCount): ours \(Int(loadOurs)) s, sqlite \(Int(loadTheirs)) s") }
        }
        try year.sync()
        try ypeer.checkpoint()
        log("year loaded: \(yearCount) samples, ours \(directoryBytes(yearDir) >> 20) MiB, sqlite \(ypeer.bytesOnDisk() >> 20) MiB")
        let utc = TimeZone(identifier: "UTC")!
        let end = t0 + Millis(yearCount) * 1000
        var answer: [Statistics] = []
        _ = try year.statisticsCollection(type: .heartRate, options: .average, anchorDate: t0,
                                          interval: StatisticsInterval(.hours), from: t0, to: end, timeZone: utc)
        var bestStats = Double.infinity
        for _ in 0..<5 {
            t = now()
            answer = try year.statisticsCollection(type: .heartRate, options: .average, anchorDate: t0,
                                                   interval: StatisticsInterval(.hours), from: t0, to: end, timeZone: utc)
            bestStats = min(bestStats, now() - t)
        }
        _ = try ypeer.hourlyAverage(from: t0, to: end)
        var bestSQL = Double.infinity
        var sqlAnswer: [(Int64, Double)] = []
        for _ in 0..<(quick ? 3 : 2) {
            t = now()
            sqlAnswer = try ypeer.hourlyAverage(from: t0, to: end)
            bestSQL = min(bestSQL, now() - t)
        }
        let agree = answer.count == sqlAnswer.count
            && zip(answer, sqlAnswer).allSatisfy { abs(($0.average ?? -1) - $1.1) < 1e-9 * max(1, $1.1) }
        if !agree { log("WARNING: hourly averages differ from SQLite's (\(answer.count) vs \(sqlAnswer.count) rows)") }
        let days = yearCount / 86_400
        figures.append(BenchFigure(section: name, name: "hourly average HR over \(days) days of 1 Hz (\(yearCount / 1000)k samples), warm\(agree ? "" : " [MISMATCH]")",
                                   unit: "ms", ours: bestStats * 1000, peer: "sqlite GROUP BY", peerValue: bestSQL * 1000,
                                   higherIsBetter: false))
        log("hourly stats: ours \(bestStats * 1000) ms, sqlite \(bestSQL * 1000) ms, agree \(agree)")
        year.close()

        var bestOpen = Double.infinity
        for _ in 0..<5 {
            t = now()
            let reopened = try Store.open(ycfg)
            bestOpen = min(bestOpen, now() - t)
            reopened.close()
        }
        figures.append(BenchFigure(section: name, name: "open with \(yearCount / 1000)k samples stored", unit: "ms",
                                   ours: bestOpen * 1000, higherIsBetter: false))
        log("open: \(bestOpen * 1000) ms")
        return figures
    }
}
