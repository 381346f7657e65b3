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
        // `STRAP_BENCH_DECODE=power,bike` runs only the workloads whose names contain one of those words (for `perf`).
        let only = getenv("STRAP_BENCH_DECODE").map { String(cString: $0).split(separator: ",").map(String.init) }
        var figures: [BenchFigure] = []
        for w in workloads(packets: packets) where only?.contains(where: { w.name.contains($0) }) ?? true {
            // Warm up, then take the best of three timed runs (least disturbed by the other core).
            _ = measure(w, packets: packets, rounds: max(1, rounds / 10))
            var best = Double.infinity, bestCPU = Double.infinity
            var checksum = 0
            for _ in 0..<3 {
                let (seconds, cpu, sum) = measure(w, packets: packets, rounds: rounds)
                best = min(best, seconds)
                bestCPU = min(bestCPU, cpu)
                checksum &+= sum
            }
            let total = Double(packets * rounds)
            allocation_counter_enable(1)
            let before = allocation_counter_count()
            _ = measure(w, packets: packets, rounds: 10)
            let allocations = Double(allocation_counter_count() - before) / Double(packets * 10)
            allocation_counter_enable(0)
            if checksum == 42 { print("") }     // keeps the decoded values observable
            // On a shared machine the wall clock counts the time other processes had the core;
            // the thread's CPU time does not (printed beside the figures, which stay wall time).
            print("  decode/\(w.name): " + String(format: "%.1f ns/packet wall, %.1f ns/packet thread CPU (best of 3 × %d packets)",
                                                 best / total * 1e9, bestCPU / total * 1e9, packets * rounds))
            figures.append(BenchFigure(section: name, name: "\(w.name) packets/s", unit: "packets/s",
                                       ours: total / best, higherIsBetter: true))
            figures.append(BenchFigure(section: name, name: "\(w.name) ns/packet", unit: "ns",
                                       ours: best / total * 1e9, higherIsBetter: false))
            figures.append(BenchFigure(section: name, name: "\(w.name) heap allocations/packet", unit: "allocations",
                                       ours: allocations, higherIsBetter: false))
        }
        return figures
    }

    /// Wall seconds, thread CPU seconds and the checksum of one timed run.
    static func measure(_ w: Workload, packets: Int, rounds: Int) -> (Double, Double, Int) {
        var sum = 0
        let startCPU = threadCPU()
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
        return (now() - start, threadCPU() - startCPU, sum)
    }

    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
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
        let (sp, bp) = build { rng in
            // A crank power meter: balance (left pedal), crank revolutions, accumulated energy.
            CyclingPowerMeasurement(instantaneousPower: .random(in: 0...1200, using: &rng),
                                    pedalPowerBalance: .random(in: 80...120, using: &rng), pedalPowerBalanceReference: .left,
                                    crank: .init(revolutions: .random(in: 0...UInt16.max, using: &rng),
                                                 eventTime: .random(in: 0...UInt16.max, using: &rng)),
                                    accumulatedEnergy: .random(in: 0...UInt16.max, using: &rng)).encoded()
        }
        let (spf, bpf) = build { rng in
            // Every flag field (34 octets); extreme force and torque together also set a warning.
            func u16() -> UInt16 { .random(in: 0...UInt16.max, using: &rng) }
            func s16() -> Int16 { .random(in: -2000...2000, using: &rng) }
            return CyclingPowerMeasurement(
                instantaneousPower: .random(in: 0...1200, using: &rng), pedalPowerBalance: .random(in: 80...120, using: &rng),
                pedalPowerBalanceReference: .left, accumulatedTorque: u16(), accumulatedTorqueSource: .crankBased,
                wheel: .init(revolutions: .random(in: 0...UInt32.max, using: &rng), eventTime: u16()),
                crank: .init(revolutions: u16(), eventTime: u16()),
                extremeForce: .init(maximum: s16(), minimum: s16()), extremeTorque: .init(maximum: s16(), minimum: s16()),
                extremeAngles: .init(maximum: .random(in: 0...359, using: &rng), minimum: .random(in: 0...359, using: &rng)),
                topDeadSpotAngle: .random(in: 0...359, using: &rng), bottomDeadSpotAngle: .random(in: 0...359, using: &rng),
                accumulatedEnergy: u16(), offsetCompensationIndicator: true).encoded()
        }
        let powerDecode: (UnsafeRawBufferPointer) -> Int = { bytes in
            guard let m = try? CyclingPowerMeasurement.decode(bytes) else { return -1 }
            return Int(m.instantaneousPower) &+ Int(m.crank?.revolutions ?? 0) &+ Int(m.accumulatedEnergy ?? 0)
                &+ Int(m.extremeAngles?.minimum ?? 0) &+ Int(m.warnings.rawValue)
        }
        let (si, bi) = build { rng in
            // A smart trainer's usual packet: speed, cadence, power.
            IndoorBikeData(instantaneousSpeed: .random(in: 0...6000, using: &rng), instantaneousCadence: .random(in: 0...240, using: &rng),
                           instantaneousPower: .random(in: 0...1500, using: &rng)).encoded()
        }
        let (sif, bif) = build { rng in
            // Every field (30 octets), More Data = 0.
            func u16(_ r: ClosedRange<UInt16>) -> UInt16 { .random(in: r, using: &rng) }
            return IndoorBikeData(
                instantaneousSpeed: u16(0...6000), averageSpeed: u16(0...6000), instantaneousCadence: u16(0...240),
                averageCadence: u16(0...240), totalDistance: .random(in: 0...0xFF_FFFF, using: &rng),
                resistanceLevel: .random(in: 0...200, using: &rng), instantaneousPower: .random(in: 0...1500, using: &rng),
                averagePower: .random(in: 0...1500, using: &rng),
                expendedEnergy: .init(total: u16(0...5000), perHour: u16(0...3000), perMinute: .random(in: 0...50, using: &rng)),
                heartRate: .random(in: 50...190, using: &rng), metabolicEquivalent: .random(in: 10...200, using: &rng),
                elapsedTime: u16(0...UInt16.max), remainingTime: u16(0...UInt16.max)).encoded()
        }
        let bikeDecode: (UnsafeRawBufferPointer) -> Int = { bytes in
            guard let d = try? IndoorBikeData.decode(bytes) else { return -1 }
            return Int(d.instantaneousSpeed ?? 0) &+ Int(d.instantaneousPower ?? 0) &+ Int(d.instantaneousCadence ?? 0)
                &+ Int(d.remainingTime ?? 0) &+ Int(d.warnings.rawValue)
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
            Workload(name: "cycling power, balance+crank+energy", stride: sp, buffer: bp, decode: powerDecode),
            Workload(name: "cycling power, every field", stride: spf, buffer: bpf, decode: powerDecode),
            Workload(name: "indoor bike, speed+cadence+power", stride: si, buffer: bi, decode: bikeDecode),
            Workload(name: "indoor bike, every field", stride: sif, buffer: bif, decode: bikeDecode),
        ]
    }
}
