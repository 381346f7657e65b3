/// Bytes queued for one client, as a FIFO of chunks. Small writes are coalesced into the
/// last chunk so a burst of short event lines becomes few `send` calls.
struct OutputBuffer {
    private var chunks: [[UInt8]] = []
    private var head = 0          // index of the first unsent chunk
    private var headOffset = 0    // bytes of chunks[head] already sent
    private(set) var count = 0

    static let coalesceLimit = 16 * 1024

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        count += bytes.count
        if chunks.count > head, chunks[chunks.count - 1].count + bytes.count <= Self.coalesceLimit,
           !(chunks.count - 1 == head && headOffset > 0) {
            chunks[chunks.count - 1].append(contentsOf: bytes)
        } else {
            chunks.append(bytes)
        }
    }

    /// The unsent bytes of the first chunk.
    func withFirstChunk<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T? {
        guard head < chunks.count else { return nil }
        let offset = headOffset
        return chunks[head].withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
    }

    mutating func consume(_ n: Int) {
        precondition(n <= count)
        count -= n
        headOffset += n
        if headOffset == chunks[head].count {
            head += 1
            headOffset = 0
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 {
                chunks.removeFirst(head)
                head = 0
            }
        }
    }

    mutating func removeAll() {
        chunks.removeAll()
        head = 0
        headOffset = 0
        count = 0
    }
}

/// Per-client output bounds (docs/protocol.md#slow-clients: a stalled client never makes the daemon
/// grow without bound). At `highWater` the server stops reading that client's requests and tells
/// the handler (which drops or pauses its streams); once the buffer has drained to `lowWater` it
/// resumes and tells the handler again. `hardLimit` is absolute: a write that would exceed it is
/// refused and nothing is queued.
public struct OutputLimits: Sendable, Equatable {
    public var highWater: Int
    public var lowWater: Int
    public var hardLimit: Int

    public init(highWater: Int = 256 * 1024, lowWater: Int = 64 * 1024, hardLimit: Int = 4 * 1024 * 1024) {
        precondition(0 <= lowWater && lowWater < highWater && highWater <= hardLimit)
        self.highWater = highWater
        self.lowWater = lowWater
        self.hardLimit = hardLimit
    }

    /// The limits strapd.conf's `client_buffer` stands for: pause at a quarter, resume at
    /// a sixteenth, refuse beyond the whole.
    public init(clientBuffer: Int) {
        precondition(clientBuffer >= 16)
        self.init(highWater: clientBuffer / 4, lowWater: clientBuffer / 16, hardLimit: clientBuffer)
    }
}
