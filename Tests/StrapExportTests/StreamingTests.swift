import Foundation
import Synchronization
import Testing
import ThirdPartyReaders
import StrapModel
@testable import StrapExport

/// Exports as bounded-memory streams: exact size first, chunks within the bound, samples read
/// only as far as the bytes produced need, a 24 h workout at ≤ 20 bytes per FIT record.
@Suite struct StreamingTests {
    static let day: Millis = 86_400_000
    static let t0: Millis = 1_719_792_000_000       // 2024-07-01T00:00:00Z

    @Test func twentyFourHoursAtOneHertzStreamInBoundedChunks() throws {
        let counter = PullCounter()
        let source = DayOfHeartbeats.source(start: Self.t0, seconds: 86_400, counter: counter)
        var workout = Workout(activityType: "running", start: Self.t0, end: Self.t0 + Self.day, deviceIDs: [DayOfHeartbeats.strap.id],
                              laps: (0..<24).map { .init(start: Self.t0 + Millis($0) * 3_600_000, end: Self.t0 + Millis($0 + 1) * 3_600_000) })
        workout.uuid = UUID()
        let chunkSize = ExportOptions.defaultChunkSize
        var stream = try ExportStream(format: .fit, workout: workout, samples: source)
        let total = counter.pulled            // the first (sizing) pass read everything once
        #expect(total == 86_400 * 2)
        #expect(stream.summary.session.points == 86_400)
        #expect(stream.summary.laps.count == 24)

        var delivered = 0, chunks = 0
        var crc = FIT.CRC()
        var header: [UInt8] = []
        while let chunk = try stream.nextChunk() {
            chunks += 1
            #expect(chunk.count <= chunkSize && !chunk.isEmpty)
            if header.isEmpty { header = Array(chunk.prefix(14)) }
            crc.update(chunk)
            delivered += chunk.count
            // Reading follows writing: a second costs at least 13 bytes (a record) and brings
            // 2 samples, so the samples read cannot run ahead of the bytes produced.
            let pulled = counter.pulled - total
            #expect(pulled <= 2 * ((delivered + chunkSize + 256) / 13 + 3) + 1, "chunk \(chunks): read \(pulled) samples for \(delivered) bytes")
            // What the stream holds between chunks: the unsent bytes and a few pending beats.
            #expect(stream.bufferedBytes <= chunkSize + 8_192)
            #expect(stream.pendingSamples <= 16)
        }
        #expect(delivered == stream.byteCount && stream.bytesDelivered == delivered)
        #expect(crc.value == 0)                                   // the file CRC closes the stream
        #expect(Int(header[4]) | Int(header[5]) << 8 | Int(header[6]) << 16 | Int(header[7]) << 24 == delivered - 16)
        let perRecord = Double(delivered) / Double(stream.summary.session.points)
        #expect(perRecord <= 20, "\(perRecord) bytes per record")
        #expect(chunks == (delivered + chunkSize - 1) / chunkSize)
    }

    /// The 24 h file itself, read by Garmin's SDK and fitdecode (every record counted, the
    /// session's totals, every RR interval).
    @Test func twentyFourHourFileIsReadByTheReaders() throws {
        let dir = try ThirdPartyReaders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = DayOfHeartbeats.source(start: Self.t0, seconds: 86_400, counter: PullCounter())
        var workout = Workout(activityType: "cycling", start: Self.t0, end: Self.t0 + Self.day, deviceIDs: [])
        workout.uuid = UUID()
        let file = dir.appendingPathComponent("day.fit")
        try Data(try ExportStream.data(format: .fit, workout: workout, samples: source)).write(to: file)
        try ThirdPartyReaders.verifyFIT(file, expect: [
            "record_count": 86_400, "hrv_ms": DayOfHeartbeats.rrMillis(seconds: 86_400),
            "session": ["elapsed": 86_400.0, "timer": 86_400.0, "num_laps": 1, "sport": "cycling"],
        ])
    }

    @Test func byteCountIsExactForEveryFormatAndChunkSize() throws {
        let w = ThirdPartyReaderTests.full.synthetic
        for format in ExportFormat.allCases {
            let whole = try w.export(format)
            for size in [256, 1_000, 4_096, 65_536] {
                var stream = try ExportStream(format: format, workout: w.workout, samples: w.source,
                                              options: ExportOptions(chunkSize: size))
                #expect(stream.byteCount == whole.count)
                var joined: [UInt8] = []
                while let chunk = try stream.nextChunk() {
                    #expect(chunk.count <= size)
                    joined += chunk
                }
                #expect(joined == whole, "\(format) in chunks of \(size)")
                #expect(try stream.nextChunk() == nil)
            }
        }
    }

    /// The samples changed between the passes (e.g. a deletion): the announced size is wrong,
    /// and the stream says so instead of ending quietly with a corrupt file.
    @Test func aSourceThatChangesBetweenPassesIsReported() throws {
        let w = ThirdPartyReaderTests.full.synthetic
        let passes = Mutex(0)
        let all = w.samples
        let shrinking = SampleSource {
            let pass = passes.withLock { $0 += 1; return $0 }
            return AnyIterator((pass == 1 ? all : Array(all.prefix(all.count / 2))).makeIterator())
        }
        for format in ExportFormat.allCases {
            passes.withLock { $0 = 0 }
            var stream = try ExportStream(format: format, workout: w.workout, samples: shrinking)
            #expect(throws: ExportError.self) { while try stream.nextChunk() != nil {} }
            #expect(try stream.nextChunk() == nil)              // ended for good
        }
    }
}

