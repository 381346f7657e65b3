import FoundationEssentials
import StrapModel
import StrapStore
import Synchronization

/// An index of the saved workouts, for `workout.list` and for finding a workout by the session
/// it came from. The store is the truth: the index is built by one anchored pass over it the
/// first time it is needed (workout records are few, but finding them reads the log), kept up to
/// date from then on, and holds only small entries; each workout is read from the store when
/// asked for, so a deleted one is never served.
public final class WorkoutCatalog: Sendable {
    public struct Entry: Sendable, Hashable {
        public var uuid: UUID
        public var anchor: UInt64
        public var sessionID: UUID?
        public var start: Millis
        public var end: Millis
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        /// Everything up to this anchor has been read into `entries`.
        var anchor: UInt64 = 0
    }

    private let store: Store
    private let state = Mutex<State?>(nil)
    private let loading = Mutex<Void>(())

    public init(store: Store) { self.store = store }

    /// Called when the daemon saves a workout (the next refresh would find it too).
    public func add(_ w: Workout) {
        state.withLock { s in
            s?.entries[w.anchor] = Entry(uuid: w.uuid, anchor: w.anchor, sessionID: w.sessionID, start: w.start, end: w.end)
        }
    }

    /// Reads what was committed since the last refresh (workouts saved by other paths, deletions).
    private func refresh() throws(StrapError) -> [Entry] {
        try loading.withLock { _ throws(StrapError) -> [Entry] in
            var s = state.withLock { $0 } ?? State()
            var expired: UInt64?
            while true {
                let page: AnchoredResult
                do throws(StrapError) {
                    page = try store.anchored(types: [.workout], anchor: s.anchor, limit: 4096)
                } catch {
                    // Retention dropped segments past the index's anchor while it was idle. The
                    // items there are gone with their segments, so jump over them as the MQTT
                    // publisher does: an entry at or below `oldest` named a workout in a dropped
                    // segment, and a tombstone for a kept workout lies after it, in a kept one.
                    guard case .anchorExpired(let oldest) = error else { throw error }
                    s.entries = s.entries.filter { $0.key > oldest }
                    s.anchor = oldest
                    expired = oldest
                    continue
                }
                for case .workout(let w) in page.added {
                    s.entries[w.anchor] = Entry(uuid: w.uuid, anchor: w.anchor, sessionID: w.sessionID, start: w.start, end: w.end)
                }
                for d in page.deleted { s.entries = s.entries.filter { $0.value.uuid != d.uuid } }
                if page.anchor <= s.anchor { break }
                s.anchor = page.anchor
            }
            let snapshot = s
            state.withLock { current in
                // Keep what `add` put in meanwhile.
                var merged = snapshot
                for (a, e) in current?.entries ?? [:] where merged.entries[a] == nil && a > (expired ?? 0) { merged.entries[a] = e }
                current = merged
            }
            return Array(snapshot.entries.values)
        }
    }

    /// Saved workouts overlapping [from, to), newest first, at most `limit`.
    public func workouts(from: Millis?, to: Millis?, limit: Int) throws(StrapError) -> [Workout] {
        let entries = try refresh()
            .filter { e in (from.map { e.end >= $0 } ?? true) && (to.map { e.start < $0 } ?? true) }
            .sorted { ($0.start, $0.anchor) > ($1.start, $1.anchor) }
        var out: [Workout] = []
        for e in entries where out.count < limit {
            if let w = try store.workout(e.uuid) { out.append(w) }
        }
        return out
    }

    /// A saved workout by its own UUID or by the session it came from.
    public func workout(_ id: UUID) throws(StrapError) -> Workout? {
        if let w = try store.workout(id) { return w }
        let known = state.withLock { s in s?.entries.values.first { $0.sessionID == id } }
        if let e = known { return try store.workout(e.uuid) }
        if let e = try refresh().first(where: { $0.sessionID == id }) { return try store.workout(e.uuid) }
        return nil
    }
}
