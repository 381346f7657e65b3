import Dispatch
import FoundationEssentials
import Glibc
import StrapIngest
import StrapOS
import Synchronization

/// `--record FILE`: appends every raw event as a capture line, off the ingest path.
///
/// Lines collect in a buffer under a lock and are written by `flush` (the daemon's 2 s status
/// timer, and shutdown) or, past 64 KiB, on the recorder's queue: a hop per event woke a
/// thread per notification.
public final class Recorder: @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd.recorder")
    private let file: OpenFile
    private let pending = Mutex<[UInt8]>([])
    /// Confined to `queue`.
    private var failed: String?

    static let writeAt = 64 * 1024

    public init(path: String) throws(SystemCallError) {
        file = try OpenFile(path: path, flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o644)
    }

    public func record(_ event: SensorEvent) {
        let full = pending.withLock { buffer in
            CaptureFormat.append(event, into: &buffer)
            buffer.append(UInt8(ascii: "\n"))
            return buffer.count >= Self.writeAt
        }
        if full { queue.async { [self] in writeOut() } }
    }

    /// Writes what is buffered; called on a timer by the daemon and at shutdown.
    public func flush() { queue.sync { writeOut() } }

    public var error: String? { queue.sync { failed } }

    /// On `queue`, so writes keep their order.
    private func writeOut() {
        let bytes = pending.withLock { buffer in
            let taken = buffer
            buffer = []
            return taken
        }
        guard !bytes.isEmpty, failed == nil else { return }
        do throws(SystemCallError) { try file.writeAll(bytes) } catch { failed = error.description }
    }
}

/// `--replay FILE [--replay-speed X]`: plays a capture back through the pipeline with its
/// recorded spacing divided by `speed` (0 = as fast as the pipeline takes it). Events keep
/// their recorded times: a replay reproduces the session, it does not pretend to be live.
public final class ReplaySource: @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd.source.replay")
    let events: [SensorEvent]
    let pipeline: Pipeline
    let speed: Double
    /// Confined to `queue`.
    private var index = 0
    private var originMono = 0.0
    private var startedAt = 0.0
    private var stopped = false
    /// Called on `queue` once every event has been submitted.
    public var onFinished: (@Sendable () -> Void)?

    /// Reads and validates the whole capture up front, so a bad line is reported before
    /// anything is replayed.
    public init(path: String, pipeline: Pipeline, speed: Double = 1) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var parsed: [SensorEvent] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.allSatisfy(\.isWhitespace) {
            parsed.append(try CaptureFormat.parse(line, lineNumber: n + 1))
        }
        events = parsed
        self.pipeline = pipeline
        self.speed = speed
    }

    public func start() {
        queue.async { [self] in
            guard !stopped else { return }
            originMono = events.first?.time.monotonic ?? 0
            startedAt = ReceiveTime.now().monotonic
            step()
        }
    }

    /// Returns once the replay submits nothing more (SIGTERM: before the final flush).
    public func stop() {
        queue.sync { stopped = true }
    }

    private func step() {
        guard !stopped else { return }
        guard index < events.count else {
            onFinished?()
            return
        }
        if speed <= 0 {
            pipeline.submit(contentsOf: Array(events[index...]))
            index = events.count
            onFinished?()
            return
        }
        let now = (ReceiveTime.now().monotonic - startedAt) * speed
        var batch: [SensorEvent] = []
        while index < events.count, events[index].time.monotonic - originMono <= now {
            batch.append(events[index])
            index += 1
        }
        if !batch.isEmpty { pipeline.submit(contentsOf: batch) }
        guard index < events.count else {
            onFinished?()
            return
        }
        let wait = max(0.001, (events[index].time.monotonic - originMono - now) / speed)
        queue.asyncAfter(deadline: .now() + min(wait, 1)) { [self] in step() }
    }
}
