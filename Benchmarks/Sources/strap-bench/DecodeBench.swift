import AllocationCounter
import Glibc
import StrapGATT

/// `strap-bench decode`: packets per second on one core, and heap allocations per packet,
/// for each decoder on realistic packets laid out back to back as they arrive from BlueZ.
enum DecodeBench: BenchSection {
    static let name = "decode"
    static let summary = "GATT decoders: packets/s per core and heap allocations per packet"

    struct Workload {
        var name: String
        var stride: Int
        var buffer: [UInt8]
        var decode: (UnsafeRawBufferPointer) -> Int
    }

    static func run(quick: Bool) throws -> [BenchFigure] {
        let packets = 4096
        let rounds = quick ? 200 : 5000
        var figures: [BenchFigure] = []
        for w in workloads(packets: packets) {
            // Warm up, then take the best of three timed runs (least disturbed by the other core).
            _ = measure(w, packets: packets, rounds: max(1, rounds / 10))
            var best = Double.infinity
            var checksum = 0
            for _ in 0..<3 {
                let (seconds, sum) = measure(w, packets: packets, rounds: rounds)
                best = min(best, seconds)
                checksum &+= sum
            }
            let total = Double(packets * rounds)
            allocation_counter_enable(1)
            let before = allocation_counter_count()
            _ = measure(w, packets: packets, rounds: 10)
            let allocations = Double(allocation_counter_count() - before) / Double(packets * 10)
            allocation_counter_enable(0)
            if checksum == 42 { print("") }     // keeps the decoded values observable
            figures.append(BenchFigure(section: name, name: "\(w.name) packets/s", unit: "packets/s",
                                       ours: total / best, higherIsBetter: true))
            figures.append(BenchFigure(section: name, name: "\(w.name) ns/packet", unit: "ns",
                                       ours: best / total * 1e9, higherIsBetter: false))
            figures.append(BenchFigure(section: name, name: "\(w.name) heap allocations/packet", unit: "allocations",
                                       ours: allocations, higherIsBetter: false))
        }
        return figures
    }

    static func measure(_ w: Workload, packets: Int, rounds: Int) -> (Double, Int) {
        var sum = 0
        let start = now()
        w.buffer.withUnsafeBytes { all in
            for _ in 0..<rounds {
                var offset = 0
                for _ in 0..<packets {
                    sum &+= w.decode(UnsafeRawBufferPointer(rebasing: all[offset..<offset + w.stride]))
                    offset += w.stride
                }
            }
        }
        return (now() - start, sum)
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func workloads(packets: Int) -> [Workload] {
        var rng = SystemRandomNumberGenerator()
        func build(_ make: (inout SystemRandomNumberGenerator) -> [UInt8]) -> (Int, [UInt8]) {
            let all = (0..<packets).map { _ in make(&rng) }
            return (all[0].count, all.flatMap { $0 })
        }
        func hr(rr: Int) -> (Int, [UInt8]) {
            build { rng in
                HeartRateMeasurement(heartRate: UInt16.random(in: 50...190, using: &rng), contact: .detected,
                                     rrIntervals: rr == 0 ? nil : (0..<rr).map { _ in UInt16.random(in: 300...1400, using: &rng) }).encoded()
            }
        }
        let hrDecode: (UnsafeRawBufferPointer) -> Int = { bytes in
            guard let m = try? HeartRateMeasurement.decode(bytes) else { return -1 }
            return Int(m.heartRate) &+ (m.rrIntervals?.count ?? 0)
        }
        let (s0, b0) = hr(rr: 0), (s1, b1) = hr(rr: 1), (s9, b9) = hr(rr: 9)
        let (sc, bc) = build { rng in
            CSCMeasurement(wheel: .init(revolutions: .random(in: 0...UInt32.max, using: &rng), eventTime: .random(in: 0...UInt16.max, using: &rng)),
                           crank: .init(revolutions: .random(in: 0...UInt16.max, using: &rng), eventTime: .random(in: 0...UInt16.max, using: &rng))).encoded()
        }
        let (sr, br) = build { rng in
            RSCMeasurement(speedRaw: .random(in: 0...1500, using: &rng), cadence: .random(in: 60...200, using: &rng),
                           strideLengthRaw: .random(in: 50...200, using: &rng), totalDistanceRaw: .random(in: 0...UInt32.max, using: &rng),
                           isRunning: true).encoded()
        }
        return [
            Workload(name: "heart rate, 0 RR", stride: s0, buffer: b0, decode: hrDecode),
            Workload(name: "heart rate, 1 RR", stride: s1, buffer: b1, decode: hrDecode),
            Workload(name: "heart rate, 9 RR", stride: s9, buffer: b9, decode: hrDecode),
            Workload(name: "CSC wheel+crank", stride: sc, buffer: bc, decode: { bytes in
                guard let m = try? CSCMeasurement.decode(bytes) else { return -1 }
                return Int(m.wheel?.eventTime ?? 0) &+ Int(m.crank?.revolutions ?? 0)
            }),
            Workload(name: "RSC full", stride: sr, buffer: br, decode: { bytes in
                guard let m = try? RSCMeasurement.decode(bytes) else { return -1 }
                return Int(m.speedRaw) &+ Int(m.totalDistanceRaw ?? 0)
            }),
        ]
    }
}
