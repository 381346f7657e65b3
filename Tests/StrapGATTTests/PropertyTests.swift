import Testing
@testable import StrapGATT

/// Random inputs: decoders never crash and never yield out-of-range values; encode → decode
/// round-trips. Seeded so a failure can be replayed.
@Suite struct PropertyTests {
    static let iterations = 20_000

    static func randomBytes(_ rng: inout SplitMix64) -> [UInt8] {
        let length = Int(rng.next() % 65)
        return (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    @Test func heartRateRandomBytes() {
        var rng = SplitMix64(seed: 1)
        for _ in 0..<Self.iterations {
            let bytes = Self.randomBytes(&rng)
            guard let m = try? HeartRateMeasurement.decode(bytes) else { continue }
            let flags = bytes[0]
            let header = 1 + (flags & 1 == 1 ? 2 : 1) + (flags & 8 == 8 ? 2 : 0)
            if flags & 1 == 0 { #expect(m.heartRate <= 255) }
            #expect((m.energyExpended != nil) == (flags & 8 != 0))
            if flags & 0x10 != 0 {
                #expect(m.rrIntervals?.count == (bytes.count - header) / 2)
                #expect(m.warnings.contains(.danglingOctet) == ((bytes.count - header) % 2 == 1))
            } else {
                #expect(m.rrIntervals == nil)
            }
            #expect(m.contact == SensorContact(flags: flags))
        }
    }

    @Test func otherDecodersRandomBytes() {
        var rng = SplitMix64(seed: 2)
        for _ in 0..<Self.iterations {
            let bytes = Self.randomBytes(&rng)
            if let b = try? BatteryLevel.decode(bytes) { #expect(b.percent <= 100 && bytes.count == 1) }
            if let c = try? CSCMeasurement.decode(bytes) {
                #expect(bytes.count >= 1 + (c.wheel != nil ? 6 : 0) + (c.crank != nil ? 4 : 0))
            }
            if let r = try? RSCMeasurement.decode(bytes) {
                #expect(r.speed >= 0 && r.speed < 256 && (r.strideLength ?? 0) >= 0 && (r.totalDistance ?? 0) >= 0)
            }
            if let l = try? BodySensorLocation.decode(bytes) { #expect(bytes.count == 1 && !l.name.isEmpty) }
            if let l = try? SensorLocation.decode(bytes) { #expect(bytes.count == 1 && !l.name.isEmpty) }
            if let c = try? HeartRateControlPoint.decode(bytes) { #expect(c.opCode == bytes[0]) }
            if let r = try? SCControlPointResponse.decode(bytes) { #expect(bytes[0] == 0x10 && r.requestOpCode == bytes[1]) }
            _ = try? CSCFeature.decode(bytes)
            _ = try? RSCFeature.decode(bytes)
            if let s = try? DeviceInformationString.decode(.modelNumber, bytes) { #expect(s.value.utf8.count <= bytes.count) }
        }
    }

    @Test func derivationOnRandomPacketsStaysInsideTheGates() {
        var rng = SplitMix64(seed: 3)
        var d = CSCDerivation()
        var time = 0.0
        for _ in 0..<Self.iterations {
            time += Double(rng.next() % 3000) / 1000
            let m = CSCMeasurement(wheel: rng.next() % 4 == 0 ? nil : .init(revolutions: UInt32(truncatingIfNeeded: rng.next()), eventTime: UInt16(truncatingIfNeeded: rng.next())),
                                   crank: rng.next() % 4 == 0 ? nil : .init(revolutions: UInt16(truncatingIfNeeded: rng.next()), eventTime: UInt16(truncatingIfNeeded: rng.next())))
            let out = d.update(m, receivedAt: time)
            if let s = out.speed { #expect(s >= 0 && s <= 30 && s.isFinite) }
            if let c = out.cadence { #expect(c >= 0 && c <= 250 && c.isFinite) }
            #expect(out.distanceDelta >= 0 && out.distanceDelta <= 30 * 10)
        }
    }

    @Test func heartRateRoundTrip() throws {
        var rng = SplitMix64(seed: 4)
        for _ in 0..<Self.iterations {
            let rrCount = Int(rng.next() % 12)
            let m = HeartRateMeasurement(
                heartRate: UInt16(truncatingIfNeeded: rng.next()), isUInt16Format: rng.next() % 2 == 0,
                contact: SensorContact.allCases[Int(rng.next() % 3)],
                energyExpended: rng.next() % 2 == 0 ? UInt16(truncatingIfNeeded: rng.next()) : nil,
                rrIntervals: rng.next() % 3 == 0 ? nil : (0..<max(1, rrCount)).map { _ in UInt16(truncatingIfNeeded: rng.next()) })
            #expect(try HeartRateMeasurement.decode(m.encoded()) == m)
        }
    }

    @Test func cscAndRSCRoundTrip() throws {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<Self.iterations {
            let csc = CSCMeasurement(
                wheel: .init(revolutions: UInt32(truncatingIfNeeded: rng.next()), eventTime: UInt16(truncatingIfNeeded: rng.next())),
                crank: rng.next() % 2 == 0 ? nil : .init(revolutions: UInt16(truncatingIfNeeded: rng.next()), eventTime: UInt16(truncatingIfNeeded: rng.next())))
            #expect(try CSCMeasurement.decode(csc.encoded()) == csc)
            let rsc = RSCMeasurement(speedRaw: UInt16(truncatingIfNeeded: rng.next()), cadence: UInt8(truncatingIfNeeded: rng.next()),
                                     strideLengthRaw: rng.next() % 2 == 0 ? nil : UInt16(truncatingIfNeeded: rng.next()),
                                     totalDistanceRaw: rng.next() % 2 == 0 ? nil : UInt32(truncatingIfNeeded: rng.next()),
                                     isRunning: rng.next() % 2 == 0)
            #expect(try RSCMeasurement.decode(rsc.encoded()) == rsc)
        }
    }

    @Test func smallValuesRoundTrip() throws {
        for v in UInt8(0)...100 { #expect(try BatteryLevel.decode(BatteryLevel(percent: v).encoded()).percent == v) }
        for v in UInt8.min...UInt8.max {
            #expect(try BodySensorLocation.decode(BodySensorLocation(code: v).encoded()).code == v)
            #expect(try SensorLocation.decode(SensorLocation(code: v).encoded()).code == v)
            #expect(try HeartRateControlPoint.decode(HeartRateControlPoint(opCode: v).encoded()).opCode == v)
        }
        for raw in [UInt16(0), 1, 0x1F, 0xFFFF] {
            #expect(try CSCFeature.decode(CSCFeature(rawValue: raw).encoded()).rawValue == raw)
            #expect(try RSCFeature.decode(RSCFeature(rawValue: raw).encoded()).rawValue == raw)
        }
    }
}
