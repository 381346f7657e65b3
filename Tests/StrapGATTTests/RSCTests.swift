import Testing
@testable import StrapGATT

/// RSC Measurement and Feature (docs/decoding.md#rsc-measurement-0x2a53, #rsc-feature-0x2a54).
@Suite struct RSCTests {
    @Test func minimumPacket() throws {
        let m = try RSCMeasurement.decode([0x00, 0x00, 0x03, 0xB4])
        #expect(m.speed == 3.0 && m.cadence == 180 && m.strideLength == nil && m.totalDistance == nil && !m.isRunning)
    }

    @Test func strideInCentimetresDistanceInDecimetres() throws {
        // "800 mm" / "4096 m" in a peer's test are by spec 800 cm and 4096 dm.
        let m = try RSCMeasurement.decode([0x03, 0x00, 0x01, 0x50, 0x20, 0x03, 0x00, 0x10, 0x00, 0x00])
        #expect(m.strideLength == 8.0 && m.totalDistance == 409.6)
    }

    @Test func distanceWithoutStrideFollowsCadence() throws {
        let m = try RSCMeasurement.decode([0x02, 0x80, 0x02, 0x5A, 0x0A, 0x00, 0x00, 0x00])
        #expect(m.speed == 2.5 && m.cadence == 90 && m.strideLength == nil && m.totalDistance == 1.0)
    }

    @Test(arguments: [[], [0x00, 0x00, 0x03], [0x01, 0, 0, 0, 0], [0x02, 0, 0, 0, 0, 0, 0], [0x03, 0, 0, 0, 0, 0, 0, 0, 0]] as [[UInt8]])
    func tooShortIsInvalid(_ bytes: [UInt8]) {
        #expect(throws: GATTDecodingError.self) { try RSCMeasurement.decode(bytes) }
    }

    @Test func reservedFlagBitsIgnored() throws {
        // The iOS nRF Toolbox test uses flags 0x1F.
        let m = try RSCMeasurement.decode([0x1F, 0x00, 0x01, 0x50, 0x20, 0x03, 0x00, 0x10, 0x00, 0x00])
        #expect(m.isRunning && m.strideLength == 8.0)
    }

    @Test func cadenceIsKeptRawNeverHalved() throws {
        #expect(try RSCMeasurement.decode([0x04, 0x00, 0x03, 0xB4]).cadence == 180)
    }

    @Test func featureBits() throws {
        let f = try RSCFeature.decode([0x1F, 0x00])
        #expect(f.instantaneousStrideLengthSupported && f.totalDistanceSupported && f.walkingOrRunningStatusSupported
                && f.calibrationProcedureSupported && f.multipleSensorLocationsSupported)
        let none = try RSCFeature.decode([0x00, 0x00])
        #expect(!none.walkingOrRunningStatusSupported)
    }
}
