import StrapModel

/// Count, sum, min, max and the value of the newest sample (by time, not arrival) of a
/// discrete quantity.
struct DiscreteStat: Sendable, Hashable {
    var count = 0
    var sum = 0.0
    var min = Double.infinity
    var max = -Double.infinity
    var lastTime = Millis.min
    var last = 0.0

    @inline(__always)
    mutating func add(_ v: Double, at t: Millis) {
        count += 1
        sum += v
        if v < min { min = v }
        if v > max { max = v }
        if t >= lastTime { lastTime = t; last = v }
    }

    var average: Double? { count > 0 ? sum / Double(count) : nil }
    var minimum: Double? { count > 0 ? min : nil }
    var maximum: Double? { count > 0 ? max : nil }
    var mostRecent: Double? { count > 0 ? last : nil }
}

/// Running figures of the whole session or one lap; fixed size, so updating it per sample
/// allocates nothing.
struct Accumulator: Sendable, Hashable {
    var heartRate = DiscreteStat()
    var speed = DiscreteStat()
    var cadence = DiscreteStat()
    var power = DiscreteStat()
    var distance = 0.0
    var distanceSamples = 0
    /// kcal from the heart-rate sensor's energy expended.
    var sensorEnergy = 0.0
    var sensorEnergySamples = 0
    /// kcal from the Keytel estimate (kept even when the sensor's is used, so the switch
    /// from estimate to sensor costs nothing).
    var keytelEnergy = 0.0
    /// kcal from a power meter: the work over the gross efficiency (`LiveWorkoutBuilder.grossEfficiency`).
    var powerEnergy = 0.0
    var powerSamples = 0
    /// Seconds below zone 1 (index 0) and in zones 1…5; lanes 6 and 7 unused.
    var zoneSeconds = SIMD8<Double>()
}
