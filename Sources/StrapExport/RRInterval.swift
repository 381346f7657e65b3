import StrapModel

/// One heartbeat's RR interval, read from a `heartbeatSeries` sample.
public struct RRInterval: Sendable, Hashable, Codable {
    /// When the beat that ends the interval happened (Unix milliseconds, rounded).
    public var time: Millis
    /// The interval's length in milliseconds (the sensor's 1/1024 s value, converted).
    public var milliseconds: Double
    /// The interval must not be paired with the one before it: it is the first, or beats
    /// are missing before it (a gap, a reconnect, another pass of the timer).
    public var breakBefore: Bool

    public init(time: Millis, milliseconds: Double, breakBefore: Bool) {
        self.time = time
        self.milliseconds = milliseconds
        self.breakBefore = breakBefore
    }
}

/// Turns `heartbeatSeries` samples (in start order) into RR intervals with their breaks.
///
/// A series' beat offsets are seconds from its start, the beat before the first interval, so
/// interval i is `offset[i] - offset[i-1]` (with `offset[-1] = 0`); when the beat timeline had
/// to move a beat (`adjusted`), the sensor's raw values from the `rr` metadata are used.
/// A series starts a new run (its first interval gets `breakBefore`) when it says
/// `gapBefore` (lost beats, a reconnect, a clock step: the ingest flags them), or when its
/// start is more than `continuityTolerance` away from the previous series' last beat, which
/// still catches data stored before the ingest flagged reconnects.
/// Only one device's beats are read (two straps' beats interleaved would make nonsense
/// intervals): `deviceID` if given, else the first device that delivers a series.
struct RRReader: Sendable {
    /// BeatTimeline's own gap tolerance (1.5 s): reconstructed beat times jitter by up to
    /// about a notification period, so closer series are taken as continuous.
    static let continuityTolerance: Millis = 1_500

    private(set) var deviceID: String?
    private var lastBeat: Millis?

    init(deviceID: String? = nil) { self.deviceID = deviceID }

    /// Appends the intervals of `sample` if it is a heartbeat series of the chosen device.
    mutating func read(_ sample: Sample, into out: inout [RRInterval]) {
        guard sample.type == .heartbeatSeries else { return }
        if let deviceID { guard sample.device.id == deviceID else { return } } else { deviceID = sample.device.id }
        let beats = sample.beats
        guard !beats.isEmpty else { return }
        let metadata = sample.metadata
        var raw: [Double]?
        if metadata["adjusted"] == "true", let list = metadata["rr"] {
            let values = list.split(separator: ",").compactMap { Double($0) }
            if values.count == beats.count { raw = values.map { $0 * 1000 / 1024 } }
        }
        var breakNext = metadata["gapBefore"] == "true" || lastBeat == nil
        if let lastBeat, abs(sample.start - lastBeat) > Self.continuityTolerance { breakNext = true }
        var previous = 0.0
        for (i, offset) in beats.enumerated() {
            let ms = raw?[i] ?? (offset - previous) * 1000
            previous = offset
            let time = sample.start + Millis((offset * 1000).rounded())
            out.append(RRInterval(time: time, milliseconds: ms, breakBefore: breakNext))
            breakNext = false
            lastBeat = time
        }
    }

    /// The next interval is not paired with the last one read (a pause in between).
    mutating func breakRun() { lastBeat = nil }
}
