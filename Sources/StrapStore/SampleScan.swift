import StrapModel

extension Store {
    /// The samples matching `predicate` in commit (anchor) order, read as they are iterated and
    /// never collected: a whole workout's samples in bounded memory (exports, HRV). Only the
    /// segments whose time bounds overlap the predicate's are read, and within them each record
    /// once; `samples(matching:)` is the sorted, collected form. Each iteration reads the
    /// durable snapshot of its start.
    public func scan(matching predicate: SamplePredicate) throws(StrapError) -> SampleScan {
        SampleScan(store: self, predicate: try resolve(predicate))
    }
}

public struct SampleScan: Sequence, Sendable {
    let store: Store
    let predicate: SamplePredicate

    public struct Iterator: IteratorProtocol {
        private var cursor: LogCursor
        private let predicate: SamplePredicate
        private let types: Set<QuantityType>?
        private let snapshot: Published

        init(store: Store, predicate: SamplePredicate) {
            let snap = store.shared.snapshot
            let bounds = predicate.timeBounds
            cursor = LogCursor(store, from: snap.oldest, snapshot: snap,
                               segments: store.segments(snap, from: bounds.from, to: bounds.to))
            cursor.dropsPagesBehind = true
            self.predicate = predicate
            types = predicate.typeBounds
            snapshot = snap
        }

        public mutating func next() -> Sample? {
            while let item = cursor.next() {
                if case .sample(let s) = item, types?.contains(s.type) ?? true,
                   !snapshot.deleted.contains(s.anchor), predicate.matches(s) {
                    return s
                }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(store: store, predicate: predicate) }
}
