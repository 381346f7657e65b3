import Testing
@testable import StrapGATT

/// Fitness Machine Service 0x1826 (indoor bike): Indoor Bike Data and its assembler, Feature,
/// Supported Power / Resistance ranges, target validation, Control Point requests and
/// responses, Machine Status and Training Status (docs/decoding.md#indoor-bike-data-0x2ad2).
/// Unless a comment names a peer, each vector is written out by hand from the FTMS v1.0 field
/// definitions (flags little-endian, then the flagged fields in bit order), so a wrong field
/// order or resolution in the codec shows up as a wrong value here.
@Suite struct FitnessMachineTests {
    typealias D = IndoorBikeData

    // MARK: Indoor Bike Data 0x2AD2

    /// Flags 0x1FFE: bits 1–12 set and bit 0 clear, so every field is present (bit 0 clear
    /// means speed IS here). 2 + 28 octets, in the spec's order. The values are those of the
    /// every-field test in an Auuki fork (deancochran/Auuki, test/ble/indoor-bike-data.test.js),
    /// except the resistance level, made negative here to show it is a sint16.
    static let everyField: [UInt8] = [
        0xFE, 0x1F,
        0xCA, 0x0C,             // instantaneous speed 3274 → 32.74 km/h
        0x18, 0x0B,             // average speed 2840 → 28.40 km/h
        0xB5, 0x00,             // instantaneous cadence 181 → 90.5 rpm
        0xAB, 0x00,             // average cadence 171 → 85.5 rpm
        0xD3, 0xA4, 0x01,       // total distance 107 731 m (uint24, high octet non-zero)
        0xEC, 0xFF,             // resistance level −20 (sint16)
        0xFA, 0x00,             // instantaneous power 250 W
        0xF0, 0x00,             // average power 240 W
        0x2C, 0x01, 0x90, 0x01, 0x05, // energy: 300 kcal, 400 kcal/h, 5 kcal/min
        0x91,                   // heart rate 145 bpm
        0x55,                   // metabolic equivalent 85 → 8.5 MET
        0x58, 0x02,             // elapsed time 600 s
        0x64, 0x00,             // remaining time 100 s
    ]

    @Test func everyFieldInOrderWithItsResolution() throws {
        let d = try D.decode(Self.everyField)
        #expect(d.instantaneousSpeed == 3274 && d.averageSpeed == 2840)
        #expect(abs(d.speedMetresPerSecond! - 32.74 / 3.6) < 1e-9)
        #expect(d.instantaneousCadence == 181 && d.cadenceRPM == 90.5 && d.averageCadence == 171)
        #expect(d.totalDistance == 107_731 && d.resistanceLevel == -20)
        #expect(d.instantaneousPower == 250 && d.averagePower == 240)
        #expect(d.expendedEnergy == .init(total: 300, perHour: 400, perMinute: 5))
        #expect(d.heartRate == 145 && d.metabolicEquivalent == 85)
        #expect(d.elapsedTime == 600 && d.remainingTime == 100)
        #expect(!d.moreData && d.warnings.isEmpty && d.flags == 0x1FFE)
        #expect(d.encoded() == Self.everyField)
    }

    /// Bit 0 is the one inverted flag: 1 says "more packets follow" and carries no speed.
    @Test func moreDataBitIsInverted() throws {
        let noSpeed = try D.decode([0x41, 0x00, 0x9C, 0xFF])      // flags 0x0041: More Data, power
        #expect(noSpeed.instantaneousSpeed == nil && noSpeed.moreData && noSpeed.instantaneousPower == -100)
        let speed = try D.decode([0x40, 0x00, 0x10, 0x0E, 0x9C, 0xFF]) // flags 0x0040: speed, power
        #expect(speed.instantaneousSpeed == 3600 && speed.speedMetresPerSecond == 10 && !speed.moreData)
        #expect(speed.instantaneousPower == -100)
        // Flags alone with bit 0 set: a legal, empty continuation packet.
        #expect(try D.decode([0x01, 0x00]) == D())
        #expect(D().encoded() == [0x01, 0x00])
    }

