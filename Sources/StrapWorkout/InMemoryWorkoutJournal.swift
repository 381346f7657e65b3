import FoundationEssentials
import StrapModel

/// A `WorkoutJournal` in memory, for tests and tools: what a crash would have left is
/// `entries`. Failures can be injected to check that a failed write changes nothing.
public final class InMemoryWorkoutJournal: WorkoutJournal {
    public private(set) var entries: [UUID: [SessionJournalEntry]] = [:]
    /// Saved workouts by session (at most one each).
    public private(set) var saved: [UUID: Workout] = [:]
    public private(set) var saveCount = 0
    /// The next call of that kind throws this error (then the injection is cleared).
    public var failNextAppend: StrapError?
    public var failNextSync: StrapError?
    public var failNextSave: StrapError?
    public var failNextRemove: StrapError?
    private var nextAnchor: UInt64 = 1
    /// Entries at the end of a session's journal written with `durably: false`, not synced since.
    private var unsynced: [UUID: Int] = [:]

    public init() {}

    public func append(_ entry: SessionJournalEntry, session: UUID, durably: Bool) throws(StrapError) {
        if let e = failNextAppend { failNextAppend = nil; throw e }
        if case .created = entry {
            guard entries[session] == nil else { throw .internal("session \(session) is already journaled") }
        } else if entries[session] == nil {
            throw .internal("session \(session) has no journal")
        }
        entries[session, default: []].append(entry)
        if durably { unsynced[session] = nil } else { unsynced[session, default: 0] += 1 }
    }

    public func sync(session: UUID) throws(StrapError) {
        if let e = failNextSync { failNextSync = nil; throw e }
        unsynced[session] = nil
    }

    /// What a crash would leave of the session's journal: its entries but those not synced.
    public func durableEntries(_ session: UUID) -> [SessionJournalEntry] {
        Array((entries[session] ?? []).dropLast(unsynced[session] ?? 0))
    }

    public func save(_ workout: Workout, session: UUID) throws(StrapError) -> Workout {
        if let e = failNextSave { failNextSave = nil; throw e }
        if let w = saved[session] { return w }
        var w = workout
        w.anchor = nextAnchor
        w.uuid = UUID(uuid: (0x57, 0x4f, 0x52, 0x4b, 0, 0, 0x80, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: nextAnchor)))
        nextAnchor += 1
        saved[session] = w
        saveCount += 1
        return w
    }

    public func remove(session: UUID) throws(StrapError) {
        if let e = failNextRemove { failNextRemove = nil; throw e }
        entries[session] = nil
        unsynced[session] = nil
    }
}
