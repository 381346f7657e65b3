/// What every simulated sensor does the same way: announce itself once, then walk its
/// `LinkSchedule` — notification slots, dropouts, reconnects with the connect reads — while its
/// own physics advance to each moment. A device supplies only the physics and the packets.
protocol LinkDrivenDevice: SimulatedDevice {
    var link: LinkSchedule { get set }
    var rng: SimulationRandom { get set }
    var announced: Bool { get set }
    /// Advances the device's own state (beats, revolutions, distance) to `t`.
    mutating func progress(to t: Double)
    /// The notifications of one slot at `t`, state already advanced to `t`.
    mutating func notifications(at t: Double) -> [(Double, SimulatedEvent)]
    /// The values read on every (re)connect, after `.connected`.
    func connectReads() -> [SimulatedEvent]
    /// Called when the link comes back, after the device advanced to the reconnect time.
    mutating func linkRestored()
    /// The same, for a device that needs the time (by default `linkRestored()`).
    mutating func linkRestored(at t: Double)
    /// Called when the link drops at `t`, after the device advanced to it: what a device
    /// forgets with its link (a trainer's control) it forgets here.
    mutating func linkDropped(at t: Double)
}

extension LinkDrivenDevice {
    mutating func linkRestored() {}
    mutating func linkRestored(at t: Double) { linkRestored() }
    mutating func linkDropped(at t: Double) {}

    public var nextEventTime: Double { announced ? link.nextEventTime : 0 }

    func connectEvents(at t: Double) -> [(Double, SimulatedEvent)] {
        [(t, .connected)] + (identity.connectReads + connectReads()).map { (t, $0) }
    }

    public mutating func advance(to time: Double) -> [(time: Double, event: SimulatedEvent)] {
        var events: [(Double, SimulatedEvent)] = []
        if !announced {
            announced = true
            events += connectEvents(at: 0)
        }
        while true {
            // Copied out: the link and the generator are two parts of `self` mutated together.
            var schedule = link, random = rng
            let step = schedule.next(upTo: time, rng: &random)
            link = schedule
            rng = random
            guard let step else { break }
            switch step {
            case let .slot(t):
                progress(to: t)
                events += notifications(at: t)
            case let .dropped(t, reason):
                progress(to: t)
                linkDropped(at: t)
                events.append((t, .disconnected(reason: reason)))
            case let .restored(t):
                progress(to: t)
                linkRestored(at: t)
                events += connectEvents(at: t)
            }
        }
        return events
    }
}
