import StrapGATT

/// A running foot pod: speed, cadence (steps/min), stride length and a total-distance counter
/// in 1/10 m that starts near 2³² so it wraps, with walking/running status.
public struct SimulatedFootPod: LinkDrivenDevice {
    public let identity: SimulatedIdentity
    var rng: SimulationRandom
    var link: LinkSchedule
    var speed = 3.0
    var nextChange = 0.0
    var lastTime = 0.0
    var distanceDecimetres: Double
    var battery: UInt8 = 70
    var announced = false

    public init(index: Int, seed: UInt64, dropouts: DropoutSchedule = DropoutSchedule()) {
        var rng = SimulationRandom(seed: seed)
        identity = SimulatedIdentity(address: simulatedAddress(kind: 0x53, index: index), name: "Sim RSC \(index)",
                                     manufacturer: "strapd simulator", model: "SIM-RSC", serial: "RSC\(seed % 100_000)",
                                     firmware: "1.0", services: [.runningSpeedAndCadence, .battery, .deviceInformation])
        link = LinkSchedule(period: 1, phase: rng.uniform(0, 1), dropouts: dropouts, rng: &rng)
        distanceDecimetres = Double(UInt32.max) - rng.uniform(0, 3000)
        self.rng = rng
    }

    mutating func notifications(at t: Double) -> [(Double, SimulatedEvent)] {
        let cadence = speed < 0.3 ? 0 : (speed < 2.2 ? 110 : 160 + 8 * (speed - 2.2))
        let stride = cadence > 0 ? speed * 60 / cadence : 0
        let m = RSCMeasurement(speedRaw: UInt16((speed * 256).rounded()), cadence: UInt8(cadence.rounded()),
                               strideLengthRaw: UInt16((stride * 100).rounded()),
                               totalDistanceRaw: UInt32(UInt64(distanceDecimetres) % (1 << 32)),
                               isRunning: speed >= 2.2)
        return [(t, .notification(characteristic: .rscMeasurement, value: m.encoded()))]
    }

    func connectReads() -> [SimulatedEvent] {
        [.read(characteristic: .rscFeature, value: RSCFeature(rawValue: 0x07).encoded()),
         .read(characteristic: .batteryLevel, value: [battery])]
    }

    /// Walking, easy running and faster efforts, changing every 40–90 s.
    mutating func progress(to t: Double) {
        while lastTime < t {
            if lastTime >= nextChange {
                speed = rng.next() % 5 == 0 ? rng.uniform(1.2, 1.8) : rng.uniform(2.5, 4.8)
                nextChange = lastTime + rng.uniform(40, 90)
            }
            let step = min(t, nextChange) - lastTime
            distanceDecimetres += speed * step * 10
            lastTime += step
        }
    }
}
