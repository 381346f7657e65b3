/// The link side every simulated device shares: a notification period and dropouts.
/// Devices ask it which notification slots fall before a time and whether the link is up.
struct LinkSchedule: Sendable {
    var period: Double
    var dropouts: DropoutSchedule
    var nextSlot: Double
    var nextDropout: (start: Double, end: Double)?
    var isConnected = true

    init(period: Double, phase: Double, dropouts: DropoutSchedule, rng: inout SimulationRandom) {
        self.period = period
        self.dropouts = dropouts
        nextSlot = phase
        nextDropout = dropouts.nextDropout(after: 0, using: &rng)
    }

    /// The first dropout comes no earlier than `time` (the demo's scripted minutes).
    mutating func postponeDropouts(until time: Double) {
        if let d = nextDropout, d.start < time { nextDropout = (time + d.start, time + d.end) }
    }

    enum Step { case slot(Double), dropped(Double, String), restored(Double) }

    /// When `next(upTo:)` will next have something (a slot, or the link dropping or coming back).
    var nextEventTime: Double {
        guard let d = nextDropout else { return nextSlot }
        return min(nextSlot, isConnected ? d.start : d.end)
    }

    /// The next thing that happens no later than `time`, if any, in time order.
    mutating func next(upTo time: Double, rng: inout SimulationRandom) -> Step? {
        while true {
            if let d = nextDropout {
                if isConnected && d.start <= time && d.start <= nextSlot {
                    isConnected = false
                    let reason = rng.next() % 2 == 0 ? "connection timeout (0x08)" : "remote user terminated (0x13)"
                    return .dropped(d.start, reason)
                }
                if !isConnected && d.end <= time && d.end <= nextSlot {
                    isConnected = true
                    nextDropout = dropouts.nextDropout(after: d.end, using: &rng)
                    return .restored(d.end)
                }
            }
            guard nextSlot <= time else { return nil }
            let slot = nextSlot
            nextSlot += period
            // While disconnected the sensor notifies nobody: its slots pass unseen.
            if isConnected { return .slot(slot) }
        }
    }
}
