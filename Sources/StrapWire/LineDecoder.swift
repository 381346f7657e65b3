/// NDJSON framing as a pure decoder (the swift-nio ByteToMessageDecoder idea, without a
/// channel): bytes in via `feed`, complete lines out via `next()`.
///
/// Policy, chosen so one bad line never costs a client its connection nor the daemon
/// unbounded memory:
/// - A line is the bytes before `\n`; a trailing `\r` is stripped (CRLF clients work).
/// - Empty lines (after stripping) are skipped: they carry no request.
/// - A line longer than `maximumLineLength` bytes (excluding the terminator) yields one
///   `.oversized` and the decoder then *discards* input up to the next `\n` without
///   buffering it, so memory stays bounded by the limit; decoding resumes after it.
///   The server answers `.oversized` with a `badRequest` whose id is null.
/// - `finish()` (the peer shut down its write side) yields a final unterminated line,
///   if any, as a line: NDJSON writers commonly omit the last newline.
/// Bytes are not checked for UTF-8 here; the JSON parser rejects invalid text.
public struct LineDecoder: Sendable {
    public static let defaultMaximumLineLength = 1 << 20

    public enum Output: Sendable, Equatable {
        case line([UInt8])
        /// A line exceeded the limit; `discardedSoFar` counts what was dropped before the
        /// decoder noticed (at least `maximumLineLength + 1`).
        case oversized(discardedSoFar: Int)
    }

    public let maximumLineLength: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Where the newline search resumes, so a long partial line is scanned only once.
    private var scanIndex = 0
    private var discarding = false
    private var finished = false

    public init(maximumLineLength: Int = LineDecoder.defaultMaximumLineLength) {
        precondition(maximumLineLength > 0)
        self.maximumLineLength = maximumLineLength
    }

    /// Bytes buffered and not yet returned (bounded by `maximumLineLength + 1` plus one read).
    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        precondition(!finished, "feed after finish")
        compactIfUseful()
        buffer.append(contentsOf: bytes)
    }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        precondition(!finished, "feed after finish")
        compactIfUseful()
        buffer.append(contentsOf: bytes)
    }

    /// The end of input: after this, `next()` also returns a final unterminated line.
    public mutating func finish() { finished = true }

    public mutating func next() -> Output? {
        while true {
            if discarding {
                guard let nl = buffer[scanIndex...].firstIndex(of: 0x0A) else {
                    buffer.removeAll(keepingCapacity: true)
                    readIndex = 0
                    scanIndex = 0
                    return nil
                }
                discarding = false
                readIndex = nl + 1
                scanIndex = readIndex
                continue
            }
            if let nl = buffer[scanIndex...].firstIndex(of: 0x0A) {
                var end = nl
                if end > readIndex, buffer[end - 1] == 0x0D { end -= 1 }
                let start = readIndex
                readIndex = nl + 1
                scanIndex = readIndex
                if end - start > maximumLineLength { return .oversized(discardedSoFar: nl + 1 - start) }
                if end == start { continue }
                return .line(Array(buffer[start..<end]))
            }
            scanIndex = buffer.count
            let pending = buffer.count - readIndex
            if pending > maximumLineLength + 1 {
                // Over the limit even if the next byte were "\r\n": give up on this line.
                discarding = true
                readIndex = buffer.count
                scanIndex = buffer.count
                return .oversized(discardedSoFar: pending)
            }
            if finished, pending > 0 {
                var end = buffer.count
                if buffer[end - 1] == 0x0D { end -= 1 }
                let start = readIndex
                readIndex = buffer.count
                scanIndex = buffer.count
                if end - start > maximumLineLength { return .oversized(discardedSoFar: pending) }
                if end == start { return nil }
                return .line(Array(buffer[start..<end]))
            }
            return nil
        }
    }

    private mutating func compactIfUseful() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else if readIndex >= 4096 && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
        } else {
            return
        }
        scanIndex -= readIndex
        readIndex = 0
    }
}
