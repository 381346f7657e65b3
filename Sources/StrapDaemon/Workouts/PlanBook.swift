import FoundationEssentials
import StrapModel
import Synchronization

/// The saved structured workouts (`plans.json` in the state directory, docs/workouts.md
/// "Structured workouts"): written whole and atomically on every change, as the profile book
/// is, and only then in force. A file that does not decode is moved aside and reported; one a
/// newer strapd wrote is refused (docs/storage.md, "Format versions").
public final class PlanBook: Sendable {
    public static let fileName = "plans.json"
    public static let formatVersion = 1
    public static let maximumPlans = 1024

    public let path: String
    private let persist: ProfileBook.Persist
    private let plans: Mutex<[UUID: WorkoutPlan]>
    /// What was wrong with the file at start-up, if anything (the daemon logs it).
    public let loadProblem: String?

    /// Keyed by the lowercase UUID text: a dictionary keyed by `UUID` itself would encode as
    /// an array of alternating keys and values.
    private struct File: Codable {
        var version: Int
        var plans: [String: WorkoutPlan]
    }

    /// A book kept only in memory (tests, the benchmark).
    public init() {
        path = ""
        persist = { _, _ throws(StrapError) in }
        loadProblem = nil
        plans = Mutex([:])
    }

    public init(directory: String, load: ProfileBook.Load, persist: @escaping ProfileBook.Persist,
                quarantine: (_ path: String) throws(StrapError) -> String) throws(StrapError) {
        path = directory + "/" + Self.fileName
        self.persist = persist
        let (loaded, problem) = try VersionedBook.load(path: path, kind: "plan book", supported: Self.formatVersion, load: load,
                                                       quarantine: quarantine, startingWith: "no saved plans", decode: Self.decode)
        loadProblem = problem
        plans = Mutex(loaded ?? [:])
    }

    static func decode(_ bytes: [UInt8]) throws(StrapError) -> [UUID: WorkoutPlan] {
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: Data(bytes)) } catch {
            throw .invalidOption("not a valid plan book (\(error))")
        }
        guard file.version == formatVersion else { throw .invalidOption("version \(file.version); this strapd reads version \(formatVersion)") }
        var out: [UUID: WorkoutPlan] = [:]
        for (key, plan) in file.plans {
            guard let id = UUID(uuidString: key) else { throw .invalidOption("plan id \"\(key)\" is not a UUID") }
            do throws(StrapError) { try plan.validate() } catch { throw .invalidOption("plan \(key): \(error)") }
            out[id] = plan
        }
        return out
    }

    public func plan(_ id: UUID) -> WorkoutPlan? { plans.withLock { $0[id] } }

    /// Every plan, by name then id: a stable order for lists.
    public var all: [(id: UUID, plan: WorkoutPlan)] {
        plans.withLock { $0.map { (id: $0.key, plan: $0.value) } }
            .sorted { ($0.plan.name, $0.id.uuidString) < ($1.plan.name, $1.id.uuidString) }
    }

    /// Saves `plan` under `id` (a new one when nil), validated first; on any error nothing changes.
    @discardableResult
    public func save(_ plan: WorkoutPlan, id: UUID? = nil) throws(StrapError) -> UUID {
        try plan.validate()
        return try plans.withLock { all throws(StrapError) -> UUID in
            let key = id ?? UUID()
            if all[key] == nil && all.count >= Self.maximumPlans {
                throw .invalidOption("at most \(Self.maximumPlans) plans can be saved")
            }
            var next = all
            next[key] = plan
            try write(next)
            all = next
            return key
        }
    }

    /// Removes a plan; `notFound` when there is none with that id.
    public func delete(_ id: UUID) throws(StrapError) {
        try plans.withLock { all throws(StrapError) in
            guard all[id] != nil else { throw .notFound("no plan \(id.uuidString.lowercased())") }
            var next = all
            next[id] = nil
            try write(next)
            all = next
        }
    }

    private func write(_ all: [UUID: WorkoutPlan]) throws(StrapError) {
        guard !path.isEmpty else { return }
        let file = File(version: Self.formatVersion,
                        plans: Dictionary(uniqueKeysWithValues: all.map { ($0.key.uuidString.lowercased(), $0.value) }))
        try persist(path, try VersionedBook.encode(file, kind: "plan book"))
    }
}
