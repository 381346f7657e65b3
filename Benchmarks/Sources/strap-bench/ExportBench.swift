import Foundation
import StrapDaemon
import StrapExport
import StrapModel
import StrapStore

/// `strap-bench export` (issue 12): a 24 h workout at 1 Hz with RR intervals exported from a
/// real store (FIT, and TCX and CSV for reference), and the shipped daemon's resident memory
/// while it streams that export to a client. Method: docs/benchmarks.md.
enum ExportBench: BenchSection {
    static let name = "export"
    static let summary = "24 h workout export time (FIT, TCX, CSV), FIT bytes per record, daemon RSS while streaming"

    /// `STRAP_BENCH_EXPORT=inprocess,daemon` runs only those parts.
    static func run(quick: Bool) throws -> [BenchFigure] {
        let parts = getenv("STRAP_BENCH_EXPORT").map { String(cString: $0).split(separator: ",").map(String.init) }
            ?? ["inprocess", "daemon"]
        let hours = quick ? 2 : 24
        let root = makeTemporaryDirectory("strap-bench-export")
        defer { try? FileManager.default.removeItem(atPath: root) }
        print("  export: load average \(loadAverage())")
        let workout = try prepare(root + "/state/store", hours: hours)
        var figures: [BenchFigure] = []
        for part in parts {
            print("  export/\(part): load average \(loadAverage())")
            switch part {
            case "inprocess": figures += try inProcess(root + "/state/store", workout: workout, hours: hours)
            case "daemon": figures += try ExportDaemonMemory.figures(section: name, state: root + "/state", workout: workout, hours: hours)
            default: throw BenchFailure("STRAP_BENCH_EXPORT: unknown part \(part) (inprocess, daemon)")
            }
        }
        print("  export: load average \(loadAverage()) at the end")
        return figures
    }

    /// One simulated chest strap (heart rate, RR intervals, energy expended) for `hours`,
    /// decoded by the daemon's ingest code and stored; then a running workout over it with a
    /// lap every 4 h (every 30 min with --quick) and a 10-minute pause halfway, saved.
    static func prepare(_ directory: String, hours: Int) throws -> Workout {
        let t = DecodeBench.now()
        let store = try Store.open(StoreConfig(directory: directory, sync: .none))
        defer { store.close() }
        var feed = SimulatedSamples.Feed(kinds: [.hr])
        let seconds = hours * 3600
        var counts: [QuantityType: Int] = [:]
        // 30 s before the start, 30 s after the end: the workout's edges cut through data.
        for hour in 0...hours {
            let batch = feed.advance(to: Double(min(seconds + 60, (hour + 1) * 3600)))
            for s in batch { counts[s.type, default: 0] += 1 }
            try store.appendBatch(batch)
        }
        try store.sync()
        let start = feed.origin + 30_000, end = start + Millis(seconds) * 1000
        let lap: Millis = hours >= 24 ? 4 * 3_600_000 : 1_800_000
        let laps = stride(from: start, to: end, by: Int(lap)).map { Workout.Lap(start: $0, end: min(end, $0 + lap)) }
        let half = start + (end - start) / 2
        var w = Workout(activityType: "running", locationType: .outdoor, start: start, end: end, deviceIDs: feed.addresses,
                        events: [.init(kind: "pause", time: half), .init(kind: "resume", time: half + 600_000)], laps: laps)
        w.athlete = "default"
        let saved = try store.save(w)
        try store.sync()
        print(String(format: "  export: stored %d h of one strap in %.1f s: %@ (%.0f MB on disk); workout %@", hours,
                     DecodeBench.now() - t, counts.sorted { $0.value > $1.value }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "),
                     Double(DaemonFootprint.directoryBytes(directory)) / 1e6, saved.uuid.uuidString))
        return saved
    }

    /// The workout's samples exactly as the daemon's `workout.export` reads them
    /// (`WorkoutSamples.export`: one scan of the store per pass, put in time order).
    static func source(_ store: Store, _ workout: Workout) throws -> SampleSource {
        SampleSource(sequence: try WorkoutSamples.export(store, workout))
    }

