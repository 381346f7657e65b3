import Dispatch
import FoundationEssentials
import StrapKit
import StrapWire
import Synchronization

/// The saved workouts' read endpoints (docs/web.md, "The history API"): strapd's answers
/// passed through, never recomputed here. Every figure of a workout (summary, laps, zone
/// times, HRV) is the daemon's; strapd-web only adds the workout's stored heart-rate samples,
/// each as the store holds it, and streams the daemon's export bytes.
enum HistoryAPI {
    static let listPath = "/api/workouts"
    /// The documented shapes of the per-workout paths (OpenAPI's templates).
    static let workoutPath = "/api/workouts/{id}"
    static let exportPath = "/api/workouts/{id}/export"
    static let paths = [listPath, workoutPath, exportPath]

    /// A request path under `/api/workouts/`: the workout's id and whether it asks for the export.
    enum Route: Equatable {
        case workout(String)
        case export(String)

        init?(_ path: String) {
            guard path.hasPrefix(listPath + "/") else { return nil }
            let parts = path.dropFirst(listPath.count + 1).split(separator: "/", omittingEmptySubsequences: false)
            switch parts.count {
            case 1 where !parts[0].isEmpty: self = .workout(String(parts[0]))
            case 2 where !parts[0].isEmpty && parts[1] == "export": self = .export(String(parts[0]))
            default: return nil
            }
        }

        var template: String {
            switch self {
            case .workout: HistoryAPI.workoutPath
            case .export: HistoryAPI.exportPath
            }
        }
    }

    /// Heart-rate samples asked for per `samples.anchored` page; a page is also cut below
    /// strapd's reply limit, and the next one continues from its anchor either way.
    static let pageSize: Int64 = 10_000

    /// `workout.list`'s saved workouts, unchanged, newest first.
    static func list(_ link: DaemonLink, limit: String?) -> HTTPResponse {
        var params: JSONObject = [:]
        if let limit {
            guard let n = Int64(limit), (1...10_000).contains(n) else {
                return WebApp.json(400, WorkoutAPI.errorBody("limit: '\(limit.prefix(32))' is not a whole number from 1 to 10000"))
            }
            params["limit"] = .int(n)
        }
        return answer {
            let r = try link.request("workout.list", params)
            return ["workouts": r["workouts"] ?? .array([])]
        }
    }

    /// One saved workout as `workout.get` gives it, plus its stored heart-rate samples:
    /// `{"workout": {...}, "heartRate": {"count": N, "samples": [{"start", "value"}, ...]}}`.
    static func workout(_ link: DaemonLink, id: String) -> HTTPResponse {
        guard let uuid = UUID(uuidString: id)?.uuidString else { return notAWorkout(id) }
        return answer {
            let r = try link.request("workout.get", ["session": .string(uuid)])
            // An open or recently ended session answers in the session's shape; only a saved
            // workout belongs to the history.
            guard case .object(let workout)? = r["workout"], case .string(let stored)? = workout["uuid"] else {
                throw HistoryError.notSaved(uuid)
            }
            let samples = try heartRates(link, workout: stored)
            return ["workout": .object(workout),
                    "heartRate": .object(["count": .int(Int64(samples.count)), "samples": .array(samples)])]
        }
    }

    /// Every heart-rate sample the store holds for the workout (its devices, within its span),
    /// in the store's order, cut to its time and value.
    static func heartRates(_ link: DaemonLink, workout: String) throws(DaemonLinkError) -> [JSONValue] {
        var samples: [JSONValue] = []
        var anchor: Int64 = 0
        while true {
            let page = try link.request("samples.anchored", ["types": .array([.string("heartRate")]),
                                                             "predicate": .object(["workout": .string(workout)]),
                                                             "anchor": .int(anchor), "limit": .int(pageSize)])
            guard case .array(let added)? = page["added"], !added.isEmpty, case .int(let next)? = page["anchor"], next > anchor else {
                return samples
            }
            for case .object(let s) in added {
                samples.append(.object(["start": s["start"] ?? .null, "value": s["value"] ?? .null]))
            }
            anchor = next
        }
    }