extension StreamingTests {
    /// The daemon's way to read a workout: time windows from storage, one at a time.
    @Test func windowedSourceGivesTheSameBytesAndReportsFetchErrors() throws {
        let w = ThirdPartyReaderTests.full.synthetic
        let all = w.samples
        let fetched = Mutex<[Range<Millis>]>([])
        let windows = SampleSource.windows(covering: w.workout.start..<w.workout.end, window: 60_000) { window in
            fetched.withLock { $0.append(window) }
            return all.filter { window.contains($0.start) }
        }
        for format in ExportFormat.allCases {
            #expect(try ExportStream.data(format: format, workout: w.workout, samples: windows) == (try w.export(format)))
        }
        let ranges = fetched.withLock { $0 }
        #expect(ranges.first?.lowerBound == w.workout.start - 60_000 && ranges.allSatisfy { $0.count <= 60_000 })
        #expect(ranges.count == 3 * 2 * 11)                      // 11 windows a pass, 2 passes, 3 formats

        struct StoreDown: Error, CustomStringConvertible { var description: String { "segment 12 unreadable" } }
        let calls = Mutex(0)
        let failing = SampleSource.windows(covering: w.workout.start..<w.workout.end, window: 60_000) { window in
            // The second pass fails half-way: the first chunks went out, then the error.
            let n = calls.withLock { $0 += 1; return $0 }
            if n > 16 { throw StoreDown() }
            return all.filter { window.contains($0.start) }
        }
        var stream = try ExportStream(format: .csv, workout: w.workout, samples: failing, options: ExportOptions(chunkSize: 1_024))
        #expect(throws: ExportError.sourceFailed("segment 12 unreadable")) { while try stream.nextChunk() != nil {} }
        #expect(stream.bytesDelivered > 0 && stream.bytesDelivered < stream.byteCount)
        calls.withLock { $0 = 100 }
        #expect(throws: ExportError.sourceFailed("segment 12 unreadable")) {
            _ = try ExportStream(format: .fit, workout: w.workout, samples: failing)
        }
    }
}

extension ExportStream {
    /// Bytes the stream holds between chunks (its buffer's capacity).
    var bufferedBytes: Int { runBufferCapacity }
    /// Samples and beats read but not yet placed in a second.
    var pendingSamples: Int { runPendingCount }
}

/// Counts samples pulled from a source across its iterators.
final class PullCounter: Sendable {
    private let count = Atomic<Int>(0)
    var pulled: Int { count.load(ordering: .relaxed) }
    func add() { count.add(1, ordering: .relaxed) }
}

/// A day of heart rate with RR, made on the fly (never an array of the day): every second a
/// heart-rate sample at .300 and the beat series that ended there.
enum DayOfHeartbeats {
    static let strap = Device(id: "DAY", address: "DAY", name: "Day strap")

    /// RR of beat k in 1/1024 s: 700–900 ms, varying slowly.
    static func raw(_ k: Int) -> UInt16 { UInt16(800 + Int(100 * sin(Double(k) / 37))) }

    /// Every RR interval whose beat lands in [0, seconds - 0.7] s (the last series ends at
    /// the last second's .300), in ms as FIT stores them.
    static func rrMillis(seconds: Int) -> [Int] {
        var out: [Int] = [], time = 0.3 - Double(raw(0)) / 1024, k = 0
        while true {
            time += Double(raw(k)) / 1024
            guard time <= Double(seconds - 1) + 0.3 + 1e-9 else { break }
            if time >= 0 { out.append(Int((Double(raw(k)) * 1000 / 1024).rounded())) }
            k += 1
        }
        return out
    }

    static func source(start: Millis, seconds: Int, counter: PullCounter) -> SampleSource {
        SampleSource { AnyIterator(Iterator(start: start, seconds: seconds, counter: counter)) }
    }

    /// Step i makes the series of the beats in (i - 0.7, i + 0.3] and the heart rate of second
    /// i; it hands out that series before the previous second's heart rate, so that starts
    /// ascend (a series starts at the beat before its first interval, up to 0.9 s earlier).
    struct Iterator: IteratorProtocol {
        let start: Millis, seconds: Int, counter: PullCounter
        var second = 0, beat = 0
        var beatTime: Double     // seconds from start of the last beat placed
        var heldHeartRate: Sample?
        var queue: [Sample] = []

        init(start: Millis, seconds: Int, counter: PullCounter) {
            self.start = start; self.seconds = seconds; self.counter = counter
            beatTime = 0.3 - Double(DayOfHeartbeats.raw(0)) / 1024
        }

        mutating func next() -> Sample? {
            let origin = start
            let ms = { (s: Double) in origin + Millis((s * 1000).rounded()) }
            while queue.isEmpty && (second < seconds || heldHeartRate != nil) {
                if second < seconds {
                    let end = Double(second) + 0.3
                    let seriesStart = beatTime
                    var offsets: [Double] = [], sum = 0
                    while beatTime + Double(DayOfHeartbeats.raw(beat)) / 1024 <= end + 1e-9 {
                        sum += Int(DayOfHeartbeats.raw(beat))
                        offsets.append(Double(sum) / 1024)
                        beatTime += Double(DayOfHeartbeats.raw(beat)) / 1024
                        beat += 1
                    }
                    if !offsets.isEmpty {
                        queue.append(Sample(type: .heartbeatSeries, value: Double(offsets.count), start: ms(seriesStart),
                                            end: ms(beatTime), device: DayOfHeartbeats.strap, beats: offsets))
                    }
                }
                if let held = heldHeartRate { queue.append(held) }
                heldHeartRate = second < seconds
                    ? Sample(type: .heartRate, value: 60_000 / Double(DayOfHeartbeats.raw(beat)),
                             start: ms(Double(second) + 0.3), device: DayOfHeartbeats.strap)
                    : nil
                second += 1
            }
            guard !queue.isEmpty else { return nil }
            counter.add()
            return queue.removeFirst()
        }
    }
}
