import Testing
@testable import StrapDaemon

/// When the daemon hands freed heap and unused code pages back to the kernel.
@Suite struct MemoryReturnScheduleTests {
    /// Runs `connected.count` ticks; returns the ticks (1-based) at which memory went back.
    func returns(_ connected: [Int]) -> [Int] {
        var schedule = MemoryReturnSchedule()
        return connected.enumerated().compactMap { i, n in schedule.tick(connected: n) ? i + 1 : nil }
    }

    @Test func quietDaemonReturnsOnceAMinute() {
        #expect(returns(Array(repeating: 0, count: 90)) == [30, 60, 90])
    }

    @Test func sensorsComingUpReturnAtEachChangeAndOnceMoreWhenSettled() {
        // Four sensors up at ticks 3, 4, 5 and 6, then nothing changes.
        let connected = [0, 0, 1, 2, 3, 4] + Array(repeating: 4, count: 30)
        #expect(returns(connected) == [3, 4, 5, 6, 6 + MemoryReturnSchedule.settleTicks, 30])
    }

    @Test func aSensorLostReturnsToo() {
        var connected = Array(repeating: 2, count: 20)
        connected[0...1] = [1, 2]
        connected[12...] = [1, 1, 1, 1, 1, 1, 1, 1]
        #expect(returns(connected) == [1, 2, 2 + 5, 13, 13 + 5])
    }
}
