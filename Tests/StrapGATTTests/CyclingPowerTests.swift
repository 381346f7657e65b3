import Testing
@testable import StrapGATT

/// Cycling Power Service: measurement flags, feature, control point, and the speed/cadence the
/// shared CSC derivation draws from its revolution data (docs/decoding.md#cycling-power-measurement-0x2a63).
@Suite struct CyclingPowerTests {
    typealias M = CyclingPowerMeasurement

    @Test func powerAloneIsFourOctets() throws {
        let m = try M.decode([0x00, 0x00, 0xFA, 0x00])
        #expect(m == M(instantaneousPower: 250))
        #expect(try M.decode([0x00, 0x00, 0x9C, 0xFF]).instantaneousPower == -100)
    }

    @Test func pedalPowerBalanceAndReference() throws {
        let m = try M.decode([0x03, 0x00, 0xC8, 0x00, 0x65])
        #expect(m.pedalPowerBalance == 101 && m.pedalPowerBalancePercent == 50.5 && m.pedalPowerBalanceReference == .left)
        // Bit 1 without bit 0 says nothing about a balance that is not there.
        #expect(try M.decode([0x02, 0x00, 0xC8, 0x00]).pedalPowerBalance == nil)
    }

    @Test func accumulatedTorqueAndSource() throws {
        let m = try M.decode([0x0C, 0x00, 0x64, 0x00, 0x40, 0x01])
        #expect(m.accumulatedTorque == 320 && m.accumulatedTorqueNewtonMetres == 10 && m.accumulatedTorqueSource == .crankBased)
        #expect(try M.decode([0x04, 0x00, 0x64, 0x00, 0x40, 0x01]).accumulatedTorqueSource == .wheelBased)
    }

    @Test func wheelAndCrankRevolutionData() throws {
        let m = try M.decode([0x30, 0x00, 0x64, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x2A, 0x00, 0x00, 0x04])
        #expect(m.wheel == .init(revolutions: 256, eventTime: 2048))      // 1 s in 1/2048 s
        #expect(m.crank == .init(revolutions: 42, eventTime: 1024))       // 1 s in 1/1024 s
    }

    @Test func extremeForceAndTorque() throws {
        let force = try M.decode([0x40, 0x00, 0x64, 0x00, 0x20, 0x03, 0xCE, 0xFF])
        #expect(force.extremeForce == .init(maximum: 800, minimum: -50) && force.warnings.isEmpty)
        let torque = try M.decode([0x80, 0x00, 0x64, 0x00, 0x00, 0x04, 0xF0, 0xFF])
        #expect(torque.extremeTorque == .init(maximum: 1024, minimum: -16))
        // Both flagged is against the spec: both decoded, warned.
        let both = try M.decode([0xC0, 0x00, 0x64, 0x00, 1, 0, 2, 0, 3, 0, 4, 0])
        #expect(both.extremeForce == .init(maximum: 1, minimum: 2) && both.extremeTorque == .init(maximum: 3, minimum: 4))
        #expect(both.warnings == .conflictingFlags)
    }

    /// Two uint12 in three octets, the maximum in the low 12 bits: 291° and 171° are 0x0AB123.
    @Test func extremeAnglesArePacked12Bit() throws {
        let m = try M.decode([0x00, 0x01, 0x64, 0x00, 0x23, 0xB1, 0x0A])
        #expect(m.extremeAngles == .init(maximum: 291, minimum: 171))
        #expect(M(instantaneousPower: 100, extremeAngles: .init(maximum: 291, minimum: 171)).encoded() == [0x00, 0x01, 0x64, 0x00, 0x23, 0xB1, 0x0A])
        let top = try M.decode([0x00, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0xFF])
        #expect(top.extremeAngles == .init(maximum: 4095, minimum: 4095))
    }

    @Test func deadSpotsEnergyAndOffsetIndicator() throws {
        let m = try M.decode([0x00, 0x1E, 0x64, 0x00, 0x0A, 0x00, 0xB9, 0x00, 0xE8, 0x03])
        #expect(m.topDeadSpotAngle == 10 && m.bottomDeadSpotAngle == 185 && m.accumulatedEnergy == 1000)
        #expect(m.offsetCompensationIndicator)
    }

