import Foundation
import Testing
import StrapDaemon
import StrapGATT
import StrapIngest
import StrapModel
import StrapSimulator

/// Heartbeat series measured against the true beat times (issue 32, item 4): one hour of the
/// simulated strap, and a replayed capture of a real RR recording. Beats must chain across
/// series (no overlap, no unflagged gap) and lie close to where they really were. Each test
/// prints a `beat timeline:` line with the figures (docs/decoding.md#rr-beat-timeline-beattimeline).
@Suite struct BeatTimelineAccuracyTests {
    static let device = Device(id: "5E:1A:00:00:48:00", address: "5E:1A:00:00:48:00", name: "Sim HR 0")
    static let t0: Millis = 1_800_000_000_000
    static let mono0 = 5_000.0

    /// What a client reading the series sees, against the truth.
    struct Report: CustomStringConvertible {
        var beats = 0
        var maxError = 0.0, p99Error = 0.0
        /// The same for beats after each run's settling packets.
        var maxSettledError = 0.0, p99SettledError = 0.0
        /// A series whose first beat lies before the previous series' last beat.
        var overlaps = 0
        /// A series not starting at the previous series' end without saying `gapBefore`.
        var unflaggedGaps = 0
        var flaggedGaps = 0
        /// Largest |start − (previous start + previous last offset)| between chained series, ms:
        /// in all, and once a run is past its settling packets.
        var maxSeam = 0.0, maxSettledSeam = 0.0

        init(series: [Sample], truth: [Double], settlingPackets: Int = BeatTimeline().settlingPackets) {
            var errors: [Double] = [], settled: [Double] = []
            var previous: Sample?
            var inRun = 0
            for s in series {
                inRun = s.metadata["gapBefore"] == "true" ? 1 : inRun + 1
                let start = Double(s.start)
                for offset in s.beats {
                    let placed = start + offset * 1000
                    if errors.count < truth.count {
                        let error = abs(placed - truth[errors.count])
                        errors.append(error)
                        if inRun > settlingPackets { settled.append(error) }
                    }
                    beats += 1
                }
                if let p = previous {
                    let previousLast = Double(p.start) + p.beats[p.beats.count - 1] * 1000
                    if start + s.beats[0] * 1000 < previousLast { overlaps += 1 }
                    if s.metadata["gapBefore"] == "true" {
                        flaggedGaps += 1
                    } else if s.start != p.end {
                        unflaggedGaps += 1
                    } else {
                        maxSeam = max(maxSeam, abs(start - previousLast))
                        if inRun > settlingPackets + 1 { maxSettledSeam = max(maxSettledSeam, abs(start - previousLast)) }
                    }
                }
                previous = s
            }
            (maxError, p99Error) = Self.maxAndP99(errors)
            (maxSettledError, p99SettledError) = Self.maxAndP99(settled)
        }

