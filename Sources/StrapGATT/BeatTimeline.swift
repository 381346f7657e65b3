/// Reconstructs beat times from RR intervals, which carry no timestamps
/// (docs/decoding.md#rr-beat-timeline-beattimeline).
///
/// Beats are placed by accumulating RR from the previous beat, so a packet's first beat
/// follows the previous packet's last beat by exactly its RR: the stream tiles. Two things
/// are unknown and are steered out slowly: where a run's first beat lies within its packet's
/// notification period, and how the strap's clock drifts from ours. A packet's beats happened
/// before it arrived, so over a window of recent packets the tightest one (least time from
/// its last beat to its arrival) bounds where the chain can be; a timer-driven strap's last
/// beat lies uniformly within the RR (or the notification period, if shorter) before its
/// notification, so the tightest of n packets is expected that span/(n+1) after it, and the
/// chain's target is that much before the bound. Each
/// packet moves the chain toward the target by at most a bounded step. When the receive clock and the RR sum disagree by more
/// than `gapTolerance`, or after a reconnect, the run restarts and its first beat is flagged.
public struct BeatTimeline: Sendable {
    public struct Beat: Sendable, Equatable {
        /// RR interval ending at this beat, 1/1024 s.
        public var rrRaw: UInt16
        /// Reconstructed time of the beat (same clock as the receive times given).
        public var time: Double
        /// When the packet carrying it arrived — kept apart from the reconstructed time.
        public var arrival: Double
        /// The run restarts here: beats were lost before this one (or the link restarted).
        public var gapBefore: Bool
    }

    /// Receive clock and RR sum disagreeing by more than this (seconds) restarts the run:
    /// more time passed than the RR covers (beats lost), or the RR covers more than passed.
    /// Notification period plus delivery jitter make up to ~1.5 s of slack normal.
    public var gapTolerance: Double
    /// Most the chain moves per packet once settled (seconds): 1 ms per ~1 s packet is
    /// 1000 ppm, ten times a strap crystal's drift, and below the 1/1024 s RR resolution.
    public var driftStep = 0.001
    /// Most the chain moves per packet in a run's first `settlingPackets` packets, while the
    /// position of the run's first beat within its notification period is still being found.
    public var settlingStep = 0.020
    public var settlingPackets = 30
    /// Packets kept to find the tightest one.
    public var window = 64
    /// A timer-driven strap notifies about once a second: a packet's last beat is at most
    /// this long before the packet (or one RR, if shorter).
    public var notificationPeriod = 1.0

    /// The beat that opened the latest packet's first interval (the previous packet's last beat,
    /// or the run's anchor when the latest packet restarted the run).
    public private(set) var opening: Double?
    /// How far the latest packet moved the chain (seconds; positive is later).
    public private(set) var lastCorrection = 0.0

    var lastBeat: Double?
    /// The chain without corrections: `base + ticks / 1024` is the last beat's uncorrected time.
    var base = 0.0
    var ticks: Int64 = 0
    var correction = 0.0
    /// Per packet of the window, the latest correction its last beat allows (it happened
    /// before the packet arrived).
    var latest: [Double] = []
    var slot = 0
    /// Recent mean RR (seconds), for the expected slack of the tightest packet.
    var recentRR = 0.0
    var packetsInRun = 0
    var restartPending = false

    public init(gapTolerance: Double = 1.5) { self.gapTolerance = gapTolerance }

    /// After a reconnect the strap's buffered beats are gone: the next packet restarts the run.
    public mutating func reset() {
        if lastBeat != nil { restartPending = true }
    }

    public mutating func append(rrIntervals: [UInt16], receivedAt arrival: Double) -> [Beat] {
        guard let lastRR = rrIntervals.last else { return [] }
        var sum: Int64 = 0
        for rr in rrIntervals { sum += Int64(rr) }
        var restart = lastBeat == nil || restartPending
        if !restart {
            let lag = arrival - (base + Double(ticks + sum) / 1024 + correction)
            restart = abs(lag) > gapTolerance
        }
        if restart {
            // A timer-driven strap's last beat lies somewhere in the RR (or period) before the
            // notification: its middle is the best first guess. Never before a beat already placed.
            var anchor = arrival - Double(sum) / 1024 - min(Double(lastRR) / 1024, notificationPeriod) / 2
            if let lastBeat { anchor = max(anchor, lastBeat) }
            base = anchor
            ticks = 0
            correction = 0
            latest.removeAll(keepingCapacity: true)
            slot = 0
            packetsInRun = 0
            recentRR = Double(sum) / 1024 / Double(rrIntervals.count)
        }
        let start = restart ? base : lastBeat ?? base
        ticks += sum
        recentRR += (Double(sum) / 1024 / Double(rrIntervals.count) - recentRR) / 16
        observe(arrival - (base + Double(ticks) / 1024))
        let target = (latest.min() ?? correction) - min(recentRR, notificationPeriod) / Double(latest.count + 1)
        let bound = packetsInRun < settlingPackets ? settlingStep : driftStep
        // Never shrinks the packet below nothing: its beats keep their order.
        let step = restart ? 0 : max(-bound, -Double(sum) / 1024, min(bound, target - correction))
        correction += step
        packetsInRun += 1
        lastCorrection = step
        opening = start

        var beats: [Beat] = []
        beats.reserveCapacity(rrIntervals.count)
        var offset: Int64 = 0
        var previous = start
        for (i, rr) in rrIntervals.enumerated() {
            offset += Int64(rr)
            // The step is spread over the packet, so no beat is ever placed before the one before it.
            // In exact arithmetic; a step that takes back the whole packet can land one ulp early
            // in floating point, so the order is also held explicitly.
            let share = sum == 0 ? 1 : Double(offset) / Double(sum)
            let time = max(previous, start + Double(offset) / 1024 + step * share)
            beats.append(Beat(rrRaw: rr, time: time, arrival: arrival,
                              gapBefore: restart && lastBeat != nil && i == 0))
            previous = time
        }
        lastBeat = beats[beats.count - 1].time
        restartPending = false
        return beats
    }

    private mutating func observe(_ bound: Double) {
        if latest.count < window { latest.append(bound) } else { latest[slot] = bound }
        slot = (slot + 1) % window
    }
}
