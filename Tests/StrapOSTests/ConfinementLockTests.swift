import Dispatch
import Glibc
import StrapOS
import Synchronization
import Testing

@Suite struct ConfinementLockTests {
    /// State behind the lock, as the store writer and the store stage keep theirs.
    final class Counter: @unchecked Sendable {
        let confinement = ConfinementLock()
        var value = 0
        /// Read-modify-write split by a yield, so two holders at once would lose increments.
        func bump() {
            confinement.withLock {
                confinement.assertHeld()
                let v = value
                sched_yield()
                value = v + 1
            }
        }
    }

    /// One holder at a time: increments from several threads all land, none is lost.
    @Test func holdersDoNotOverlap() {
        let counter = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 { counter.bump() }
        }
        #expect(counter.confinement.withLock { counter.value } == 4000)
    }

    /// A typed error thrown under the lock reaches the caller as that type, and the lock is
    /// free again afterwards (the next holder gets in).
    @Test func typedErrorsPassThroughAndFreeTheLock() {
        enum Refusal: Error, Equatable { case full }
        let lock = ConfinementLock()
        #expect(throws: Refusal.full) {
            try lock.withLock { () throws(Refusal) in throw .full }
        }
        let reached = Atomic<Bool>(false)
        DispatchQueue.global().sync { lock.withLock { reached.store(true, ordering: .relaxed) } }
        let afterwards = reached.load(ordering: .relaxed)
        #expect(afterwards)
    }
}
