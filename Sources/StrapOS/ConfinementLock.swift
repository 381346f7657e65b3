import Glibc
import Synchronization

/// Confines state the way a serial queue's `sync` did, for state that is only ever reached
/// synchronously (or from a block that takes the lock itself): one holder at a time, the body
/// run on the calling thread. `DispatchQueue.sync` on Linux goes through the Dispatch overlay's
/// generic helper, which allocated twice and cost about 2.5 k instructions per call; on the
/// notification path the store stage and the store writer paid it once each per notification
/// (docs/benchmarks.md). An uncontended lock is a few atomic operations and no allocation.
///
/// `assertHeld()` stands where `dispatchPrecondition(condition: .onQueue(q))` stood: it traps
/// when the calling thread does not hold the lock. Not recursive: taking it while holding it
/// deadlocks, as `sync` onto one's own queue did.
public final class ConfinementLock: @unchecked Sendable {
    @usableFromInline let mutex = Mutex<Void>(())
    /// The holder's thread (pthread_t), 0 while free. Written only by the holder, so a thread
    /// reading its own id here holds the lock.
    @usableFromInline let holder = Atomic<UInt>(0)

    public init() {}

    @inlinable
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try mutex.withLock { _ throws(E) -> T in
            holder.store(UInt(pthread_self()), ordering: .relaxed)
            defer { holder.store(0, ordering: .relaxed) }
            return try body()
        }
    }

    /// Traps unless the calling thread holds the lock.
    @inlinable
    public func assertHeld(file: StaticString = #fileID, line: UInt = #line) {
        precondition(holder.load(ordering: .relaxed) == UInt(pthread_self()), "state reached without its confinement lock",
                     file: file, line: line)
    }
}
