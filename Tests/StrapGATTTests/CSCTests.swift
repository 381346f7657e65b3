import Testing
@testable import StrapGATT

/// CSC Measurement decoding and the derivation rules of
/// docs/decoding.md#csc-speed-cadence-and-distance-cscderivation.
@Suite struct CSCTests {
    typealias Wheel = CSCMeasurement.WheelData
    typealias Crank = CSCMeasurement.CrankData

    static func wheel(_ revs: UInt32, _ time: UInt16) -> CSCMeasurement { CSCMeasurement(wheel: Wheel(revolutions: revs, eventTime: time)) }
    static func crank(_ revs: UInt16, _ time: UInt16) -> CSCMeasurement { CSCMeasurement(crank: Crank(revolutions: revs, eventTime: time)) }

    @Test func decodesBothBlocksInOrder() throws {
        let m = try CSCMeasurement.decode([0x03, 0x10, 0, 0, 0, 0x00, 0x04, 0x05, 0, 0x00, 0x08])
        #expect(m.wheel == Wheel(revolutions: 16, eventTime: 1024))
        #expect(m.crank == Crank(revolutions: 5, eventTime: 2048))
        #expect(m.warnings.isEmpty)
    }

    @Test func crankOnlyStartsRightAfterFlags() throws {
        let m = try CSCMeasurement.decode([0x02, 0xFF, 0xFF, 0x34, 0x12])
        #expect(m.wheel == nil && m.crank == Crank(revolutions: 65535, eventTime: 0x1234))
    }

    @Test func noDataFlagsIsValidWithWarning() throws {
        let m = try CSCMeasurement.decode([0x00])
        #expect(m.wheel == nil && m.crank == nil && m.warnings == .noData)
    }

    @Test func paddedPacketsAreDecoded() throws {
        let m = try CSCMeasurement.decode([0x02, 1, 0, 2, 0, 0xAA, 0xBB])
        #expect(m.crank == Crank(revolutions: 1, eventTime: 2) && m.warnings == .trailingOctets)
    }

    @Test(arguments: [[], [0x01, 0, 0, 0, 0, 0], [0x02, 0, 0, 0], [0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]] as [[UInt8]])
    func tooShortIsInvalid(_ bytes: [UInt8]) {
        #expect(throws: GATTDecodingError.self) { try CSCMeasurement.decode(bytes) }
    }

    @Test func reservedFlagBitsIgnored() throws {
        #expect(try CSCMeasurement.decode([0xFE, 1, 0, 2, 0]).crank == Crank(revolutions: 1, eventTime: 2))
    }

    @Test func featureBits() throws {
        let f = try CSCFeature.decode([0x03, 0x00])
        #expect(f.wheelRevolutionDataSupported && f.crankRevolutionDataSupported && !f.multipleSensorLocationsSupported)
        #expect(throws: GATTDecodingError.self) { try CSCFeature.decode([0x03]) }
    }

    // MARK: derivation

    @Test func firstPacketIsBaselineOnly() {
        var d = CSCDerivation()
        let out = d.update(Self.wheel(100, 0), receivedAt: 0)
        #expect(out.speed == nil && out.distance == nil)
    }

    @Test func eventTimeWrapUses65536() {
        var d = CSCDerivation(configuration: .init(wheelCircumference: 2))
        _ = d.update(Self.wheel(10, 65000), receivedAt: 0)
        let out = d.update(Self.wheel(11, 488), receivedAt: 1)      // Δt = 1024 ticks across the wrap
        #expect(out.speed == 2.0)
    }

    @Test func wheelCountWrapsAt2To32() {
        var d = CSCDerivation(configuration: .init(wheelCircumference: 2))
        _ = d.update(Self.wheel(0xFFFF_FFFF, 0), receivedAt: 0)
        let out = d.update(Self.wheel(1, 1024), receivedAt: 1)
        #expect(out.speed == 4.0 && out.distance == 4.0)
    }

