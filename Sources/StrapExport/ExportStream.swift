import StrapModel

/// A workout export as a pull-based stream of byte chunks, in bounded memory.
///
/// `init` makes the first pass over the samples: it runs the whole encoder but keeps no bytes,
/// only their count and the lap/session totals (TCX writes a lap's totals before its
/// trackpoints; FIT's header holds the data size). `byteCount` and `summary` are therefore
/// exact before the first chunk. `nextChunk()` then makes the second pass, producing at most
/// `options.chunkSize` bytes per call, reading samples only as far as those bytes need. The
/// stream holds one second's state, the chunk being filled and the lap totals, never a record
/// per second of the workout: a 24 h export costs the same memory as a 1 h one.
///
/// Driving it (the daemon): build it on a worker queue (the first pass reads every sample),
/// announce `format.mediaType` and `byteCount`, then loop `while let chunk = try
/// stream.nextChunk()` and send each chunk (64 KiB is 87 KiB in base64, well inside one
/// protocol line) until nil. A thrown error ends the export; nothing more will be produced.
/// Not `Sendable`: one queue drives it from start to end.
public struct ExportStream {
    public let format: ExportFormat
    /// The exact size of the whole export in bytes.
    public let byteCount: Int
    /// The laps' and the session's totals as written.
    public let summary: ExportSummary
    public private(set) var bytesDelivered = 0

    private let chunkSize: Int
    private let failure: SourceFailure?
    private var run: ExportRun
    private var finished = false

    public init(format: ExportFormat, workout: Workout, samples: SampleSource,
                options: ExportOptions = ExportOptions()) throws(ExportError) {
        guard options.chunkSize >= ExportOptions.minimumChunkSize else {
            throw .invalidOptions("chunk size \(options.chunkSize) is below \(ExportOptions.minimumChunkSize)")
        }
        guard options.holdSeconds >= 0 else { throw .invalidOptions("negative hold \(options.holdSeconds)") }
        let schedule = try ExportSchedule(workout)
        let mapping = ActivityMapping(activityType: workout.activityType, location: workout.locationType)

        let sizing = EncodeContext(workout: workout, schedule: schedule, mapping: mapping, options: options,
                                   summary: nil, byteCount: 0)
        var first = ExportRun(format: format, context: sizing, samples: samples.makeIterator(), tracksCRC: false)
        var total = 0
        while !first.isDone {
            try first.fill(to: options.chunkSize)
            total += first.sink.discardAll()
        }
        if let failure = samples.failure?.message { throw .sourceFailed(failure) }
        let summary = first.stats.summary(schedule, devices: first.timeline.devices)

        let emitting = EncodeContext(workout: workout, schedule: schedule, mapping: mapping, options: options,
                                     summary: summary, byteCount: total)
        self.format = format
        byteCount = total
        self.summary = summary
        chunkSize = options.chunkSize
        run = ExportRun(format: format, context: emitting, samples: samples.makeIterator(), tracksCRC: format == .fit)
        failure = samples.failure
    }

    /// The next chunk (1...chunkSize bytes), or nil when the export is complete.
    public mutating func nextChunk() throws(ExportError) -> [UInt8]? {
        guard !finished else { return nil }
        do throws(ExportError) {
            try run.fill(to: chunkSize)
            if let message = failure?.message { throw .sourceFailed(message) }
        } catch {
            finished = true
            throw error
        }
        let n = min(chunkSize, run.sink.count)
        guard n > 0 else {
            finished = true
            guard bytesDelivered == byteCount else { throw .sourceChanged(expectedBytes: byteCount, producedBytes: bytesDelivered) }
            return nil
        }
        guard bytesDelivered + n <= byteCount else {
            finished = true
            throw .sourceChanged(expectedBytes: byteCount, producedBytes: bytesDelivered + run.sink.count)
        }
        bytesDelivered += n
        return run.sink.take(n)
    }

    /// Bytes held for the next chunks (the buffer's capacity): bounded by the chunk size.
    var runBufferCapacity: Int { run.sink.bytes.capacity }
    /// Increments and beats read but not yet placed in a second.
    var runPendingCount: Int { run.timeline.pendingCount }

    /// The whole export at once: for tests and small workouts; the daemon streams.
    public static func data(format: ExportFormat, workout: Workout, samples: SampleSource,
                            options: ExportOptions = ExportOptions()) throws(ExportError) -> [UInt8] {
        var stream = try ExportStream(format: format, workout: workout, samples: samples, options: options)
        var out: [UInt8] = []
        out.reserveCapacity(stream.byteCount)
        while let chunk = try stream.nextChunk() { out += chunk }
        return out
    }
}

/// One pass: the timeline, the encoder and the bytes not yet taken.
struct ExportRun {
    private(set) var timeline: ExportTimeline
    private(set) var stats: ExportStats
    var sink: ByteSink
    private var encoder: any FormatEncoder
    private let context: EncodeContext
    private var nextBoundary = 0
    private var started = false
    private(set) var isDone = false

    init(format: ExportFormat, context: EncodeContext, samples: AnyIterator<Sample>, tracksCRC: Bool) {
        self.context = context
        timeline = ExportTimeline(schedule: context.schedule, workout: context.workout, samples: samples,
                                  holdSeconds: context.options.holdSeconds)
        stats = ExportStats(lapCount: context.schedule.laps.count)
        sink = ByteSink(capacity: context.options.chunkSize + 4096, tracksCRC: tracksCRC)
        encoder = switch format {
        case .fit: FITEncoder()
        case .tcx: TCXEncoder()
        case .csv: CSVEncoder()
        }
    }

    /// Encodes seconds until at least `target` bytes wait in the sink or the export is done.
    mutating func fill(to target: Int) throws(ExportError) {
        if !started {
            started = true
            encoder.begin(context, into: &sink)
        }
        while sink.count < target && !isDone {
            if try timeline.advance() {
                let second = timeline.current
                fireBoundaries(through: second.instant)
                stats.add(second, context.mapping.family)
                encoder.second(second, context, into: &sink)
            } else {
                fireBoundaries(through: .max)
                encoder.finish(context, stats, devices: timeline.devices, into: &sink)
                isDone = true
            }
        }
    }

    private mutating func fireBoundaries(through instant: Millis) {
        let boundaries = context.schedule.boundaries
        while nextBoundary < boundaries.count && boundaries[nextBoundary].time <= instant {
            let b = boundaries[nextBoundary]
            encoder.boundary(b.boundary, at: b.time, context, stats, into: &sink)
            nextBoundary += 1
        }
    }
}
