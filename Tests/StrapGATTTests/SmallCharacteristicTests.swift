import Testing
@testable import StrapGATT

/// Body Sensor Location, Sensor Location, Battery Level, control points, Device Information.
@Suite struct SmallCharacteristicTests {
    @Test(arguments: [(0, "other"), (1, "chest"), (2, "wrist"), (3, "finger"), (4, "hand"), (5, "earLobe"),
                      (6, "foot"), (7, "reserved"), (255, "reserved")] as [(UInt8, String)])
    func bodySensorLocationNames(_ code: UInt8, _ name: String) throws {
        let l = try BodySensorLocation.decode([code])
        #expect(l.name == name && l.code == code)
    }

    @Test(arguments: [[], [1, 0]] as [[UInt8]])
    func bodySensorLocationMustBeOneOctet(_ bytes: [UInt8]) {
        #expect(throws: GATTDecodingError.wrongLength(.bodySensorLocation, expected: 1, got: bytes.count)) {
            try BodySensorLocation.decode(bytes)
        }
    }

    @Test func sensorLocationTable() throws {
        let expected = ["other", "topOfShoe", "inShoe", "hip", "frontWheel", "leftCrank", "rightCrank", "leftPedal",
                        "rightPedal", "frontHub", "rearDropout", "chainstay", "rearWheel", "rearHub", "chest",
                        "spider", "chainRing"]
        for (code, name) in expected.enumerated() {
            #expect(try SensorLocation.decode([UInt8(code)]).name == name)
        }
        #expect(try SensorLocation.decode([17]).name == "reserved")
        #expect(throws: GATTDecodingError.self) { try SensorLocation.decode([]) }
    }

    @Test func batteryLevelRange() throws {
        #expect(try BatteryLevel.decode([0]).percent == 0)
        #expect(try BatteryLevel.decode([100]).percent == 100)
        #expect(throws: GATTDecodingError.outOfRange(.batteryLevel, field: "battery level", value: 101)) {
            try BatteryLevel.decode([101])
        }
        #expect(throws: GATTDecodingError.wrongLength(.batteryLevel, expected: 1, got: 2)) {
            try BatteryLevel.decode([50, 0])
        }
    }

    @Test func heartRateControlPoint() throws {
        #expect(HeartRateControlPoint.resetEnergyExpended.encoded() == [0x01])
        #expect(try HeartRateControlPoint.decode([0x01]).operation == "resetEnergyExpended")
        #expect(try HeartRateControlPoint.decode([0x02]).operation == "reserved")
        #expect(throws: GATTDecodingError.self) { try HeartRateControlPoint.decode([]) }
    }

    @Test func scControlPointRequests() {
        #expect(SCControlPointRequest.setCumulativeValue(0x01020304).encoded() == [1, 4, 3, 2, 1])
        #expect(SCControlPointRequest.startSensorCalibration.encoded() == [2])
        #expect(SCControlPointRequest.updateSensorLocation(SensorLocation(code: 12)).encoded() == [3, 12])
        #expect(SCControlPointRequest.requestSupportedSensorLocations.encoded() == [4])
    }

    @Test func scControlPointResponses() throws {
        let ok = try SCControlPointResponse.decode([0x10, 0x01, 0x01])
        #expect(ok.requestOpCode == 1 && ok.result == .success && ok.supportedLocations.isEmpty)
        let list = try SCControlPointResponse.decode([0x10, 0x04, 0x01, 4, 12, 13])
        #expect(list.supportedLocations.map(\.name) == ["frontWheel", "rearWheel", "rearHub"])
        #expect(try SCControlPointResponse.decode([0x10, 0x03, 0x03]).result == .invalidParameter)
        #expect(try SCControlPointResponse.decode([0x10, 0x03, 0x09]).result == nil)
        #expect(throws: GATTDecodingError.notAResponse(.scControlPoint, opCode: 0x01)) {
            try SCControlPointResponse.decode([0x01, 0x00, 0x00, 0x00, 0x00])
        }
        #expect(throws: GATTDecodingError.self) { try SCControlPointResponse.decode([0x10, 0x01]) }
        #expect(try SCControlPointResponse.decode(list.encoded()) == list)
    }

    @Test func deviceInformationStrings() throws {
        let s = try DeviceInformationString.decode(.manufacturerName, Array("Polar Electro Oy".utf8))
        #expect(s.value == "Polar Electro Oy")
        #expect(try DeviceInformationString.decode(.modelNumber, Array("H10".utf8) + [0, 0]).value == "H10")
        #expect(try DeviceInformationString.decode(.firmwareRevision, Array("5.0.0 ✓".utf8)).value == "5.0.0 ✓")
        #expect(throws: GATTDecodingError.invalidUTF8(.serialNumber)) {
            try DeviceInformationString.decode(.serialNumber, [0x41, 0xFF, 0x42])
        }
    }

    @Test(arguments: ["2a37", "0x2A37", "2A37", "heart-rate-measurement", "00002a37-0000-1000-8000-00805f9b34fb"])
    func characteristicNamesParse(_ text: String) {
        #expect(GATTCharacteristic(parsing: text) == .heartRateMeasurement)
    }

    @Test func unknownCharacteristicNamesDoNotParse() {
        for text in ["", "2a", "2a3", "2a370", "zz37", "0x", "heart-rate", "180d", "ffff"] {
            #expect(GATTCharacteristic(parsing: text) == nil, "\(text)")
        }
        #expect(GATTService.heartRate.uuidString == "0000180d-0000-1000-8000-00805f9b34fb")
    }
}