    @Test func crankCountWrapsAt2To16() {
        var d = CSCDerivation()
        _ = d.update(Self.crank(65535, 60000), receivedAt: 0)
        let out = d.update(Self.crank(1, 60000 &+ 1024), receivedAt: 1)
        #expect(out.cadence == 120)
    }

    @Test func repeatedEventTimeHoldsThenDecaysToZero() {
        var d = CSCDerivation()
        _ = d.update(Self.crank(0, 0), receivedAt: 0)
        #expect(d.update(Self.crank(1, 512), receivedAt: 0.5).cadence == 120)
        // Same event: no new measurement, held (within the "no revolution since" bound 60/0.25 s).
        #expect(d.update(Self.crank(1, 512), receivedAt: 0.75).cadence == 120)
        // Bounded by 60 / time since the last event while waiting.
        #expect(d.update(Self.crank(1, 512), receivedAt: 2.5).cadence == 30)
        // max(2 × 0.5 s, 3 s) without a new event → 0.
        #expect(d.update(Self.crank(1, 512), receivedAt: 3.5).cadence == 0)
    }

    @Test func sameCountNewTimeIsZeroCadence() {
        var d = CSCDerivation()
        _ = d.update(Self.crank(7, 0), receivedAt: 0)
        #expect(d.update(Self.crank(7, 1024), receivedAt: 1).cadence == 0)
    }

    @Test func smallBackwardsWheelStepIsReverseMotion() {
        var d = CSCDerivation()
        _ = d.update(Self.wheel(100, 0), receivedAt: 0)
        let out = d.update(Self.wheel(98, 1024), receivedAt: 1)
        #expect(out.speed == 0 && out.warnings.contains(.reverseMotion) && out.distanceDelta == 0)
    }

    @Test func counterResetAddsNoDistance() {
        var d = CSCDerivation()
        _ = d.update(Self.wheel(50_000, 0), receivedAt: 0)
        _ = d.update(Self.wheel(50_001, 1024), receivedAt: 1)
        let out = d.update(Self.wheel(3, 2048), receivedAt: 2)
        #expect(out.speed == nil && out.warnings.contains(.implausibleSpeed) && out.warnings.contains(.counterReset))
        #expect(out.distance == 2.105)
        #expect(d.update(Self.wheel(4, 3072), receivedAt: 3).speed == 2.105)
    }

    @Test func longEventGapRebaselines() {
        var d = CSCDerivation()
        _ = d.update(Self.crank(0, 0), receivedAt: 0)
        let out = d.update(Self.crank(3, 11 * 1024), receivedAt: 11)
        #expect(out.cadence == nil && out.warnings.contains(.rebaselined))
        #expect(d.update(Self.crank(4, 12 * 1024), receivedAt: 12).cadence == 60)
    }

    @Test func moreThan64sOfWallClockIsAmbiguous() {
        var d = CSCDerivation()
        _ = d.update(Self.wheel(0, 0), receivedAt: 0)
        // Δt mod 65536 would read 1 s; the wall clock says 65 s passed.
        let out = d.update(Self.wheel(2, 1024), receivedAt: 65)
        #expect(out.speed == nil && out.warnings.contains(.rebaselined))
    }

    @Test func implausibleCadenceIsNull() {
        var d = CSCDerivation()
        _ = d.update(Self.crank(0, 0), receivedAt: 0)
        let out = d.update(Self.crank(5, 1024), receivedAt: 1)      // 300 rpm
        #expect(out.cadence == nil && out.warnings.contains(.implausibleCadence))
    }

    @Test func resetAfterReconnectMakesNextPacketABaseline() {
        var d = CSCDerivation()
        _ = d.update(Self.wheel(0, 0), receivedAt: 0)
        _ = d.update(Self.wheel(1, 1024), receivedAt: 1)
        d.reset()
        let out = d.update(Self.wheel(9, 4096), receivedAt: 30)
        #expect(out.speed == nil && out.distance == 2.105)
    }