    /// `GET /api/workouts/{id}/export?format=`: strapd's file, streamed as it arrives, with
    /// its exact size as Content-Length.
    static func export(_ link: DaemonLink, id: String, format: String?) -> HTTPResponse {
        guard let format = WorkoutFile.Format(rawValue: format ?? "fit") else {
            return WebApp.json(400, WorkoutAPI.errorBody("format: '\((format ?? "").prefix(32))' is not fit, tcx or csv"))
        }
        guard let uuid = UUID(uuidString: id)?.uuidString else { return notAWorkout(id) }
        let file: WorkoutFile
        do {
            file = try link.run("workout.export") { store in try await store.exportWorkout(uuid, format: format) }
        } catch {
            return WebApp.json(WorkoutAPI.status(for: error), WorkoutAPI.errorBody(error.description, code: WebApp.code(error)))
        }
        let name = "\(file.workout.lowercased()).\(file.fileExtension)"
        return HTTPResponse(status: 200, headers: [("Content-Type", file.mediaType),
                                                   ("Content-Disposition", "attachment; filename=\"\(name)\"")],
                            body: .stream(ExportStream(file)))
    }

    private static func notAWorkout(_ id: String) -> HTTPResponse {
        WebApp.json(404, WorkoutAPI.errorBody("no saved workout '\(id.prefix(64))': a workout's id is a UUID"))
    }

    enum HistoryError: Error { case notSaved(String) }

    private static func answer(_ make: () throws -> JSONObject) -> HTTPResponse {
        do {
            return WebApp.json(200, try make())
        } catch let error as DaemonLinkError {
            return WebApp.json(WorkoutAPI.status(for: error), WorkoutAPI.errorBody(error.description, code: WebApp.code(error)))
        } catch HistoryError.notSaved(let id) {
            return WebApp.json(404, WorkoutAPI.errorBody("\(id) is a session that has not been saved", code: "notFound"))
        } catch {
            return WebApp.json(500, WorkoutAPI.errorBody("\(error)"))
        }
    }
}

/// One export's bytes for libmicrohttpd's connection thread: a task reads StrapKit's chunks
/// into a queue, `next` takes them. A broken stream ends the response with an error (the
/// connection is closed short of Content-Length), so a client never mistakes a part for the
/// file. The queue is not bounded: strapd's own flow control stops at the socket, so a slow
/// client holds at most the file (see docs/web.md).
final class ExportStream: ResponseStream, Sendable {
    private struct Queue {
        var chunks: [[UInt8]] = []
        var outcome: StreamChunk?
    }
    /// What the reading task and the connection's thread share.
    private final class Buffer: Sendable {
        let queue = Mutex(Queue())
        let ready = DispatchSemaphore(value: 0)

        func put(_ chunk: [UInt8]) {
            queue.withLock { $0.chunks.append(chunk) }
            ready.signal()
        }

        func close(_ outcome: StreamChunk) {
            queue.withLock { $0.outcome = outcome }
            ready.signal()
        }
    }
    private let buffer = Buffer()
    private let reader: Task<Void, Never>
    let size: UInt64?

    init(_ file: WorkoutFile) {
        size = UInt64(file.byteCount)
        let buffer = buffer
        reader = Task {
            do {
                for try await chunk in file.chunks { buffer.put(chunk) }
                buffer.close(.end)
            } catch {
                buffer.close(.failed)
            }
        }
    }

    func next() -> StreamChunk {
        while true {
            let taken = buffer.queue.withLock { q -> StreamChunk? in
                if !q.chunks.isEmpty { return .data(q.chunks.removeFirst()) }
                return q.outcome
            }
            if let taken { return taken }
            buffer.ready.wait()
        }
    }

    func finish() { reader.cancel() }
}
