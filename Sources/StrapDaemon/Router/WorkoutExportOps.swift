import Dispatch
import FoundationEssentials
import StrapExport
import StrapModel
import StrapStore
import StrapWire

/// `workout.export` and `workout.hrv` (docs/protocol-workouts.md). strapd never writes a file a
/// client names: the export's bytes travel over the socket and the client writes them.
extension RequestRouter {
    /// `workout.export {"workout", "format", "utcOffset"}` → `ok` with the exact size, then
    /// `chunk` events (base64, at most 64 KiB of file each) and `finished`.
    func workoutExport(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["workout", "format", "utcOffset"])
        let id = try params.requiredUUID("workout")
        let name = try params.string("format") ?? "fit"
        guard let format = ExportFormat(rawValue: name) else { throw Params.notOneOf("format", name, ["fit", "tcx", "csv"], what: "export format") }
        let offset = Int(try params.int("utcOffset", in: -64_800...64_800) ?? 0)
        let service = try workouts
        // A chunk travels as base64 (4 bytes per 3) in one event line, which must fit the
        // client buffer: a small `client_buffer` gets smaller chunks.
        let room = (lineBudget(session) - Reply.event(id: request.id, kind: "chunk", dataJSON: []).count - 64) / 4 * 3
        let chunkSize = max(ExportOptions.minimumChunkSize, min(ExportOptions.defaultChunkSize, room))
        let stream = ExportEventStream(router: self, session: session, id: request.id)
        streamStarted(stream, id: request.id, in: session)
        session.pendingReplies += 1
        // The sizing pass reads every sample of the workout: a heavy request (one per
        // connection at a time, `RequestRouter.run`). The chunks then follow as the client reads.
        run(request.op, in: session) { [self] in
            // `stream.export` is confined to the stream's queue.
            let (reply, started) = stream.queue.sync { () -> ([UInt8], Bool) in
                do throws(StrapError) {
                    let workout = try Self.savedWorkout(id, service)
                    let source = SampleSource(sequence: try WorkoutSamples.export(service.store, workout))
                    do throws(ExportError) {
                        stream.export = try ExportStream(format: format, workout: workout, samples: source,
                                                         options: ExportOptions(chunkSize: chunkSize, utcOffsetSeconds: offset))
                    } catch { throw StrapError.internal("export of workout \(workout.uuid): \(error)") }
                    let e = stream.export!
                    return (Reply.success(id: request.id, result: [
                        "workout": .string(workout.uuid.uuidString), "format": .string(format.rawValue),
                        "mediaType": .string(format.mediaType), "fileExtension": .string(format.fileExtension),
                        "bytes": .int(Int64(e.byteCount)), "chunkSize": .int(Int64(chunkSize)),
                    ]), true)
                } catch {
                    return (Reply.failure(id: request.id, error: WireError(error)), false)
                }
            }
            return { [self] in
                session.pendingReplies -= 1
                session.connection.write(reply)
                if started { stream.pump() } else { stream.end(); streamEnded(id: request.id, in: session, stream: stream) }
                finishIfIdle(session)
            }
        }
    }

    /// `workout.hrv {"workout"}` (saved workout or open session) or `{"from", "to", "device"}`
    /// → the HRV report with the artifact counts.
    func workoutHRV(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["workout", "from", "to", "device"])
        let id = try params.uuid("workout")
        let from = try params.time("from"), to = try params.time("to"), device = try params.address("device")
        guard id != nil || (from != nil && to != nil) else { throw .bad("give \"workout\", or \"from\" and \"to\"") }
        if let from, let to, from >= to { throw .bad("\"from\" must be before \"to\"") }
        let service = try workouts
        answer(request, session) { () throws(StrapError) in
            let report: HRVReport
            if let id {
                let workout = try Self.hrvWorkout(id, service)
                let samples = try WorkoutSamples.inTimeOrder(service.store, devices: workout.deviceIDs, types: [.heartbeatSeries],
                                                             range: WorkoutSamples.span(of: workout))
                report = HRVAnalysis.analyze(workout: workout, samples: samples, deviceID: device)
            } else {
                let range = from!..<to!
                let samples = try WorkoutSamples.inTimeOrder(service.store, devices: device.map { [$0] } ?? [], types: [.heartbeatSeries], range: range)
                report = HRVAnalysis.analyze(samples: samples, range: range, deviceID: device)
            }
            return try Self.json(report)
        }
    }

    /// A saved workout by its UUID or its session's; an open session is not exportable yet, nor
    /// is a workout without duration (its end at its start: the wall clock stepped back).
    static func savedWorkout(_ id: UUID, _ service: WorkoutService) throws(StrapError) -> Workout {
        if let w = try service.catalog.workout(id) {
            guard w.end > w.start else { throw .noData("workout \(w.uuid) has no duration (its end is not after its start): nothing to export") }
            return w
        }
        if let open = try? service.get(id), open.workout == nil {
            throw .invalidOption("workout session \(id) is \(open.session.state.rawValue): only a saved workout (after workout.end) can be exported")
        }
        throw .notFound("no saved workout \(id)")
    }

    /// For HRV an open session counts too: its span so far, its pauses left out.
    static func hrvWorkout(_ id: UUID, _ service: WorkoutService) throws(StrapError) -> Workout {
        if let w = try service.catalog.workout(id) { return w }
        let info = try service.get(id)
        if let w = info.workout { return w }
        guard let start = info.session.startDate else { throw .noData("workout session \(id) has not started") }
        return Workout(activityType: info.session.configuration.activityType.rawValue, start: start,
                       end: info.session.stopDate ?? service.now(), deviceIDs: info.session.deviceIDs,
                       events: info.session.events)
    }
}

