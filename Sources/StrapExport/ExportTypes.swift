import StrapModel
import Synchronization

/// The file formats a workout exports to (docs/export.md).
public enum ExportFormat: String, Sendable, CaseIterable, Codable {
    /// Garmin FIT activity file: what Garmin Connect, Strava, GoldenCheetah and intervals.icu import.
    case fit
    /// TrainingCenterDatabase v2 XML with the ActivityExtension v2 speed and run cadence.
    case tcx
    /// One row per second, one column per measured type.
    case csv

    public var fileExtension: String { rawValue }

    public var mediaType: String {
        switch self {
        case .fit: "application/vnd.ant.fit"
        case .tcx: "application/vnd.garmin.tcx+xml"
        case .csv: "text/csv"
        }
    }
}

/// Choices the caller makes for an export; the defaults suit the daemon.
public struct ExportOptions: Sendable, Equatable {
    /// The largest chunk `ExportStream.nextChunk()` returns (the last one may be shorter).
    public var chunkSize: Int
    /// A level measurement (heart rate, speed, cadence) keeps its value for this many seconds
    /// with no new sample before the second counts as "no value".
    public var holdSeconds: Int
    /// The local time's offset from UTC at the workout's end, in seconds: FIT's
    /// `activity.local_timestamp` is `timestamp + offset`. 0 when unknown (then local = UTC).
    public var utcOffsetSeconds: Int
    /// FIT `file_creator.software_version` and the TCX `Author` build (e.g. 100 = 1.00).
    public var softwareVersion: UInt16

    public static let defaultChunkSize = 64 * 1024
    public static let minimumChunkSize = 256

    public init(chunkSize: Int = ExportOptions.defaultChunkSize, holdSeconds: Int = 5,
                utcOffsetSeconds: Int = 0, softwareVersion: UInt16 = 100) {
        self.chunkSize = chunkSize
        self.holdSeconds = holdSeconds
        self.utcOffsetSeconds = utcOffsetSeconds
        self.softwareVersion = softwareVersion
    }
}

/// Why an export could not be made. Nothing is produced past the error.
public enum ExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The workout's end is not after its start, or it is too long for FIT's 32-bit times.
    case invalidWorkout(String)
    /// A chunk size below `ExportOptions.minimumChunkSize` or a negative hold.
    case invalidOptions(String)
    /// The sample source must yield samples by ascending `start`; this one went back in time.
    case samplesOutOfOrder(previousStart: Millis, start: Millis)
    /// The second pass over the samples produced other bytes than the first (the source
    /// changed in between): the byte count announced before the first chunk would be wrong.
    case sourceChanged(expectedBytes: Int, producedBytes: Int)
    /// Reading the samples failed (`SampleSource.windows`' fetch threw this).
    case sourceFailed(String)

    public var description: String {
        switch self {
        case .invalidWorkout(let why): "invalid workout: \(why)"
        case .invalidOptions(let why): "invalid export options: \(why)"
        case let .samplesOutOfOrder(previous, start):
            "samples out of order: a sample starting at \(start) ms came after one starting at \(previous) ms"
        case let .sourceChanged(expected, produced):
            "the samples changed during the export: announced \(expected) bytes, produced \(produced)"
        case .sourceFailed(let why): "reading the samples failed: \(why)"
        }
    }
}

/// A workout's samples, readable more than once, each time in ascending `start` order (the
/// store's default sort). Exports read it twice: once to size and summarise, once to encode.
/// Samples of other devices than the workout's `deviceIDs` (when it names any) are ignored.
public struct SampleSource: Sendable {
    let makeIterator: @Sendable () -> AnyIterator<Sample>
    /// Where a source that reads storage records why it stopped early.
    let failure: SourceFailure?

    /// `make` is called once per pass and must return a fresh iterator over the same samples.
    public init(_ make: @escaping @Sendable () -> AnyIterator<Sample>) {
        makeIterator = make
        failure = nil
    }

    /// Samples already in memory (tests, small workouts).
    public init(_ samples: [Sample]) {
        makeIterator = { AnyIterator(samples.makeIterator()) }
        failure = nil
    }

    /// A lazily produced sequence whose iteration can be repeated.
    public init<S: Sequence & Sendable>(sequence: S) where S.Element == Sample {
        makeIterator = { AnyIterator(sequence.makeIterator()) }
        failure = nil
    }

    /// Samples fetched one time window at a time, so that only a window's samples are in
    /// memory: `fetch(window)` returns the samples whose `start` lies in `window`, ascending
    /// (e.g. the store's query for the workout's samples with `.time(from:to:options:
    /// .strictStartDate)`: an overlap query would return a sample in two windows). The windows tile
    /// `range` extended by `lookBehind` (heartbeat series start up to a few seconds before the
    /// beats they carry). If `fetch` throws, the pass ends and the export throws
    /// `ExportError.sourceFailed` with the error's description.
    public static func windows(covering range: Range<Millis>, window: Millis = 300_000, lookBehind: Millis = 60_000,
                               fetch: @escaping @Sendable (Range<Millis>) throws -> [Sample]) -> SampleSource {
        let failure = SourceFailure()
        let step = max(1_000, window)
        return SampleSource(failure: failure) {
            var next = range.lowerBound - lookBehind
            var page: [Sample] = []
            var index = 0
            return AnyIterator {
                while index == page.count {
                    guard next < range.upperBound, failure.message == nil else { return nil }
                    let window = next..<min(range.upperBound, next + step)
                    next = window.upperBound
                    do {
                        page = try fetch(window)
                    } catch {
                        failure.record("\(error)")
                        return nil
                    }
                    index = 0
                }
                defer { index += 1 }
                return page[index]
            }
        }
    }

    init(failure: SourceFailure, _ make: @escaping @Sendable () -> AnyIterator<Sample>) {
        makeIterator = make
        self.failure = failure
    }
}

/// The first error a storage-backed source met, shared by its iterators.
final class SourceFailure: Sendable {
    private let stored = Mutex<String?>(nil)
    var message: String? { stored.withLock { $0 } }
    func record(_ m: String) { stored.withLock { if $0 == nil { $0 = m } } }
}