    /// Two hours at 1 Hz with varying speed and cadence; every counter and both event times
    /// wrap (wheel revs start just below 2³², crank revs below 2¹⁶, times wrap every 64 s).
    @Test func longRideWithEveryCounterWrapping() {
        let circumference = 2.105
        var rng = SplitMix64(seed: 0xC5C)
        var d = CSCDerivation(configuration: .init(wheelCircumference: circumference))
        var wheelTruth = RevolutionClock(start: 0xFFFF_F000)
        var crankTruth = RevolutionClock(start: 65_000)
        var speed = 8.0, cadence = 85.0
        var firstWheel: UInt64?
        var lastWheel: UInt64 = 0
        // The last *new* event per channel: a repeated event time is no new measurement.
        var previousWheel: (count: UInt64, ticks: UInt64)?
        var previousCrank: (count: UInt64, ticks: UInt64)?
        var checked = 0
        func close(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) <= 1e-9 * b } ?? false }
        for second in 0..<7200 {
            if second % 30 == 0 {
                speed = 3 + Double(rng.next() % 1300) / 100          // 3–16 m/s
                cadence = 50 + Double(rng.next() % 70)               // 50–120 rpm
            }
            let t = Double(second)
            wheelTruth.advance(to: t, revolutionsPerSecond: speed / circumference)
            crankTruth.advance(to: t, revolutionsPerSecond: cadence / 60)
            let m = CSCMeasurement(
                wheel: .init(revolutions: UInt32(truncatingIfNeeded: wheelTruth.count), eventTime: UInt16(truncatingIfNeeded: wheelTruth.lastEventTicks)),
                crank: .init(revolutions: UInt16(truncatingIfNeeded: crankTruth.count), eventTime: UInt16(truncatingIfNeeded: crankTruth.lastEventTicks)))
            let out = d.update(m, receivedAt: t)
            if second > 0 { #expect(out.warnings.isEmpty, "second \(second): \(out.warnings.names)") }
            if let p = previousWheel, p.ticks != wheelTruth.lastEventTicks {
                let expected = Double(wheelTruth.count - p.count) * circumference * 1024 / Double(wheelTruth.lastEventTicks - p.ticks)
                #expect(close(out.speed, expected), "second \(second)")
                checked += 1
            }
            if let p = previousCrank, p.ticks != crankTruth.lastEventTicks {
                let expected = Double(crankTruth.count - p.count) * 60 * 1024 / Double(crankTruth.lastEventTicks - p.ticks)
                #expect(close(out.cadence, expected), "second \(second)")
            }
            previousWheel = (wheelTruth.count, wheelTruth.lastEventTicks)
            previousCrank = (crankTruth.count, crankTruth.lastEventTicks)
            firstWheel = firstWheel ?? wheelTruth.count
            lastWheel = wheelTruth.count
        }
        #expect(wheelTruth.count > 0xFFFF_FFFF && crankTruth.count > 0xFFFF, "both counters wrapped")
        #expect(checked > 7000)
        let expectedDistance = Double(lastWheel - firstWheel!) * circumference
        #expect(abs(d.totalDistance - expectedDistance) < 1e-6 * expectedDistance)
    }
}

/// Ground truth for a rotating wheel or crank: unwrapped revolution count and the time of the
/// last revolution in 1/1024 s ticks, as a sensor would latch them.
struct RevolutionClock {
    var count: UInt64
    var lastEventTicks: UInt64 = 0
    var nextEventTime: Double = 0
    var time: Double = 0

    init(start: UInt64) { count = start }

    mutating func advance(to t: Double, revolutionsPerSecond rate: Double) {
        let period = 1 / rate
        if nextEventTime <= time { nextEventTime = time + period }
        while nextEventTime <= t {
            count += 1
            lastEventTicks = UInt64((nextEventTime * 1024).rounded())
            nextEventTime += period
        }
        time = t
    }
}

/// Deterministic, seedable generator so property tests can be replayed from their seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
