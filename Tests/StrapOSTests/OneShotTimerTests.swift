import Dispatch
import Glibc
import StrapOS
import Testing

@Suite struct OneShotTimerTests {
    private func monotonicMillis() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }

    /// `wait` returns once the armed time has passed, not before; a later arming replaces an
    /// earlier one (the syncer's `stop` relies on that to end a sleep at once).
    @Test func expiresAfterItsArmingAndARearmingReplacesIt() throws {
        let timer = try OneShotTimer()
        let t0 = monotonicMillis()
        try timer.arm(afterNanoseconds: 30_000_000)
        try timer.wait()
        #expect(monotonicMillis() - t0 >= 29)

        let t1 = monotonicMillis()
        try timer.arm(afterNanoseconds: 60_000_000_000)
        try timer.arm(afterNanoseconds: 1)
        try timer.wait()
        #expect(monotonicMillis() - t1 < 30_000, "the one-minute arming was not replaced")
    }

    /// An expiry nobody waited for is not lost: the next `wait` returns at once.
    @Test func anExpiryBeforeTheWaitIsKept() throws {
        let timer = try OneShotTimer()
        try timer.arm(afterNanoseconds: 1_000_000)
        usleep(20_000)
        let t0 = monotonicMillis()
        try timer.wait()
        #expect(monotonicMillis() - t0 < 30_000)
    }
}