    /// Peer vectors: Auuki's FTMS tests (dvmarinoff/Flux, since renamed Auuki,
    /// test/ble/ftms.test.js, IndoorBikeData "speed-cadence-power" and
    /// "speed-cadence-power-heartRate"; deancochran/Auuki, test/ble/indoor-bike-data.test.js,
    /// "speed-cadence-distance-power-heartRate"), with the values they expect.
    @Test func auukiPeerVectors() throws {
        let a = try D.decode([68, 0, 24, 1, 20, 0, 6, 0])
        #expect(a.instantaneousSpeed == 280 && a.cadenceRPM == 10 && a.instantaneousPower == 6 && a.heartRate == nil)
        let b = try D.decode([68, 2, 170, 5, 46, 0, 24, 0, 70])
        #expect(b.instantaneousSpeed == 1450 && b.cadenceRPM == 23 && b.instantaneousPower == 24 && b.heartRate == 70)
        let c = try D.decode([84, 2, 202, 12, 160, 0, 211, 164, 0, 44, 1, 143])
        #expect(c.instantaneousSpeed == 3274 && c.cadenceRPM == 80 && c.totalDistance == 42_195)
        #expect(c.instantaneousPower == 300 && c.heartRate == 143 && c.warnings.isEmpty)
    }

    /// A real trainer: an Elite Suito notification recorded in the same Auuki test file's
    /// comments, flags 0x0854 (speed, cadence, distance, power, elapsed time), 13 octets.
    @Test func eliteSuitoCapture() throws {
        let d = try D.decode([0x54, 0x08, 0xB9, 0x06, 0xB0, 0x00, 0x86, 0x0D, 0x00, 0x45, 0x00, 0x20, 0x01])
        #expect(d == D(instantaneousSpeed: 1721, instantaneousCadence: 176, totalDistance: 3462,
                       instantaneousPower: 69, elapsedTime: 288))
        #expect(d.cadenceRPM == 88 && abs(d.speedMetresPerSecond! - 17.21 / 3.6) < 1e-9)
    }

    @Test(arguments: [
        ([], "flags", 2), ([0x00], "flags", 2),
        ([0x00, 0x00, 0x18], "instantaneous speed", 4),
        ([0x45, 0x00, 0x14], "instantaneous cadence", 4),            // no speed: cadence is first
        ([0x40, 0x00, 0x10, 0x0E, 0xFA], "instantaneous power", 6),   // speed whole, power cut
        ([0x11, 0x00, 1, 2], "total distance", 5),               // uint24 needs all three
        ([0x01, 0x01, 1, 2, 3, 4], "expended energy", 7),           // the five octets come together
        ([0x01, 0x02], "heart rate", 3),
        ([0x01, 0x10, 0x64], "remaining time", 4),
    ] as [([UInt8], String, Int)])
    func truncatedNamesTheField(_ bytes: [UInt8], _ field: String, _ needed: Int) {
        #expect {
            try D.decode(bytes)
        } throws: { error in
            guard case let .truncated(c, f, n, got) = error as? GATTDecodingError else { return false }
            return c == .indoorBikeData && f.description == field && n == needed && got == bytes.count
        }
    }

    @Test func paddingIsWarnedNotRefused() throws {
        let d = try D.decode([0x41, 0x00, 0xFA, 0x00, 0xAA])
        #expect(d.instantaneousPower == 250 && d.warnings == .trailingOctets)
    }

    // MARK: the split-record assembler

    /// Packet 1: More Data, cadence 90 rpm, power 250 W. Packet 2 ends the record: speed
    /// 36 km/h and heart rate 140.
    static let firstHalf: [UInt8] = [0x45, 0x00, 0xB4, 0x00, 0xFA, 0x00]
    static let lastHalf: [UInt8] = [0x00, 0x02, 0x10, 0x0E, 0x8C]

    @Test func assemblerJoinsARecordSplitOverTwoNotifications() throws {
        var a = IndoorBikeDataAssembler()
        #expect(a.add(try D.decode(Self.firstHalf)) == nil)
        let record = try #require(a.add(try D.decode(Self.lastHalf)))
        #expect(record == D(instantaneousSpeed: 3600, instantaneousCadence: 180, instantaneousPower: 250, heartRate: 140))
        #expect(record.cadenceRPM == 90 && record.speedMetresPerSecond == 10 && record.warnings.isEmpty)
        // Nothing pending after a complete record: a one-packet record comes out as it is.
        #expect(a.add(try D.decode(Self.lastHalf)) == D(instantaneousSpeed: 3600, heartRate: 140))
    }

    /// Three notifications: two More Data packets with different fields are held together
    /// (no field repeats, so neither is flushed), the speed packet ends the record.
    @Test func assemblerJoinsThreePackets() throws {
        var a = IndoorBikeDataAssembler()
        #expect(a.add(try D.decode(Self.firstHalf)) == nil)
        #expect(a.add(try D.decode([0x01, 0x02, 0x8C])) == nil)        // flags 0x0201: More Data, HR 140
        let record = try #require(a.add(try D.decode([0x00, 0x00, 0x10, 0x0E])))
        #expect(record == D(instantaneousSpeed: 3600, instantaneousCadence: 180, instantaneousPower: 250, heartRate: 140))
    }

    @Test func assemblerResetDropsThePendingHalf() throws {
        var a = IndoorBikeDataAssembler()
        #expect(a.add(try D.decode(Self.firstHalf)) == nil)
        a.reset() // a reconnect: the half from the old link must not join the new link's packet
        let record = try #require(a.add(try D.decode(Self.lastHalf)))
        #expect(record.instantaneousCadence == nil && record.instantaneousPower == nil && record.heartRate == 140)
    }

    /// A trainer that never sends More Data = 0: a repeated field starts a new record, and the
    /// pending one comes out marked rather than being lost or overwritten.
    @Test func repeatedFieldFlushesAnUnterminatedRecord() throws {
        var a = IndoorBikeDataAssembler()
        #expect(a.add(try D.decode(Self.firstHalf)) == nil)
        let flushed = try #require(a.add(try D.decode([0x45, 0x00, 0xB6, 0x00, 0x04, 0x01])))
        #expect(flushed.instantaneousCadence == 180 && flushed.instantaneousPower == 250)
        #expect(flushed.warnings == .unterminatedRecord)
        let next = try #require(a.add(try D.decode(Self.lastHalf)))
        #expect(next.instantaneousCadence == 182 && next.instantaneousPower == 260 && next.warnings.isEmpty)
    }

    // MARK: Feature, ranges, target validation

    /// Machine: cadence (1), total distance (2), resistance (7), heart rate (10), power (14) =
    /// 0x4486. Targets: resistance (2), power (3), indoor bike simulation (13) = 0x200C.
    @Test func featureBits() throws {
        let bytes: [UInt8] = [0x86, 0x44, 0x00, 0x00, 0x0C, 0x20, 0x00, 0x00]
        let f = try FitnessMachineFeature.decode(bytes)
        #expect(f.machineFeatures == 0x4486 && f.targetSettingFeatures == 0x200C)
        #expect(f.cadenceSupported && f.totalDistanceSupported && f.resistanceLevelSupported)
        #expect(f.heartRateMeasurementSupported && f.powerMeasurementSupported)
        #expect(!f.averageSpeedSupported && !f.expendedEnergySupported && !f.elapsedTimeSupported)
        #expect(f.resistanceTargetSupported && f.powerTargetSupported && f.indoorBikeSimulationSupported)
        #expect(!f.wheelCircumferenceSupported && !f.spinDownSupported)
        #expect(f.encoded() == bytes)
        #expect(throws: GATTDecodingError.truncated(.fitnessMachineFeature, field: "fitness machine features", needed: 4, got: 3)) {
            try FitnessMachineFeature.decode([0x86, 0x44, 0x00])
        }
        #expect(throws: GATTDecodingError.truncated(.fitnessMachineFeature, field: "target setting features", needed: 8, got: 6)) {
            try FitnessMachineFeature.decode(Array(bytes[..<6]))
        }
    }

    @Test func supportedRanges() throws {
        // Power: 0…2000 W in 1 W steps.
        let power = try SupportedRange.decode(.supportedPowerRange, [0x00, 0x00, 0xD0, 0x07, 0x01, 0x00])
        #expect(power == SupportedRange(minimum: 0, maximum: 2000, increment: 1))
        // Resistance, in 1/10: 0.0…100.0 in steps of 1.0.
        let resistance = try SupportedRange.decode(.supportedResistanceLevelRange, [0x00, 0x00, 0xE8, 0x03, 0x0A, 0x00])
        #expect(resistance == SupportedRange(minimum: 0, maximum: 1000, increment: 10))
        #expect(resistance.encoded() == [0x00, 0x00, 0xE8, 0x03, 0x0A, 0x00])
        #expect(throws: GATTDecodingError.wrongLength(.supportedPowerRange, expected: 6, got: 5)) {
            try SupportedRange.decode(.supportedPowerRange, [0x00, 0x00, 0xD0, 0x07, 0x01])
        }
        #expect(throws: GATTDecodingError.outOfRange(.supportedPowerRange, field: "minimum above maximum", value: 2000)) {
            try SupportedRange.decode(.supportedPowerRange, [0xD0, 0x07, 0x00, 0x00, 0x01, 0x00])
        }
    }

    @Test func targetPowerValidation() throws {
        let range = SupportedRange(minimum: 25, maximum: 1498, increment: 5)
        #expect(try range.targetPower(250) == .setTargetPower(250))
        #expect(try range.targetPower(250).encoded() == [0x05, 0xFA, 0x00])
        #expect(try range.targetPower(25).encoded() == [0x05, 0x19, 0x00])
        #expect(throws: ControlPointValueError.aboveMaximum(field: "target power (W)", value: 2000, maximum: 1498)) {
            try range.targetPower(2000)
        }
        #expect(throws: ControlPointValueError.belowMinimum(field: "target power (W)", value: 10, minimum: 25)) {
            try range.targetPower(10)
        }
        #expect(throws: ControlPointValueError.notFinite(field: "target power (W)")) { try range.targetPower(.infinity) }
        let message = "\(ControlPointValueError.aboveMaximum(field: "target power (W)", value: 2000, maximum: 1498))"
        #expect(message == "target power (W) 2000.0 is above the supported maximum 1498.0")
        // Off the 5 W grid (counted from the 25 W minimum): snapped to the nearest step, and
        // never past the maximum, rather than refused — a %FTP target is rarely on the grid.
        #expect(try range.targetPower(252) == .setTargetPower(250))
        #expect(try range.targetPower(253) == .setTargetPower(255))
        #expect(try range.targetPower(1498) == .setTargetPower(1495))
    }

    @Test func targetResistanceValidation() throws {
        let range = SupportedRange(minimum: 0, maximum: 1000, increment: 10) // 0.0…100.0, steps of 1.0
        #expect(try range.targetResistanceLevel(12).encoded() == [0x04, 0x78])        // 120 tenths
        #expect(try range.targetResistanceLevel(12.4) == .setTargetResistanceLevel(120))
        #expect(throws: ControlPointValueError.aboveMaximum(field: "target resistance level (1/10)", value: 1500, maximum: 1000)) {
            try range.targetResistanceLevel(150)
        }
        // In the trainer's range but not in FTMS v1.0's one-octet field (25.5 at most).
        let wide = SupportedRange(minimum: 0, maximum: 1000, increment: 1)
        #expect(throws: ControlPointValueError.aboveMaximum(field: "target resistance level (1/10)", value: 300, maximum: 255)) {
            try wide.targetResistanceLevel(30)
        }
    }

    // MARK: Control Point 0x2AD9

    typealias Request = FitnessMachineControlPointRequest

    @Test func requestEncodingsRoundTrip() throws {
        let cases: [(Request, [UInt8])] = [
            (.requestControl, [0x00]), (.reset, [0x01]), (.startOrResume, [0x07]),
            (.stopOrPause(.stop), [0x08, 0x01]), (.stopOrPause(.pause), [0x08, 0x02]),
            (.setTargetPower(250), [0x05, 0xFA, 0x00]), (.setTargetPower(-5), [0x05, 0xFB, 0xFF]),
            (.setTargetResistanceLevel(120), [0x04, 0x78]),
            (.setTargetSpeed(3600), [0x02, 0x10, 0x0E]), (.setTargetInclination(-15), [0x03, 0xF1, 0xFF]),
            (.setWheelCircumference(21050), [0x12, 0x3A, 0x52]), (.spinDownControl(1), [0x13, 0x01]),
            (.setTargetedCadence(180), [0x14, 0xB4, 0x00]), (.setTargetHeartRate(140), [0x06, 0x8C]),
        ]
        for (request, bytes) in cases {
            #expect(request.encoded() == bytes)
            #expect(try Request.decode(bytes) == request)
        }
    }

    /// Wind −1.5 m/s (a tailwind) → −1500 (1/1000 m/s); grade 4.5 % → 450 (1/100 %);
    /// Crr 0.004 → 40 (1/10000); Cw 0.51 kg/m → 51 (1/100).
    @Test func indoorBikeSimulationResolutions() throws {
        let p = try IndoorBikeSimulationParameters(windSpeed: -1.5, grade: 4.5, rollingResistance: 0.004, windResistance: 0.51)
        #expect(p == IndoorBikeSimulationParameters(windSpeed: Int16(-1500), grade: 450, rollingResistance: UInt8(40), windResistance: 51))
        let bytes: [UInt8] = [0x11, 0x24, 0xFA, 0xC2, 0x01, 0x28, 0x33]
        #expect(Request.setIndoorBikeSimulationParameters(p).encoded() == bytes)
        #expect(try Request.decode(bytes) == .setIndoorBikeSimulationParameters(p))
        // 400 % is 40 000 hundredths, past the sint16 field (327.67 %).
        #expect {
            try IndoorBikeSimulationParameters(windSpeed: 0, grade: 400, rollingResistance: 0.004, windResistance: 0.51)
        } throws: { error in
            guard case let .aboveMaximum(field, value, maximum) = error as? ControlPointValueError else { return false }
            return field == "grade (%)" && value == 400 && abs(maximum - 327.67) < 1e-9
        }
        #expect(throws: ControlPointValueError.belowMinimum(field: "rolling resistance (Crr)", value: -0.001, minimum: 0)) {
            try IndoorBikeSimulationParameters(windSpeed: 0, grade: 0, rollingResistance: -0.001, windResistance: 0.51)
        }
        #expect(throws: ControlPointValueError.notFinite(field: "wind speed (m/s)")) {
            try IndoorBikeSimulationParameters(windSpeed: .nan, grade: 0, rollingResistance: 0.004, windResistance: 0.51)
        }
    }

    /// Auuki's simulation vectors (dvmarinoff/Flux test/ble/ftms.test.js): 3 m/s headwind,
    /// 8.1 % grade, Crr 0.004, Cw 0.49 kg/m as a request and as a machine status.
    @Test func auukiSimulationVectors() throws {
        let p = try IndoorBikeSimulationParameters(windSpeed: 3, grade: 8.1, rollingResistance: 0.004, windResistance: 0.49)
        #expect(Request.setIndoorBikeSimulationParameters(p).encoded() == [17, 184, 11, 42, 3, 40, 49])
        #expect(try FitnessMachineStatus.decode([18, 184, 11, 42, 3, 40, 49]) == .indoorBikeSimulationParametersChanged(p))
        #expect(try FitnessMachineStatus.decode([19, 40, 85]) == .wheelCircumferenceChanged(21_800)) // 2180 mm
        // The same file sends the resistance target as a sint16 ([7, 100, 0]); FTMS v1.0 has
        // one octet, so the status reads 100 (10.0) and the extra octet is not a field.
        #expect(try FitnessMachineStatus.decode([7, 100, 0]) == .targetResistanceLevelChanged(100))
        #expect(try SupportedRange.decode(.supportedPowerRange, [0, 0, 32, 3, 1, 0]) == SupportedRange(minimum: 0, maximum: 800, increment: 1))
    }

    @Test func requestDecodeRefusesUnknownMisLengthedAndOutOfRange() {
        let c = GATTCharacteristic.fitnessMachineControlPoint
        #expect(throws: GATTDecodingError.unknownOpCode(c, opCode: 0x09)) { try Request.decode([0x09, 0x00, 0x00]) }
        #expect(throws: GATTDecodingError.wrongLength(c, expected: 3, got: 2)) { try Request.decode([0x05, 0xFA]) }
        #expect(throws: GATTDecodingError.wrongLength(c, expected: 1, got: 2)) { try Request.decode([0x00, 0x00]) }
        #expect(throws: GATTDecodingError.outOfRange(c, field: "stop or pause", value: 3)) { try Request.decode([0x08, 0x03]) }
        #expect(throws: GATTDecodingError.truncated(c, field: "op code", needed: 1, got: 0)) { try Request.decode([]) }
    }

    typealias Response = FitnessMachineControlPointResponse

    @Test func responses() throws {
        let ok = try Response.decode([0x80, 0x00, 0x01])
        #expect(ok.requestOpCode == 0x00 && ok.result == .success && ok.spinDownSpeeds == nil)
        // Auuki's control point test (dvmarinoff/Auuki): [128, 5, 1] is target power accepted.
        #expect(try Response.decode([128, 5, 1]) == Response(requestOpCode: 5, result: .success))
        #expect(try Response.decode([0x80, 0x11, 0x02]).result == .opCodeNotSupported)
        let invalid = try Response.decode([0x80, 0x05, 0x03])
        #expect(invalid.requestOpCode == 0x05 && invalid.result == .invalidParameter)
        #expect(try Response.decode([0x80, 0x07, 0x04]).result == .operationFailed)
        let denied = try Response.decode([0x80, 0x05, 0x05])
        #expect(denied.result == .controlNotPermitted && denied.encoded() == [0x80, 0x05, 0x05])
        // A reserved result code is kept raw, not refused.
        let reserved = try Response.decode([0x80, 0x05, 0x09])
        #expect(reserved.result == nil && reserved.rawResult == 9)
        // Spin down success carries the window to coast through: 36.00 and 72.00 km/h.
        let spin = try Response.decode([0x80, 0x13, 0x01, 0x10, 0x0E, 0x20, 0x1C])
        #expect(spin.spinDownSpeeds == .init(low: 3600, high: 7200))
        #expect(spin.encoded() == [0x80, 0x13, 0x01, 0x10, 0x0E, 0x20, 0x1C])
    }

    @Test func responseRefusals() {
        let c = GATTCharacteristic.fitnessMachineControlPoint
        #expect(throws: GATTDecodingError.notAResponse(c, opCode: 0x05)) { try Response.decode([0x05, 0x00, 0x01]) }
        #expect(throws: GATTDecodingError.truncated(c, field: "request op code and result code", needed: 3, got: 2)) {
            try Response.decode([0x80, 0x05])
        }
        #expect(throws: GATTDecodingError.truncated(c, field: "spin down target speeds", needed: 7, got: 4)) {
            try Response.decode([0x80, 0x13, 0x01, 0x10])
        }
        #expect("\(GATTDecodingError.notAResponse(c, opCode: 0x05))".contains("(0x80)"))
    }

    // MARK: Fitness Machine Status 0x2ADA, Training Status 0x2AD3

    @Test func machineStatusDecodes() throws {
        typealias S = FitnessMachineStatus
        let sim = IndoorBikeSimulationParameters(windSpeed: Int16(-1500), grade: 450, rollingResistance: UInt8(40), windResistance: 51)
        let cases: [([UInt8], S)] = [
            ([0x01], .reset), ([0x02, 0x02], .stoppedOrPausedByUser(2)), ([0x03], .stoppedBySafetyKey),
            ([0x04], .startedOrResumedByUser), ([0x05, 0x10, 0x0E], .targetSpeedChanged(3600)),
            ([0x06, 0xF1, 0xFF], .targetInclineChanged(-15)), ([0x07, 0x78], .targetResistanceLevelChanged(120)),
            ([0x08, 0xFA, 0x00], .targetPowerChanged(250)), ([0x09, 0x8C], .targetHeartRateChanged(140)),
            ([0x12, 0x24, 0xFA, 0xC2, 0x01, 0x28, 0x33], .indoorBikeSimulationParametersChanged(sim)),
            ([0x13, 0x3A, 0x52], .wheelCircumferenceChanged(21050)), ([0x14, 0x02], .spinDownStatus(2)),
            ([0x15, 0xB4, 0x00], .targetedCadenceChanged(180)), ([0xFF], .controlPermissionLost),
        ]
        for (bytes, status) in cases {
            #expect(try S.decode(bytes) == status)
            #expect(status.encoded() == bytes)
        }
        // Modelled only by its op code (targeted expended energy): parameters not kept.
        #expect(try S.decode([0x0A, 0x2C, 0x01]) == .other(opCode: 0x0A))
        #expect(throws: GATTDecodingError.truncated(.fitnessMachineStatus, field: "target power", needed: 3, got: 2)) {
            try S.decode([0x08, 0xFA])
        }
        #expect(throws: GATTDecodingError.truncated(.fitnessMachineStatus, field: "indoor bike simulation parameters", needed: 7, got: 6)) {
            try S.decode([0x12, 0x24, 0xFA, 0xC2, 0x01, 0x28])
        }
        #expect(throws: GATTDecodingError.truncated(.fitnessMachineStatus, field: "op code", needed: 1, got: 0)) { try S.decode([]) }
    }

    @Test func trainingStatusDecodes() throws {
        let idle = try TrainingStatus.decode([0x00, 0x01])
        #expect(idle.code == 1 && idle.name == "idle" && idle.text == nil && !idle.extendedString)
        // Flag bit 0: a UTF-8 string follows the code.
        let erg = try TrainingStatus.decode([0x01, 0x0C] + Array("ERG 200W".utf8))
        #expect(erg.name == "wattControl" && erg.text == "ERG 200W" && !erg.extendedString)
        #expect(erg.encoded() == [0x01, 0x0C] + Array("ERG 200W".utf8))
        let longer = try TrainingStatus.decode([0x03, 0x0D, 0x41])
        #expect(longer.name == "manualMode" && longer.text == "A" && longer.extendedString)
        #expect(try TrainingStatus.decode([0x00, 0x0B]).name == "coolDown")
        #expect(try TrainingStatus.decode([0x00, 0x20]).name == "reserved")
        #expect(throws: GATTDecodingError.truncated(.trainingStatus, field: "training status", needed: 2, got: 1)) {
            try TrainingStatus.decode([0x00])
        }
        #expect(throws: GATTDecodingError.invalidUTF8(.trainingStatus)) { try TrainingStatus.decode([0x01, 0x0D, 0xFF]) }
    }
}
