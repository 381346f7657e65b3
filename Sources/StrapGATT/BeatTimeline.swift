/// Reconstructs beat times from RR intervals, which carry no timestamps
/// (docs/decoding.md#rr-beat-timeline-beattimeline).
///
/// The last RR of a packet ends at (about) the packet's receive time, so beats are placed by
/// walking back from there. Beats never go backwards across packets. When the RR sum since
/// the previous anchor falls far short of the wall time between the anchors, beats were lost
/// (a disconnect, or the sensor discarded its oldest RR) and the first beat is flagged.
public struct BeatTimeline: Sendable {
    public struct Beat: Sendable, Equatable {
        /// RR interval ending at this beat, 1/1024 s.
        public var rrRaw: UInt16
        /// Reconstructed time of the beat (same clock as the receive times given).
        public var time: Double
        /// When the packet carrying it arrived — kept apart from the reconstructed time.
        public var arrival: Double
        /// Beats are missing before this one.
        public var gapBefore: Bool
        /// The walk-back placed this beat at or before the previous one, so it was moved forward.
        public var adjusted: Bool
    }

    /// Wall time not covered by RR beyond which a gap is flagged. Notification delivery
    /// jitter plus the ~1 s notification period make up to ~1.5 s of slack normal.
    public var gapTolerance: Double
    /// A beat is never placed closer than this after the previous one.
    public var minimumSpacing: Double = 0.001

    var lastBeat: Double?
    var lastAnchor: Double?

    public init(gapTolerance: Double = 1.5) { self.gapTolerance = gapTolerance }

    /// After a reconnect the previous anchor says nothing about the next packet.
    public mutating func reset() {
        lastBeat = nil
        lastAnchor = nil
    }

    public mutating func append(rrIntervals: [UInt16], receivedAt arrival: Double) -> [Beat] {
        guard !rrIntervals.isEmpty else { return [] }
        var sum = 0.0
        for rr in rrIntervals { sum += Double(rr) / 1024 }
        var gap = false
        if let lastAnchor, arrival - lastAnchor - sum > gapTolerance { gap = true }
        var beats: [Beat] = []
        beats.reserveCapacity(rrIntervals.count)
        // Walk back from the anchor: the beat ending interval i is followed by intervals i+1...
        var time = arrival - sum
        for (i, rr) in rrIntervals.enumerated() {
            time += Double(rr) / 1024
            var placed = time
            var adjusted = false
            if let previous = beats.last?.time ?? lastBeat, placed < previous + minimumSpacing {
                placed = previous + minimumSpacing
                adjusted = true
            }
            beats.append(Beat(rrRaw: rr, time: placed, arrival: arrival, gapBefore: gap && i == 0, adjusted: adjusted))
        }
        lastBeat = beats.last?.time
        lastAnchor = arrival
        return beats
    }
}