    /// Both passes (sizing in `init`, then every chunk), best of 3, per format.
    static func inProcess(_ directory: String, workout: Workout, hours: Int) throws -> [BenchFigure] {
        let store = try Store.open(StoreConfig(directory: directory, sync: .none))
        defer { store.close() }
        var figures: [BenchFigure] = []
        for format in ExportFormat.allCases {
            var times: [Double] = []
            var bytes = 0
            // TCX and CSV are for reference: one run when a run takes over 10 s.
            for round in 0..<3 {
                if round > 0 && format != .fit && times[0] > 10 { break }
                let t0 = DecodeBench.now()
                var stream = try ExportStream(format: format, workout: workout, samples: source(store, workout))
                var n = 0
                while let chunk = try stream.nextChunk() { n += chunk.count }
                times.append(DecodeBench.now() - t0)
                guard n == stream.byteCount else { throw BenchFailure("\(format) export produced \(n) bytes, announced \(stream.byteCount)") }
                bytes = n
            }
            print(String(format: "  export: %@ of %d h from the store: %@ ms (best is the figure), %d bytes", format.rawValue, hours,
                         times.map { String(format: "%.1f", $0 * 1000) }.joined(separator: ", "), bytes))
            figures.append(BenchFigure(section: name, name: "\(format.rawValue.uppercased()) export, \(hours) h at 1 Hz with RR, both passes",
                                       unit: "ms", ours: times.min()! * 1000, higherIsBetter: false))
            if format == .fit {
                let file = try ExportStream.data(format: .fit, workout: workout, samples: source(store, workout))
                let messages = try FITMessageCount(file)
                let records = messages.data[20, default: 0]
                print("  export: FIT file \(file.count) bytes: " + messages.summary + "; "
                      + String(format: "%.2f bytes per record, %.2f bytes per second of workout", Double(file.count) / Double(records),
                               Double(file.count) / Double(hours * 3600)))
                figures.append(BenchFigure(section: name, name: "FIT export size per record message, \(hours) h with RR", unit: "bytes",
                                           ours: Double(file.count) / Double(records), higherIsBetter: false))
                figures.append(BenchFigure(section: name, name: "FIT export size, \(hours) h with RR", unit: "bytes",
                                           ours: Double(file.count), higherIsBetter: false))
            }
        }
        figures.append(try encoderAlone(store, workout: workout, hours: hours))
        return figures
    }

    /// For the diagnosis: the same FIT export with the workout's samples read by one store
    /// query up front and served from memory, so the time is the encoder's two passes alone.
    static func encoderAlone(_ store: Store, workout: Workout, hours: Int) throws -> BenchFigure {
        let devices: SamplePredicate = .or(workout.deviceIDs.map { .device(.id, $0) })
        let t = DecodeBench.now()
        let all = try store.samples(matching: .and([devices, .time(from: workout.start - 60_000, to: workout.end + 1,
                                                                   options: .strictStartDate)]))
        let query = DecodeBench.now() - t
        var times: [Double] = []
        for _ in 0..<3 {
            let t0 = DecodeBench.now()
            var stream = try ExportStream(format: .fit, workout: workout, samples: SampleSource(all))
            while try stream.nextChunk() != nil {}
            times.append(DecodeBench.now() - t0)
        }
        print(String(format: "  export: fit of %d h from %d samples in memory (one store query, %.0f ms): %@ ms", hours, all.count,
                     query * 1000, times.map { String(format: "%.1f", $0 * 1000) }.joined(separator: ", ")))
        return BenchFigure(section: name, name: "FIT export, \(hours) h, samples from memory (encoder alone, both passes)",
                           unit: "ms", ours: times.min()! * 1000, higherIsBetter: false)
    }
}

/// Messages of a FIT file by global message number (definition and data), read the way any
/// FIT reader walks the file: header, then record headers, definitions giving the data sizes.
struct FITMessageCount {
    var data: [Int: Int] = [:]
    var definitions = 0

    init(_ file: [UInt8]) throws {
        guard file.count >= 14, file[8..<12].elementsEqual(".FIT".utf8) else { throw BenchFailure("not a FIT file") }
        let headerSize = Int(file[0])
        let dataSize = Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24
        let end = headerSize + dataSize
        guard end + 2 == file.count else { throw BenchFailure("FIT data size \(dataSize) does not match the file (\(file.count) bytes)") }
        var local: [Int: (global: Int, size: Int)] = [:]
        var p = headerSize
        func need(_ n: Int) throws { guard p + n <= end else { throw BenchFailure("FIT message runs past the data at byte \(p)") } }
        while p < end {
            let h = file[p]
            p += 1
            if h & 0x80 != 0 || h & 0x40 == 0 {
                // A data message (compressed-timestamp header: local type in bits 5-6).
                let type = h & 0x80 != 0 ? Int((h >> 5) & 0x3) : Int(h & 0x0F)
                guard let d = local[type] else { throw BenchFailure("FIT data message of undefined local type \(type) at byte \(p - 1)") }
                try need(d.size)
                p += d.size
                data[d.global, default: 0] += 1
            } else {
                try need(5)
                let bigEndian = file[p + 1] == 1
                let global = bigEndian ? Int(file[p + 2]) << 8 | Int(file[p + 3]) : Int(file[p + 2]) | Int(file[p + 3]) << 8
                let fields = Int(file[p + 4])
                p += 5
                try need(fields * 3)
                var size = (0..<fields).reduce(0) { $0 + Int(file[p + $1 * 3 + 1]) }
                p += fields * 3
                if h & 0x20 != 0 {
                    try need(1)
                    let developer = Int(file[p])
                    p += 1
                    try need(developer * 3)
                    size += (0..<developer).reduce(0) { $0 + Int(file[p + $1 * 3 + 1]) }
                    p += developer * 3
                }
                local[Int(h & 0x0F)] = (global, size)
                definitions += 1
            }
        }
    }

    /// e.g. "86400 record, 20800 hrv, …, 9 definitions".
    var summary: String {
        let names = [0: "file_id", 18: "session", 19: "lap", 20: "record", 21: "event", 23: "device_info", 34: "activity",
                     49: "file_creator", 78: "hrv"]
        return data.sorted { $0.value > $1.value }.map { "\($0.value) \(names[$0.key] ?? "global \($0.key)")" }.joined(separator: ", ")
            + ", \(definitions) definitions"
    }
}
