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
            let byteCount: Int
            var received = 0
            var done = false

            public mutating func next() async throws -> [UInt8]? {
                while !done {
                    guard let event = try await events.next() else {
                        throw StrapKitError.malformedReply("the export ended after \(received) of \(byteCount) bytes without finished")
                    }
                    switch event.kind {
                    case "chunk":
                        return try accept(event.data)
                    case "finished":
                        done = true
                        guard received == byteCount else {
                            throw StrapKitError.malformedReply("the export finished after \(received) of the \(byteCount) bytes announced")
                        }
                    case "cancelled":
                        done = true
                        throw StrapKitError.malformedReply("the export was cancelled after \(received) bytes")
                    default:
                        continue
                    }
                }
                return nil
            }

            private mutating func accept(_ chunk: JSONObject) throws -> [UInt8] {
                guard case .int(let offset)? = chunk["offset"], offset == Int64(received) else {
                    throw StrapKitError.malformedReply("an export chunk at \(chunk["offset"].map { "\($0)" } ?? "no offset") after \(received) bytes")
                }
                guard case .string(let text)? = chunk["data"], let data = Data(base64Encoded: text) else {
                    throw StrapKitError.malformedReply("the export chunk at byte \(offset) is not base64")
                }
                guard received + data.count <= byteCount else {
                    throw StrapKitError.malformedReply("an export chunk runs past the \(byteCount) bytes announced")
                }
                received += data.count
                return [UInt8](data)
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(events: events.makeAsyncIterator(), byteCount: byteCount)
        }

        /// Asks strapd to stop producing chunks.
        public func cancel() { events.cancel() }
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