    /// Every field at once (force, not torque): 34 − 4 = 30 octets, in the spec's order.
    @Test func everyFieldInOrder() throws {
        let m = M(instantaneousPower: 300, pedalPowerBalance: 100, pedalPowerBalanceReference: .left,
                  accumulatedTorque: 5000, accumulatedTorqueSource: .crankBased,
                  wheel: .init(revolutions: 0xDEAD_BEEF, eventTime: 0x1234), crank: .init(revolutions: 77, eventTime: 0x4321),
                  extremeForce: .init(maximum: 900, minimum: -20), extremeAngles: .init(maximum: 90, minimum: 270),
                  topDeadSpotAngle: 5, bottomDeadSpotAngle: 180, accumulatedEnergy: 42, offsetCompensationIndicator: true)
        let bytes = m.encoded()
        #expect(bytes.count == 30 && bytes[0] == 0x7F && bytes[1] == 0x1F)
        #expect(try M.decode(bytes) == m)
    }

    @Test func paddingIsWarnedNotRefused() throws {
        #expect(try M.decode([0x00, 0x00, 0x64, 0x00, 0xAA]).warnings == .trailingOctets)
    }

    @Test(arguments: [
        ([], "flags", 2), ([0x00], "flags", 2), ([0x00, 0x00, 0x64], "instantaneous power", 4),
        ([0x01, 0x00, 0x64, 0x00], "pedal power balance", 5),
        ([0x10, 0x00, 0x64, 0x00, 1, 2, 3, 4, 5], "wheel revolution data", 10),
        ([0x31, 0x00, 0x64, 0x00, 50, 1, 2, 3, 4, 5, 6, 7, 8, 9], "crank revolution data", 15),
        ([0x00, 0x01, 0x64, 0x00, 0x23, 0xB1], "extreme angles", 7),
        ([0x00, 0x08, 0x64, 0x00, 0x01], "accumulated energy", 6),
    ] as [([UInt8], String, Int)])
    func truncatedNamesTheField(_ bytes: [UInt8], _ field: String, _ needed: Int) {
        #expect {
            try M.decode(bytes)
        } throws: { error in
            guard case let .truncated(c, f, n, got) = error as? GATTDecodingError else { return false }
            return c == .cyclingPowerMeasurement && f.description == field && n == needed && got == bytes.count
        }
    }

    @Test func featureBits() throws {
        let f = try CyclingPowerFeature.decode([0x0C, 0x12, 0x21, 0x00])
        #expect(f.wheelRevolutionDataSupported && f.crankRevolutionDataSupported && !f.pedalPowerBalanceSupported)
        #expect(f.offsetCompensationSupported && f.crankLengthAdjustmentSupported)
        #expect(f.measurementContext == .torqueBased && f.distributedSystemSupport == .forDistributedSystem)
        #expect(throws: GATTDecodingError.truncated(.cyclingPowerFeature, field: "feature bits", needed: 4, got: 2)) {
            try CyclingPowerFeature.decode([0x0C, 0x12])
        }
    }

    // MARK: control point

    @Test func requestEncodings() throws {
        #expect(try CyclingPowerControlPointRequest.setCrankLength(millimetres: 172.5).encoded() == [0x04, 0x59, 0x01])
        #expect(CyclingPowerControlPointRequest.startOffsetCompensation.encoded() == [0x0C])
        #expect(CyclingPowerControlPointRequest.requestSupportedSensorLocations.encoded() == [0x03])
        #expect(CyclingPowerControlPointRequest.requestCrankLength.encoded() == [0x05])
        #expect(CyclingPowerControlPointRequest.setCumulativeValue(0).encoded() == [0x01, 0, 0, 0, 0])
        #expect(CyclingPowerControlPointRequest.updateSensorLocation(SensorLocation(code: 6)).encoded() == [0x02, 0x06])
        #expect(CyclingPowerControlPointRequest.maskMeasurementContent(0x0003).encoded() == [0x0D, 0x03, 0x00])
        #expect(throws: ControlPointValueError.self) { try CyclingPowerControlPointRequest.setCrankLength(millimetres: -1) }
        #expect(throws: ControlPointValueError.notFinite(field: "crank length (mm)")) {
            try CyclingPowerControlPointRequest.setCrankLength(millimetres: .nan)
        }
    }

    @Test func responses() throws {
        typealias R = CyclingPowerControlPointResponse
        #expect(try R.decode([0x20, 0x0C, 0x01, 0x10, 0x00]).parameter == .offset(16))
        #expect(try R.decode([0x20, 0x0C, 0x01, 0xF0, 0xFF]).parameter == .offset(-16))
        #expect(try R.decode([0x20, 0x05, 0x01, 0x59, 0x01]).parameter == .crankLength(345))
        #expect(try R.decode([0x20, 0x03, 0x01, 5, 6]).parameter == .supportedLocations([SensorLocation(code: 5), SensorLocation(code: 6)]))
        #expect(try R.decode([0x20, 0x0E, 0x01, 0x04]).parameter == .samplingRate(4))
        #expect(try R.decode([0x20, 0x0F, 0x01, 0xEA, 0x07, 3, 14, 9, 30, 0]).parameter
                == .factoryCalibrationDate(.init(year: 2026, month: 3, day: 14, hours: 9, minutes: 30, seconds: 0)))
        let failed = try R.decode([0x20, 0x10, 0x04, 0x01])
        #expect(failed.result == .operationFailed && failed.parameter == .offsetCompensationError(1))
        let invalid = try R.decode([0x20, 0x04, 0x03])
        #expect(invalid.result == .invalidParameter && invalid.requestOpCode == 4 && invalid.parameter == .none)
        #expect(try R.decode([0x20, 0x04, 0x09]).result == nil)
        #expect(throws: GATTDecodingError.notAResponse(.cyclingPowerControlPoint, opCode: 0x10)) { try R.decode([0x10, 0x01, 0x01]) }
        #expect(throws: GATTDecodingError.truncated(.cyclingPowerControlPoint, field: "crank length", needed: 5, got: 4)) {
            try R.decode([0x20, 0x05, 0x01, 0x59])
        }
        #expect(throws: GATTDecodingError.self) { try R.decode([0x20, 0x05]) }
        #expect("\(GATTDecodingError.notAResponse(.cyclingPowerControlPoint, opCode: 0x10))".contains("(0x20)"))
    }

    @Test func requestDecodeRefusesUnknownAndMisLengthed() {
        #expect(throws: GATTDecodingError.unknownOpCode(.cyclingPowerControlPoint, opCode: 0x11)) {
            try CyclingPowerControlPointRequest.decode([0x11])
        }
        #expect(throws: GATTDecodingError.wrongLength(.cyclingPowerControlPoint, expected: 3, got: 2)) {
            try CyclingPowerControlPointRequest.decode([0x04, 0x59])
        }
    }

    // MARK: derivation through CSCDerivation

    @Test func wheelEventTimeIs2048PerSecond() {
        var d = CSCDerivation()
        _ = d.update(M(instantaneousPower: 0, wheel: .init(revolutions: 10, eventTime: 0)), receivedAt: 0)
        let out = d.update(M(instantaneousPower: 0, wheel: .init(revolutions: 12, eventTime: 2048)), receivedAt: 1)
        #expect(out.speed == 4.21 && out.distance == 4.21)
    }

    @Test func wheelEventTimeWrapsEvery32Seconds() {
        var d = CSCDerivation()
        _ = d.update(M(instantaneousPower: 0, wheel: .init(revolutions: 0, eventTime: 65000)), receivedAt: 0)
        #expect(d.update(M(instantaneousPower: 0, wheel: .init(revolutions: 1, eventTime: 65000 &+ 2048)), receivedAt: 1).speed == 2.105)
        // 33 s of receive time: the 32 s event clock may have wrapped, so no rate.
        let late = d.update(M(instantaneousPower: 0, wheel: .init(revolutions: 3, eventTime: 65000 &+ 4096)), receivedAt: 34)
        #expect(late.speed == nil && late.warnings.contains(.rebaselined))
    }

    /// Peer vectors: Assioma Uno packets from SmartSpin2k's test suite
    /// (doudar/SmartSpin2k, test/test_cyclePowerData: flags 0x0020, crank data only), with the
    /// cadences it expects (31.09, 48.38, 56.39 rpm, and 31.09 across the 16-bit wrap).
    @Test func assiomaCrankPeerVectors() throws {
        var d = CSCDerivation()
        let packets: [([UInt8], Double?)] = [
            ([0x20, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x0B], nil),
            ([0x20, 0x00, 0x2D, 0x00, 0x02, 0x00, 0xB8, 0x12], 31.09),
            ([0x20, 0x00, 0x2E, 0x00, 0x03, 0x00, 0xAE, 0x17], 48.38),
            ([0x20, 0x00, 0x39, 0x00, 0x05, 0x00, 0x31, 0x20], 56.39),
        ]
        var t = 0.0
        for (bytes, expected) in packets {
            let m = try M.decode(bytes)
            t += 1.5
            let cadence = d.update(m, receivedAt: t).cadence
            if let expected { #expect(abs((cadence ?? -1) - expected) < 0.01) } else { #expect(cadence == nil) }
        }
        #expect(try M.decode(packets[1].0).instantaneousPower == 45)
        var wrap = CSCDerivation()
        _ = wrap.update(try M.decode([0x20, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]), receivedAt: 0)
        let across = wrap.update(try M.decode([0x20, 0x00, 0x2D, 0x00, 0x00, 0x00, 0xB7, 0x07]), receivedAt: 2)
        #expect(abs((across.cadence ?? -1) - 31.09) < 0.01)
    }
}
