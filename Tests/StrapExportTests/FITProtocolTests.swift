import Foundation
import Testing
import StrapModel
@testable import StrapExport

/// The FIT protocol pieces on their own: CRC, header, time base, definitions, layout.
@Suite struct FITProtocolTests {
    @Test func crcMatchesKnownVectors() {
        // FIT's CRC is CRC-16/ARC: the catalogue's check value for "123456789" is 0xBB3D.
        #expect(FIT.CRC.checksum(Array("123456789".utf8)) == 0xBB3D)
        #expect(FIT.CRC.checksum([UInt8]()) == 0)
        #expect(FIT.CRC.checksum([0x00]) == 0x0000)
        #expect(FIT.CRC.checksum([0x01]) == 0xC0C1)
        #expect(FIT.CRC.checksum([0xFF]) == 0x4040)
        // Appending the CRC little-endian leaves a zero residue: how readers verify a file.
        let data = Array("strapd FIT".utf8)
        let crc = FIT.CRC.checksum(data)
        #expect(FIT.CRC.checksum(data + [UInt8(crc & 0xFF), UInt8(crc >> 8)]) == 0)
    }

    @Test func crcIsIncremental() {
        var crc = FIT.CRC()
        crc.update(Array("12345".utf8))
        crc.update(Array("6789".utf8))
        #expect(crc.value == 0xBB3D)
    }

    @Test func headerLayout() {
        let h = FIT.header(dataSize: 0x0102_0304)
        #expect(h.count == 14)
        #expect(h[0] == 14)                       // header size
        #expect(h[1] == 0x20)                     // protocol 2.0
        #expect(UInt16(h[2]) | UInt16(h[3]) << 8 == 2100)
        #expect(Array(h[4..<8]) == [0x04, 0x03, 0x02, 0x01])
        #expect(Array(h[8..<12]) == Array(".FIT".utf8))
        let crc = FIT.CRC.checksum(h[0..<12])
        #expect(h[12] == UInt8(crc & 0xFF) && h[13] == UInt8(crc >> 8))
    }

    @Test func timestampsCountFromFITsEpoch() {
        #expect(FIT.timestamp(631_065_600_000) == 0)                       // 1989-12-31T00:00:00Z
        #expect(FIT.timestamp(1_704_067_200_000) == 1_073_001_600)         // 2024-01-01T00:00:00Z
        #expect(FIT.timestamp(1_704_067_200_999) == 1_073_001_600)         // whole seconds, floored
    }

    @Test func recordDefinitionIsCompact() {
        var sink = ByteSink(capacity: 64)
        FITEncoder.record.write(into: &sink)
        #expect(sink.bytes == [0x44, 0, 0, 20, 0, 5, 253, 4, 0x86, 3, 1, 2, 4, 1, 2, 6, 2, 0x84, 5, 4, 0x86])
        #expect(FITEncoder.record.dataSize == 13)
        #expect(FITEncoder.hrv.dataSize == 11)
        #expect(Set(FITEncoder.definitions.map(\.local)).count == FITEncoder.definitions.count)
    }

    @Test func everyLocalMessageIsDefinedOnceAndReused() throws {
        let w = SyntheticWorkout.running(start: 1_704_067_200_000, seconds: 90, hr: { 120 + Double($0 % 7) },
                                         rr: { [UInt16(500 + $0 % 3)] }, speed: { _ in 3 },
                                         events: [.init(kind: "pause", time: 1_704_067_230_000),
                                                  .init(kind: "resume", time: 1_704_067_240_000)],
                                         laps: [.init(start: 1_704_067_200_000, end: 1_704_067_245_000),
                                                .init(start: 1_704_067_245_000, end: 1_704_067_290_000)])
        let file = try w.export(.fit)
        let walk = try FITWalk(file)
        #expect(walk.definitions.values.allSatisfy { $0 == 1 })
        #expect(walk.definitions.count == FITEncoder.definitions.count)
        #expect(walk.data[4] == 80)            // records: 90 s minus 10 paused
        #expect(walk.data[6] == 2 && walk.data[7] == 1 && walk.data[8] == 1)
        #expect(walk.dataSize == file.count - 16)
        #expect(FIT.CRC.checksum(file) == 0)
    }

    @Test func fixedStringsCutAtACharacterBoundary() {
        var sink = ByteSink(capacity: 32)
        sink.fixedString("ééééé", width: 6)     // 2 bytes each: 2 fit before the NUL, not 2.5
        #expect(sink.bytes == [0xC3, 0xA9, 0xC3, 0xA9, 0, 0])
        sink = ByteSink(capacity: 32)
        sink.fixedString("abéc", width: 5)      // the cut falls after a whole "é": kept
        #expect(sink.bytes == [0x61, 0x62, 0xC3, 0xA9, 0])
        sink = ByteSink(capacity: 32)
        sink.fixedString("ab❤️", width: 5)       // a 3-byte scalar cut after 2 bytes: dropped
        #expect(sink.bytes == [0x61, 0x62, 0, 0, 0])
        sink = ByteSink(capacity: 32)
        sink.fixedString("H10", width: 5)
        #expect(sink.bytes == [0x48, 0x31, 0x30, 0, 0])
    }
}

/// A minimal independent FIT walker: header, definition and data messages by local number.
struct FITWalk {
    var definitions: [UInt8: Int] = [:]
    var data: [UInt8: Int] = [:]
    var dataSize = 0

    struct Malformed: Error {}

    init(_ file: [UInt8]) throws {
        guard file.count >= 16, file[0] == 14, Array(file[8..<12]) == Array(".FIT".utf8) else { throw Malformed() }
        dataSize = Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24
        var sizes: [UInt8: Int] = [:]
        var i = 14
        while i < 14 + dataSize {
            let header = file[i]
            let local = header & 0x0F
            guard header & 0x80 == 0 else { throw Malformed() }       // no compressed timestamps here
            if header & 0x40 != 0 {
                let fields = Int(file[i + 5])
                var size = 0
                for f in 0..<fields { size += Int(file[i + 6 + f * 3 + 1]) }
                sizes[local] = size
                definitions[local, default: 0] += 1
                i += 6 + fields * 3
            } else {
                guard let size = sizes[local] else { throw Malformed() }
                data[local, default: 0] += 1
                i += 1 + size
            }
        }
        guard i == 14 + dataSize else { throw Malformed() }
    }
}