        static func maxAndP99(_ values: [Double]) -> (Double, Double) {
            let sorted = values.sorted()
            guard let last = sorted.last else { return (0, 0) }
            return (last, sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))])
        }

        var description: String {
            "\(beats) beats, max error \(Self.ms(maxError)) ms, p99 \(Self.ms(p99Error)) ms (settled: max "
                + "\(Self.ms(maxSettledError)) ms, p99 \(Self.ms(p99SettledError)) ms), overlaps \(overlaps), "
                + "gaps without gapBefore \(unflaggedGaps) (\(flaggedGaps) flagged), largest seam \(Self.ms(maxSeam)) ms (settled \(Self.ms(maxSettledSeam)) ms)"
        }

        static func ms(_ v: Double) -> String { String(format: "%.1f", v) }
    }

    static func receiveTime(_ seconds: Double) -> ReceiveTime {
        // Wall time truncated to the millisecond, as ReceiveTime.now() reads it.
        ReceiveTime(wall: t0 + Millis((seconds * 1000).rounded(.down)), monotonic: mono0 + seconds)
    }

    @Test func anHourOfTheSimulatedStrapTilesAndFollowsTheTrueBeats() throws {
        // Default dropouts (every ~10 min) and contact losses; the strap's clock 50 ppm fast.
        var strap = SimulatedHeartRateStrap(index: 0, seed: 3)
        strap.keepsBeatTimes = true
        strap.clockError = 50e-6
        var ingest = DeviceIngest(device: Self.device)
        var series: [Sample] = []
        var reconnects = 0
        for (time, event) in strap.advance(to: 3600) {
            let at = Self.receiveTime(time)
            switch event {
            case let .notification(characteristic, value):
                series += ingest.ingest(characteristic, value, wall: at.wall, monotonic: at.monotonic).samples
                    .filter { $0.type == .heartbeatSeries }
            case .connected:
                ingest.linkRestarted()
                reconnects += 1
            case .read, .disconnected: break
            }
        }
        let truth = strap.sentBeatTimes.map { Double(Self.t0) + $0 * 1000 }
        let report = Report(series: series, truth: truth)
        print("beat timeline (simulated 1 h, 50 ppm strap clock, \(reconnects - 1) reconnects): \(report)")
        #expect(report.beats == truth.count && report.beats > 4000)
        #expect(report.overlaps == 0 && report.unflaggedGaps == 0)
        #expect(report.flaggedGaps > 0, "the hour has dropouts and contact losses")
        // A seam is the step the chain moved (≤ 20 ms settling, ≤ 1 ms settled) plus the millisecond of start.
        #expect(report.maxSeam <= 21 && report.maxSettledSeam <= 2)
        // A run's first packets place its beats within the notification period (±0.5 s) at worst;
        // settled, the chain follows the true beats to tens of milliseconds.
        #expect(report.p99Error < 200 && report.maxError < 600)
        #expect(report.p99SettledError < 50 && report.maxSettledError < 100)
    }

    @Test func aReplayedCaptureOfARealRecordingTilesAndFollowsTheTrueBeats() throws {
        let (capture, truth) = try Self.realRecordingCapture()
        var ingest = DeviceIngest(device: Self.device)
        var series: [Sample] = []
        for (i, line) in capture.split(separator: "\n").enumerated() {
            switch try CaptureFormat.parse(line, lineNumber: i + 1) {
            case let .notification(_, characteristic, value, at):
                series += ingest.ingest(characteristic, value, wall: at.wall, monotonic: at.monotonic).samples
                    .filter { $0.type == .heartbeatSeries }
            case .linkUp: ingest.linkRestarted()
            case .read, .linkDown: break
            }
        }
        let report = Report(series: series, truth: truth.map { Double(Self.t0) + $0 * 1000 })
        print("beat timeline (replayed real RR, 80 ppm strap clock, 8-38 ms latency, one dropout): \(report)")
        #expect(report.beats == truth.count)
        #expect(report.overlaps == 0 && report.unflaggedGaps == 0 && report.flaggedGaps == 1)
        #expect(report.maxSeam <= 21 && report.maxSettledSeam <= 2)
        #expect(report.p99Error < 500 && report.maxError < 600)
        #expect(report.p99SettledError < 100 && report.maxSettledError < 150)
    }

    /// A capture (docs/capture-format.md) of a strap sending Tests/Fixtures/export/real_rri.txt:
    /// its clock 80 ppm fast, a notification each second with the beats since the last one,
    /// received 8-38 ms later (every 40th 250 ms later: retransmissions), the link down for
    /// 6 s at 300 s (the beats meanwhile lost). Returns the capture and the true time (seconds)
    /// of every beat sent.
    static func realRecordingCapture() throws -> (String, [Double]) {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/export/real_rri.txt").standardized
        let intervals = try String(contentsOf: fixture, encoding: .utf8).split(whereSeparator: \.isNewline)
            .compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        var random = SimulationRandom(seed: 32)
        var beats: [(rr: UInt16, time: Double)] = []
        var ticks = 0.0
        for ms in intervals {
            let rr = UInt16((ms * 1.024).rounded())
            ticks += Double(rr)
            beats.append((rr, 0.4 + ticks / 1024 / (1 + 80e-6)))
        }
        let address = device.address
        var lines = [CaptureFormat.line(.linkUp(address, name: device.name, receiveTime(0)))]
        var truth: [Double] = []
        var next = 0
        var send = 0.37
        var down = false
        var packet = 0
        while next < beats.count {
            if send >= 300 && send < 306 {
                if !down { lines.append(CaptureFormat.line(.linkDown(address, reason: "connection timeout (0x08)", receiveTime(send)))) }
                down = true
                while next < beats.count && beats[next].time <= send { next += 1 }
                send += 1
                continue
            }
            if down {
                lines.append(CaptureFormat.line(.linkUp(address, name: device.name, receiveTime(send))))
                down = false
            }
            var m = HeartRateMeasurement(heartRate: 70, contact: .detected)
            var rr: [UInt16] = []
            while next < beats.count && beats[next].time <= send {
                rr.append(beats[next].rr)
                truth.append(beats[next].time)
                next += 1
            }
            if !rr.isEmpty { m.rrIntervals = rr }
            packet += 1
            let latency = 0.008 + random.uniform(0, 0.030) + (packet % 40 == 0 ? 0.25 : 0)
            lines.append(CaptureFormat.line(.notification(address, .heartRateMeasurement, m.encoded(), receiveTime(send + latency))))
            send += 1
        }
        return (lines.joined(separator: "\n"), truth)
    }
}
