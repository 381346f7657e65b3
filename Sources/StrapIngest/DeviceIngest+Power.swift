import StrapGATT
import StrapModel

/// Power meters (Cycling Power 0x2A63) and indoor-bike trainers (FTMS Indoor Bike Data 0x2AD2)
/// as samples (docs/decoding.md#power-and-trainer-samples). What is left out on purpose:
/// accumulated energy and the trainer's expended energy (mechanical work or the trainer's own
/// estimate, not the athlete's energy; the workout's energy from power is the figures' job),
/// and the trainer's heart rate (almost always relayed from a strap strapd records itself).
extension DeviceIngest {
    static let balanceOfLeftPedal = SharedMetadata(["reference": "left"])
    static let balanceOfUnknownPedal = SharedMetadata(["reference": "unknown"])

    mutating func power(_ m: CyclingPowerMeasurement, wall: Millis, monotonic: Double, into out: inout Output) {
        out.samples.append(sample(.cyclingPower, Double(m.instantaneousPower), wall))
        // Above 100 % the share is a sensor fault, not a reading: the power stays, the balance goes.
        if let percent = m.pedalPowerBalancePercent, percent <= 100 {
            let reference = m.pedalPowerBalanceReference == .left ? Self.balanceOfLeftPedal : Self.balanceOfUnknownPedal
            out.samples.append(Sample(type: .cyclingPowerBalance, value: percent, start: wall, device: device,
                                      metadata: reference))
        }
        guard m.wheel != nil || m.crank != nil else { return }
        let d = powerRevolutions.update(m, receivedAt: monotonic)
        let start = lastPowerTime ?? wall
        lastPowerTime = wall
        revolutions(d, since: start, wall: wall, into: &out)
    }

    /// One whole Indoor Bike Data record (the assembler joined a split one); `wall` is the
    /// arrival of the packet that completed it.
    mutating func indoorBikeRecord(_ r: IndoorBikeData, wall: Millis, monotonic: Double, into out: inout Output) {
        if let watts = r.instantaneousPower { out.samples.append(sample(.cyclingPower, Double(watts), wall)) }
        if let speed = r.speedMetresPerSecond { out.samples.append(sample(.cyclingSpeed, speed, wall)) }
        if let rpm = r.cadenceRPM { out.samples.append(sample(.cyclingCadence, rpm, wall)) }
        guard let raw = r.totalDistance else { return }
        let start = lastIndoorBikeTime ?? wall
        lastIndoorBikeTime = wall
        switch indoorBikeDistance.update(UInt64(raw), at: monotonic) {
        case .baseline, .saturated: break
        case let .advanced(by: metres), let .wrapped(by: metres), let .reset(by: metres):
            if metres > 0 { out.samples.append(sample(.cyclingDistance, Double(metres), start, end: wall)) }
        }
    }
}
