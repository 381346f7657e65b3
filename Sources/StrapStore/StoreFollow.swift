import StrapModel

extension Store {
    /// Follow mode (docs/product.md §4.1): catches up from `anchor` in pages of `limit`, then keeps
    /// yielding new durable items as they commit. Each page continues exactly where the
    /// previous ended, so the switch from catch-up to live has no gap and no duplicate.
    /// Empty pages are not yielded. Ends when the consumer stops iterating or the store closes.
    public func follow(types: Set<ObjectType>? = nil, predicate: SamplePredicate? = nil,
                       from anchor: UInt64 = 0, limit: Int = 4096) -> AsyncThrowingStream<AnchoredResult, Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingOldest(4)) { continuation in
            let task = Task.detached { [self] in
                var a = anchor
                do {
                    while !Task.isCancelled {
                        let r = try anchored(types: types, predicate: predicate, anchor: a, limit: limit)
                        if !r.added.isEmpty || !r.deleted.isEmpty {
                            // Back-pressure: wait while the consumer's small buffer is full, so a
                            // slow follower pauses at its anchor instead of growing memory.
                            while case .dropped = continuation.yield(r) {
                                if Task.isCancelled { return }
                                try await Task.sleep(nanoseconds: 1_000_000)
                            }
                        }
                        if r.anchor == a {
                            if shared.isClosed { break }
                            await shared.waitDurable(beyond: a)
                        }
                        a = r.anchor
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// What `Store.observeCommits` returns: the observer is called until `cancel()`.
public final class CommitObservation: Sendable {
    private let shared: StoreShared
    private let id: Int

    init(shared: StoreShared, id: Int) {
        self.shared = shared
        self.id = id
    }

    /// No call starts after this returns (one already running may finish).
    public func cancel() { shared.removeObserver(id) }

    deinit { shared.removeObserver(id) }
}

extension Store {
    /// Calls `observer` once per published durable position (each group commit, each append
    /// with `sync = none`, each segment roll that advances it) with the new latest anchor, on
    /// the thread that published it. This is the hook a follow engine wakes on without
    /// polling: `observer` must return quickly (signal a queue, no store calls), and may be
    /// called concurrently from two committing threads, so a smaller anchor can arrive after a
    /// larger one.
    public func observeCommits(_ observer: @escaping @Sendable (_ latestAnchor: UInt64) -> Void) -> CommitObservation {
        CommitObservation(shared: shared, id: shared.addObserver(observer))
    }
}
