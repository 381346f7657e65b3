import Dispatch
import FoundationEssentials
import Glibc
import StrapIngest
import StrapOS

/// `--record FILE`: appends every raw event as a capture line, off the ingest path.
public final class Recorder: @unchecked Sendable {
    let queue = DispatchQueue(label: "strapd.recorder")
    private let file: OpenFile
    /// Confined to `queue`.
    private var buffer: [UInt8] = []
    private var failed: String?

    public init(path: String) throws(SystemCallError) {
        file = try OpenFile(path: path, flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o644)
    }

    public func record(_ event: SensorEvent) {
        let line = CaptureFormat.line(event) + "\n"
        queue.async { [self] in
            buffer.append(contentsOf: line.utf8)
            if buffer.count >= 64 * 1024 { writeOut() }
        }
    }

    /// Writes what is buffered; called on a timer by the daemon and at shutdown.
    public func flush() { queue.sync { writeOut() } }

    public var error: String? { queue.sync { failed } }

    private func writeOut() {
        guard !buffer.isEmpty, failed == nil else { return }
        do throws(SystemCallError) { try file.writeAll(buffer) } catch { failed = error.description }
        buffer.removeAll(keepingCapacity: true)
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
