import FoundationEssentials
import StrapWire

/// A saved workout as a file (FIT, TCX or CSV), made by strapd and streamed in chunks
/// (`workout.export`, docs/protocol-workouts.md). HealthKit has no export; this is the
/// typed form of the one stream every client that downloads a workout needs, so none of
/// them decodes base64 chunks or checks their offsets itself.
public struct WorkoutFile: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case fit, tcx, csv
    }

    /// The saved workout's UUID, as strapd names it.
    public let workout: String
    public let format: Format
    /// The file's media type and extension, as strapd gives them (`application/vnd.ant.fit`, `fit`).
    public let mediaType: String
    public let fileExtension: String
    /// The file's exact size, announced before the first byte.
    public let byteCount: Int
    /// The file's bytes in order, chunk by chunk.
    public let chunks: Chunks

    /// The bytes of one export, checked as they arrive: each chunk starts where the previous
    /// one ended and the total is the size announced. A break throws
    /// ``StrapKitError/malformedReply(_:)`` (or the daemon's `error`); ending the iteration
    /// early cancels the export on the daemon's side.
    public struct Chunks: AsyncSequence, Sendable {
        public typealias Element = [UInt8]
        let events: RawEventStream
        let byteCount: Int

        public struct AsyncIterator: AsyncIteratorProtocol {
            var events: RawEventStream.AsyncIterator
            var assembler: WorkoutFileAssembler
            var done = false

            public mutating func next() async throws -> [UInt8]? {
                while !done {
                    guard let event = try await events.next() else {
                        throw StrapKitError.malformedReply("the export ended after \(assembler.received) of \(assembler.announced) bytes without finished")
                    }
                    do {
                        switch event.kind {
                        case "chunk":
                            return try assembler.accept(event.data)
                        case "finished":
                            done = true
                            try assembler.finish(event.data)
                        case "cancelled":
                            done = true
                            throw StrapKitError.malformedReply("the export was cancelled after \(assembler.received) bytes")
                        default:
                            continue
                        }
                    } catch let error as WorkoutFileAssembler.Broken {
                        throw StrapKitError.malformedReply(error.description)
                    }
                }
                return nil
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(events: events.makeAsyncIterator(), assembler: WorkoutFileAssembler(announced: byteCount))
        }

        /// Asks strapd to stop producing chunks.
        public func cancel() { events.cancel() }
    }
}

/// Checks one `workout.export` stream's chunks against the size its `ok` reply announced: each
/// chunk starts where the previous one ended, and the total is that size. The one check of an
/// export's bytes, for ``WorkoutFile/chunks`` and for strapctl's download.
public struct WorkoutFileAssembler: Sendable {
    /// Why the stream does not add up: missing, repeated or extra bytes, undecodable data.
    public struct Broken: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let announced: Int
    public private(set) var received = 0
    public private(set) var chunks = 0

    public init(announced: Int) { self.announced = announced }

    /// The bytes of a `chunk` event's data `{"offset", "data": base64}`.
    public mutating func accept(_ chunk: JSONObject) throws(Broken) -> [UInt8] {
        guard case .int(let offset)? = chunk["offset"] else { throw Broken(description: "chunk \(chunks + 1) has no offset") }
        guard offset == Int64(received) else {
            throw Broken(description: "chunk \(chunks + 1) starts at byte \(offset), but \(received) bytes had arrived "
                         + (offset > Int64(received) ? "(bytes missing)" : "(bytes repeated)"))
        }
        guard case .string(let text)? = chunk["data"], let data = Data(base64Encoded: text) else {
            throw Broken(description: "chunk \(chunks + 1) at byte \(offset) is not base64")
        }
        guard received + data.count <= announced else {
            throw Broken(description: "chunk \(chunks + 1) runs to byte \(received + data.count), past the \(announced) bytes announced")
        }
        received += data.count
        chunks += 1
        return [UInt8](data)
    }

    /// The `finished` event's data `{"bytes", "chunks"}`: everything announced arrived.
    public func finish(_ data: JSONObject) throws(Broken) {
        guard received == announced else {
            throw Broken(description: "it ended after \(received) of the \(announced) bytes announced")
        }
        if case .int(let bytes)? = data["bytes"], bytes != Int64(received) {
            throw Broken(description: "strapd says it sent \(bytes) bytes, \(received) arrived")
        }
    }
}

extension StrapStore {
    /// Exports a saved workout (or the workout of an ended session) as a file. Returns once
    /// strapd has sized it (every sample is read first); the bytes follow through
    /// ``WorkoutFile/chunks``. `utcOffset` is FIT's local time in seconds.
    public func exportWorkout(_ workout: String, format: WorkoutFile.Format = .fit, utcOffset: Int? = nil) async throws -> WorkoutFile {
        var params: JSONObject = ["workout": .string(workout), "format": .string(format.rawValue)]
        if let utcOffset { params["utcOffset"] = .int(Int64(utcOffset)) }
        let (result, events) = try await rawStream("workout.export", params)
        guard case .int(let bytes)? = result["bytes"], bytes >= 0 else {
            events.cancel()
            throw StrapKitError.malformedReply("workout.export's reply gives no size")
        }
        func text(_ key: String) -> String? { if case .string(let s)? = result[key] { s } else { nil } }
        return WorkoutFile(workout: text("workout") ?? workout, format: format,
                           mediaType: text("mediaType") ?? "application/octet-stream", fileExtension: text("fileExtension") ?? format.rawValue,
                           byteCount: Int(bytes), chunks: .init(events: events, byteCount: Int(bytes)))
    }
}
