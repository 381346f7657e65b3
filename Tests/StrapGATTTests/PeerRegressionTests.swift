import Testing
@testable import StrapGATT

/// One test per peer parser bug in docs/decoding.md#peer-parser-bugs-the-regression-tests, named
/// after the bug: each feeds the input that exposes it and checks we read what the spec says.
@Suite struct PeerRegressionTests {
    @Test func pycyclingContactMask0x06ReadsNotDetectedAsContact() throws {
        #expect(try HeartRateMeasurement.decode([0x04, 70]).contact == .notDetected)
    }

    @Test func swiftySensorsContactUsesOrInsteadOfAnd() throws {
        // (flags | 0x06) >> 1 reports contact for every packet; flags 0 means not supported.
        #expect(try HeartRateMeasurement.decode([0x00, 70]).contact == .notSupported)
        #expect(try HeartRateMeasurement.decode([0x02, 70]).contact == .notSupported)
    }

    @Test func gadgetbridgeHeartRateFormatFromGATTPropertiesNotFlags() throws {
        #expect(try HeartRateMeasurement.decode([0x01, 0x2C, 0x01]).heartRate == 300)
        #expect(try HeartRateMeasurement.decode([0x00, 0x2C, 0x01]).heartRate == 44)
    }

    @Test func gadgetbridgeCSCFlagTestWithOrMask() throws {
        // (flags | M) == M is true only for flags 0 or M: both blocks must be read for 0x03.
        let m = try CSCMeasurement.decode([0x03, 1, 0, 0, 0, 0, 4, 2, 0, 0, 8])
        #expect(m.wheel?.revolutions == 1 && m.crank?.revolutions == 2)
    }

    @Test func gadgetbridgeCrankRevolutionsReadAsInt32() throws {
        let m = try CSCMeasurement.decode([0x02, 0xFF, 0xFF, 0x00, 0x04])
        #expect(m.crank == .init(revolutions: 65535, eventTime: 1024))
    }

    @Test func gadgetbridgeNoTimeWrapHandling() {
        var d = CSCDerivation()
        _ = d.update(CSCMeasurement(crank: .init(revolutions: 10, eventTime: 65_024)), receivedAt: 0)
        #expect(d.update(CSCMeasurement(crank: .init(revolutions: 11, eventTime: 512)), receivedAt: 1).cadence == 60)
    }

    @Test func qdomyosZwiftReadsByteOneRegardlessOfFlags() throws {
        #expect(try HeartRateMeasurement.decode([0x01, 0x01, 0x01]).heartRate == 257)
    }

    @Test func openTracksRSCStatusFromFlagsMask0x03() throws {
        #expect(try RSCMeasurement.decode([0x03, 0, 1, 90, 0, 0, 0, 0, 0, 0]).isRunning == false)
        #expect(try RSCMeasurement.decode([0x04, 0, 1, 90]).isRunning == true)
    }

    @Test func nordicJavaCSCWrapUses65535() {
        var d = CSCDerivation(configuration: .init(wheelCircumference: 1))
        _ = d.update(CSCMeasurement(wheel: .init(revolutions: 0, eventTime: 65_535)), receivedAt: 0)
        // 1024 ticks later is 1023 mod 65536; a 65535 modulus would give 1022 ticks.
        #expect(d.update(CSCMeasurement(wheel: .init(revolutions: 1, eventTime: 1023)), receivedAt: 1).speed == 1)
    }

    @Test func nordicJavaCrankRevolutionsNotWrapped() {
        var d = CSCDerivation()
        _ = d.update(CSCMeasurement(crank: .init(revolutions: 65_535, eventTime: 0)), receivedAt: 0)
        #expect(d.update(CSCMeasurement(crank: .init(revolutions: 0, eventTime: 1024)), receivedAt: 1).cadence == 60)
    }

    @Test func nordicIOSNoWrapAtAll() {
        var d = CSCDerivation(configuration: .init(wheelCircumference: 2))
        _ = d.update(CSCMeasurement(wheel: .init(revolutions: 0xFFFF_FFFF, eventTime: 65_000)), receivedAt: 0)
        let out = d.update(CSCMeasurement(wheel: .init(revolutions: 0, eventTime: 488)), receivedAt: 1)
        #expect(out.speed == 2 && out.distance == 2)
    }

    @Test func swiftySensorsAndTMIWRolloverOffByOne() {
        // max - old + new misses one tick/revolution per wrap.
        var d = CSCDerivation()
        _ = d.update(CSCMeasurement(crank: .init(revolutions: 65_534, eventTime: 65_000)), receivedAt: 0)
        let out = d.update(CSCMeasurement(crank: .init(revolutions: 0, eventTime: 1560)), receivedAt: 2)
        let expected: Double = 2 * 60 * 1024 / 2096
        #expect(out.cadence == expected)
    }

    @Test func goldenCheetahIntegerDivision() {
        var d = CSCDerivation()
        _ = d.update(CSCMeasurement(crank: .init(revolutions: 0, eventTime: 0)), receivedAt: 0)
        let out = d.update(CSCMeasurement(crank: .init(revolutions: 1, eventTime: 1100)), receivedAt: 1)
        let expected: Double = 60 * 1024 / 1100
        #expect(out.cadence == expected)
        #expect(out.cadence != 55)
    }

    @Test func auukiOldWheelTimeAs2048() {
        var d = CSCDerivation(configuration: .init(wheelCircumference: 2.105))
        _ = d.update(CSCMeasurement(wheel: .init(revolutions: 0, eventTime: 0)), receivedAt: 0)
        #expect(d.update(CSCMeasurement(wheel: .init(revolutions: 1, eventTime: 1024)), receivedAt: 1).speed == 2.105)
    }

    @Test func auukiWrapTreatedAsTooFastAndHeld() {
        var d = CSCDerivation(configuration: .init(wheelCircumference: 2))
        _ = d.update(CSCMeasurement(wheel: .init(revolutions: 0, eventTime: 64_512)), receivedAt: 0)
        _ = d.update(CSCMeasurement(wheel: .init(revolutions: 1, eventTime: 65_024)), receivedAt: 0.5)
        let out = d.update(CSCMeasurement(wheel: .init(revolutions: 3, eventTime: 512)), receivedAt: 1.5)
        #expect(out.speed == 4 && out.warnings.isEmpty)
    }

    @Test func bleakheartEnergyKeyMismatch() throws {
        #expect(try HeartRateMeasurement.decode([0x08, 70, 0x2A, 0x00]).energyExpended == 42)
    }

    @Test func bleakheartOddTrailingByteParsedAsRR() throws {
        let m = try HeartRateMeasurement.decode([0x10, 70, 0x00, 0x04, 0x09])
        #expect(m.rrIntervals == [1024] && m.warnings.contains(.danglingOctet))
    }

    @Test func openHRVAndBleakheartIndexErrorOnDanglingOddByte() throws {
        let m = try HeartRateMeasurement.decode([0x10, 70, 0x09])
        #expect(m.rrIntervals == [] && m.warnings == [.emptyRRField, .danglingOctet])
    }

    @Test func nrfToolboxKotlinAcceptsBattery255() {
        #expect(throws: GATTDecodingError.self) { try BatteryLevel.decode([255]) }
    }

    @Test func blevalueparserRejectsPayloadsOver20Octets() throws {
        let bytes: [UInt8] = [0x10, 70] + (0..<15).flatMap { _ in [0x00, 0x03] as [UInt8] }
        #expect(bytes.count == 32)
        #expect(try HeartRateMeasurement.decode(bytes).rrIntervals?.count == 15)
    }
}