/// One `workout.export`: chunks are produced on `queue` one at a time and written on the
/// connection's queue; above the connection's high-water mark production waits for the
/// output to drain, so memory stays bounded by one chunk plus the client's buffer.
final class ExportEventStream: RouterStream, @unchecked Sendable {
    /// Weak: a stream's last hop may run after the router is gone (a daemon stopped).
    private weak var router: RequestRouter?
    let session: ClientSession
    let id: RequestID
    /// Serial: the export stream is not Sendable and is only touched here.
    let queue: DispatchQueue
    var export: ExportStream?
    /// Confined to the connection's queue.
    private var producing = false
    private var retryScheduled = false
    private var waitingForDrain = false
    private var ended = false
    private var offset = 0
    private var chunks = 0

    init(router: RequestRouter, session: ClientSession, id: RequestID) {
        self.router = router
        self.session = session
        self.id = id
        queue = DispatchQueue(label: "strapd.export", target: router.worker)
    }

    /// At most this much of the export waits in the connection's buffer (about two chunks as
    /// base64): the daemon's memory for an export of any length stays near this plus one
    /// chunk, well below the client buffer's high-water mark.
    static let maximumQueued = 192 << 10

    /// On the connection's queue: produce the next chunk unless one is under way or the
    /// client is behind.
    func pump() {
        guard !ended, !producing, !retryScheduled else { return }
        if session.connection.isAboveHighWater { waitingForDrain = true; return }
        if session.connection.bufferedOutputCount >= Self.maximumQueued {
            // Below the high-water mark there is no drain callback: look again shortly.
            retryScheduled = true
            session.connection.queue.asyncAfter(deadline: .now() + .milliseconds(2)) { [self] in
                retryScheduled = false
                pump()
            }
            return
        }
        producing = true
        queue.async { [self] in
            let outcome: Result<[UInt8]?, ExportError>
            do throws(ExportError) { outcome = .success(try export?.nextChunk()) } catch { outcome = .failure(error) }
            session.connection.queue.async { [self] in
                producing = false
                guard !ended else { return }
                switch outcome {
                case .success(let chunk?):
                    let data = "{\"offset\":\(offset),\"data\":\"" + Data(chunk).base64EncodedString() + "\"}"
                    offset += chunk.count
                    chunks += 1
                    session.connection.write(Reply.event(id: id, kind: "chunk", dataJSON: Array(data.utf8)))
                    pump()
                case .success(nil):
                    finish("finished", ["bytes": .int(Int64(offset)), "chunks": .int(Int64(chunks))])
                case .failure(let error):
                    finish("error", ["code": .string("internal"), "message": .string("export failed: \(error)")])
                }
            }
        }
    }

    private func finish(_ kind: String, _ data: JSONObject) {
        session.connection.write(Reply.event(id: id, kind: kind, data: data))
        end()
        router?.streamEnded(id: id, in: session, stream: self)
    }

    func end() {
        ended = true
        queue.async { [self] in export = nil }
    }

    func outputDrained() {
        if waitingForDrain { waitingForDrain = false; pump() }
    }

    func cancel(notify: Bool) {
        guard !ended else { return }
        end()
        if notify { session.connection.write(Reply.event(id: id, kind: "cancelled", data: ["bytes": .int(Int64(offset))])) }
    }
}
