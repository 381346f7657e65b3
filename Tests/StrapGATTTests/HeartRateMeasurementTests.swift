import Testing
@testable import StrapGATT

/// docs/decoding.md#heart-rate-measurement-0x2a37, one case per rule.
@Suite struct HeartRateMeasurementTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var bytes: [UInt8]
        var heartRate: UInt16
        var contact: SensorContact
        var energy: UInt16?
        var rr: [UInt16]?
        var warnings: DecodeWarnings = []
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "rule 1: uint8 minimum", bytes: [0x00, 0x48], heartRate: 72, contact: .notSupported),
        Case(label: "rule 1: uint16 format from the flags byte", bytes: [0x01, 0x2C, 0x01], heartRate: 300, contact: .notSupported),
        Case(label: "rule 2: contact 0x00 not supported", bytes: [0x00, 60], heartRate: 60, contact: .notSupported),
        Case(label: "rule 2: bit 1 alone (0x02) is not supported", bytes: [0x02, 0x00], heartRate: 0, contact: .notSupported),
        Case(label: "rule 2: 0x04 supported, not detected", bytes: [0x04, 60], heartRate: 60, contact: .notDetected),
        Case(label: "rule 2: 0x06 detected", bytes: [0x06, 60], heartRate: 60, contact: .detected),
        Case(label: "rule 3: energy expended kJ", bytes: [0x08, 0x50, 0x10, 0x27], heartRate: 80, contact: .notSupported, energy: 10000),
        Case(label: "rule 3: energy saturated stays 0xFFFF", bytes: [0x08, 0x50, 0xFF, 0xFF], heartRate: 80, contact: .notSupported, energy: 0xFFFF),
        Case(label: "rule 4: one RR", bytes: [0x16, 0x4A, 0x3E, 0x03], heartRate: 74, contact: .detected, rr: [830]),
        Case(label: "rule 4: RR after EE (offset moves)", bytes: [0x18, 0x4A, 0x01, 0x00, 0x3E, 0x03, 0x00, 0x04],
             heartRate: 74, contact: .notSupported, energy: 1, rr: [830, 1024]),
        Case(label: "rule 4: nine RR at MTU 23", bytes: [0x10, 0x3C] + Array(repeating: [0x00, 0x04], count: 9).flatMap { $0 },
             heartRate: 60, contact: .notSupported, rr: Array(repeating: 1024, count: 9)),
        Case(label: "rule 4: more than 20 octets (large MTU) is legal", bytes: [0x10, 0x3C] + Array(repeating: [0x00, 0x04], count: 20).flatMap { $0 },
             heartRate: 60, contact: .notSupported, rr: Array(repeating: 1024, count: 20)),
        Case(label: "rule 4: RR edge values 0 and 65535", bytes: [0x10, 0x3C, 0x00, 0x00, 0xFF, 0xFF],
             heartRate: 60, contact: .notSupported, rr: [0, 65535]),
        Case(label: "rule 1: RR flag without RR octets keeps HR, warns", bytes: [0x10, 0x3C],
             heartRate: 60, contact: .notSupported, rr: [], warnings: .emptyRRField),
        Case(label: "rule 1: dangling odd octet keeps whole RR, warns", bytes: [0x10, 0x3C, 0x00, 0x04, 0x07],
             heartRate: 60, contact: .notSupported, rr: [1024], warnings: .danglingOctet),
        Case(label: "rule 1: single dangling octet after EE", bytes: [0x18, 0x3C, 0x05, 0x00, 0x07],
             heartRate: 60, contact: .notSupported, energy: 5, rr: [], warnings: [.emptyRRField, .danglingOctet]),
        Case(label: "rule 6: HR 0 is kept (no reading)", bytes: [0x00, 0x00], heartRate: 0, contact: .notSupported),
        Case(label: "rule 7: reserved flag bits ignored", bytes: [0xE6, 0x48], heartRate: 72, contact: .detected),
    ]

    @Test(arguments: cases)
    func decodes(_ c: Case) throws {
        let m = try HeartRateMeasurement.decode(c.bytes)
        #expect(m.heartRate == c.heartRate)
        #expect(m.contact == c.contact)
        #expect(m.energyExpended == c.energy)
        #expect(m.rrIntervals == c.rr)
        #expect(m.warnings == c.warnings)
    }

    @Test(arguments: [
        ([UInt8](), "flags"),
        ([0x00], "heart rate"),
        ([0x01, 0x48], "heart rate"),
        ([0x08, 0x48, 0x01], "energy expended"),
        ([0x09, 0x48, 0x00, 0x01], "energy expended"),
    ] as [([UInt8], String)])
    func tooShortForItsFlagsIsInvalid(_ bytes: [UInt8], field: String) {
        #expect {
            _ = try HeartRateMeasurement.decode(bytes)
        } throws: { error in
            guard case let .truncated(c, f, needed, got) = error as? GATTDecodingError else { return false }
            return c == .heartRateMeasurement && f.description == field && needed > got && got == bytes.count
        }
    }

    @Test func rrMillisecondsAreExact() throws {
        let m = try HeartRateMeasurement.decode([0x10, 0x3C, 0x3E, 0x03, 0x01, 0x00])
        #expect(m.rrIntervalsMilliseconds == [810.546875, 0.9765625])
    }

    @Test func zeroHeartRateIsFlaggedNoReading() throws {
        #expect(try HeartRateMeasurement.decode([0x00, 0x00]).isNoReading)
        #expect(!(try HeartRateMeasurement.decode([0x00, 0x01]).isNoReading))
    }

    @Test func encodeChoosesFormatFromValue() {
        #expect(HeartRateMeasurement(heartRate: 72).encoded() == [0x00, 72])
        #expect(HeartRateMeasurement(heartRate: 300).encoded() == [0x01, 0x2C, 0x01])
        let full = HeartRateMeasurement(heartRate: 74, contact: .detected, energyExpended: 7, rrIntervals: [830])
        #expect(full.encoded() == [0x1E, 74, 7, 0, 0x3E, 0x03])
    }
}
