/// When the daemon hands memory back to the kernel (freed heap through `MallocArenas.trim`,
/// unused code pages through `CodePages.release`), decided once per status tick (2 s).
///
/// Once a minute, so that what a quiet minute did not touch leaves the RSS. And when the
/// number of connected sensors changes, plus once more `settleTicks` later: pairing, GATT
/// discovery, subscribing and the first reads run once per link, map much code and leave
/// freed heap behind, and the sensors of a box usually come up together, still subscribing
/// and reading for a few seconds after their links are up. Without the second round, the
/// first minute of the RSS users compare was the start-up's (docs/benchmarks.md).
struct MemoryReturnSchedule {
    static let everyTicks = 30
    static let settleTicks = 5

    private var tick = 0
    private var lastConnected = 0
    private var settleAt: Int?

    /// The next tick, with the connected count now; true when memory goes back at this tick.
    mutating func tick(connected: Int) -> Bool {
        tick &+= 1
        var due = tick % Self.everyTicks == 0
        if connected != lastConnected {
            lastConnected = connected
            settleAt = tick &+ Self.settleTicks
            due = true
        } else if tick == settleAt {
            settleAt = nil
            due = true
        }
        return due
    }
}
