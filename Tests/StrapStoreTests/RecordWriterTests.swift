import Foundation
import StrapSimulator
import Testing
@testable import StrapStore
import StrapModel

/// The writer builds records in place and reuses its buffers between appends (issue 37); the
/// bytes on disk must stay exactly those of docs/storage.md as the earlier code wrote them.
@Suite struct RecordWriterTests {
    /// The frame as it was written before the in-place version: a body array, then length,
    /// checksum and body. Kept here as the reference the new code is compared with.
    static func referenceFrame(kind: RecordKind, items: Int, payload: [UInt8], to w: inout ByteWriter) {
        var body = ByteWriter(capacity: payload.count + 6)
        if items == 1 { body.u8(kind.rawValue | 0x80) } else { body.u8(kind.rawValue); body.varint(UInt64(items)) }
        body.bytes += payload
        w.varint(UInt64(body.bytes.count))
        w.u32(crc32(body.bytes))
        w.bytes += body.bytes
    }

    @Test func framesInPlaceAreTheReferenceBytes() {
        var rng = SimulationRandom(seed: 0x5707E)
        let kinds: [RecordKind] = [.stream, .samples, .tombstone, .workout]
        // Shared writers, as the store's reused buffer: earlier frames stay in front.
        var new = ByteWriter(), old = ByteWriter()
        for round in 0..<3000 {
            let kind = kinds[Int(rng.next() % 4)]
            let items: Int = switch rng.next() % 5 {
            case 0: 0
            case 1: 1
            case 2: Int(rng.next() % 200)
            case 3: Int(rng.next() % (1 << 40))
            default: Int(rng.next() % 5000)
            }
            // Lengths across the one-, two- and three-byte varints of the frame's length.
            let length = Int(rng.next() % (rng.next() % 32 == 0 ? 40_000 : 300))
            let payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if round % 97 == 0 {
                new.bytes.removeAll(keepingCapacity: true)
                old.bytes.removeAll()
            }
            let before = new.bytes.count
            Frame.append(kind: kind, items: items, payload: payload, to: &new)
            Self.referenceFrame(kind: kind, items: items, payload: payload, to: &old)
            #expect(new.bytes == old.bytes, "round \(round): kind \(kind), \(items) items, \(length) bytes")
            // And the frame parses back to the same kind, count and payload.
            new.bytes.withUnsafeBytes { raw in
                guard case .record(let p) = Frame.parse(raw, at: before, end: raw.count) else {
                    Issue.record("round \(round): frame does not parse"); return
                }
                #expect(p.kind == kind.rawValue && p.items == items && p.next == raw.count)
                #expect(Array(raw[p.payload]) == payload)
            }
            if new.bytes != old.bytes { return }
        }
    }

    /// One store appends random batches with the writer's buffers reused from append to
    /// append (larger batches before smaller ones, so stale bytes would show); the other is
    /// reopened before every append, so each of its appends starts from empty buffers. Their
    /// logs must be the same bytes after the header (the headers differ only in the store id).
    @Test func reusedBuffersWriteWhatFreshOnesWrite() throws {
        var rng = SimulationRandom(seed: 0xB0FF)
        let devices = [Fixtures.strap, Fixtures.tickr, Fixtures.csc]
        let types: [QuantityType] = [.heartRate, .cyclingSpeed, .runningSpeed, .cyclingCadence]
        let shared = SharedMetadata(["source": "footpod"])
        var time = Fixtures.t0
        var appends: [[[Sample]]] = []
        for _ in 0..<60 {
            var batches: [[Sample]] = []
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let count = rng.next() % 6 == 0 ? Int(rng.next() % 600) : Int(rng.next() % 5)
                var batch: [Sample] = []
                for _ in 0..<count {
                    time += Millis(rng.next() % 1500)
                    let device = devices[Int(rng.next() % 3)], type = types[Int(rng.next() % 4)]
                    let value: Double = switch rng.next() % 4 {
                    case 0: Double(rng.next() % 220)
                    case 1: Double(rng.next() % 100_000) / 1000
                    case 2: -Double(rng.next() % 50)
                    default: Double(bitPattern: rng.next() >> 2)
                    }
                    let end = rng.next() % 3 == 0 ? time + Millis(rng.next() % 5000) : time
                    switch rng.next() % 5 {
                    case 0: batch.append(Sample(type: type, value: value, start: time, end: end, device: device, metadata: shared))
                    case 1: batch.append(Sample(type: type, value: value, start: time, end: end, device: device,
                                                metadata: ["b": "\(rng.next() % 9)", "a": "x"], beats: [0.8, 0.81]))
                    default: batch.append(Sample(type: type, value: value, start: time, end: end, device: device))
                    }
                }
                batches.append(batch)
            }
            appends.append(batches)
        }
        let reused = TempDir("reuse"), fresh = TempDir("fresh")
        var small = config(reused)
        small.recordMaxSamples = 64
        let store = try Store.open(small)
        for batches in appends { try store.appendBatches(batches) }
        store.close()
        var freshConfig = config(fresh)
        freshConfig.recordMaxSamples = 64
        for batches in appends {
            let s = try Store.open(freshConfig)
            try s.appendBatches(batches)
            s.close()
        }
        let logs = reused.files().filter { $0.hasSuffix(".log") }
        #expect(!logs.isEmpty)
        #expect(logs == fresh.files().filter { $0.hasSuffix(".log") })
        for name in logs {
            let a = try Data(contentsOf: URL(fileURLWithPath: reused.path + "/" + name))
            let b = try Data(contentsOf: URL(fileURLWithPath: fresh.path + "/" + name))
            #expect(a.count > Format.headerSize)
            #expect(a.dropFirst(Format.headerSize) == b.dropFirst(Format.headerSize), "\(name)")
        }
    }

    /// Each append starts from the streams the previous ones resolved, without hashing. Stream
    /// ids belong to their segment: after a roll a device is defined again, never written under
    /// the id it had in the sealed segment. Two devices, two types an append (as a CSC sensor
    /// sends), a roll every five samples; read back (after a reopen too) every sample keeps its
    /// device, type and value.
    @Test func recentStreamsDoNotOutliveTheirSegment() throws {
        let dir = TempDir("recent-streams")
        var small = config(dir)
        small.segmentMaxItems = 5
        let store = try Store.open(small)
        let devices = (0..<40).map { $0 % 5 < 2 ? Fixtures.strap : Fixtures.tickr }
        let types = (0..<40).map { $0 % 2 == 0 ? QuantityType.cyclingSpeed : .cyclingCadence }
        for i in stride(from: 0, to: 40, by: 2) {
            try store.appendBatch((i...i + 1).map {
                Sample(type: types[$0], value: Double(60 + $0), start: Fixtures.t0 + Millis(i) * 1000, device: devices[$0])
            })
        }
        let written = try readAll(store).added.compactMap(\.sample)
        store.close()
        #expect(dir.files().filter { $0.hasSuffix(".log") }.count > 6)
        let reopened = try Store.open(small)
        let read = try readAll(reopened).added.compactMap(\.sample)
        reopened.close()
        for samples in [written, read] {
            #expect(samples.map(\.device.id) == devices.map(\.id))
            #expect(samples.map(\.type) == types)
            #expect(samples.map(\.value) == (0..<40).map { Double(60 + $0) })
        }
    }
}
