import Foundation
import Testing
import StrapModel
@testable import StrapExport

/// A workout made of hand-built samples, one strap and one foot pod, every second.
struct SyntheticWorkout {
    var workout: Workout
    var samples: [Sample]

    static let strap = Device(id: "AA:00:00:00:00:01", address: "AA:00:00:00:00:01", name: "Strap & <Co>",
                              manufacturer: "Polar Electro Oy", model: "H10", serial: "4242", firmware: "3.1")
    static let pod = Device(id: "AA:00:00:00:00:02", address: "AA:00:00:00:00:02", name: "Pod",
                            manufacturer: "Acme", model: "P1", serial: "X-9", firmware: "1.0")

    /// `seconds` seconds from `start`: heart rate `hr(i)` (nil = no sample that second) at
    /// 300 ms into second i, a beat series of `rr(i)` intervals ending there, running speed,
    /// cadence and a distance increment covering exactly second i (1 m per m/s).
    static func running(start: Millis, seconds: Int, hr: (Int) -> Double?, rr: (Int) -> [UInt16] = { _ in [] },
                        speed: ((Int) -> Double?)? = nil, energyEvery: Int = 0,
                        events: [Workout.Event] = [], laps: [Workout.Lap] = [], activity: String = "running") -> SyntheticWorkout {
        let secondZero = start.floorDiv(1000) * 1000
        var samples: [Sample] = []
        for i in 0..<seconds {
            let t = secondZero + Millis(i) * 1000 + 300
            if let v = hr(i) { samples.append(Sample(type: .heartRate, value: v, start: t, device: strap)) }
            let intervals = rr(i)
            if !intervals.isEmpty {
                var offsets: [Double] = []
                var sum = 0
                for r in intervals { sum += Int(r); offsets.append(Double(sum) / 1024) }
                let seriesStart = t - Millis((Double(sum) / 1024 * 1000).rounded())
                samples.append(Sample(type: .heartbeatSeries, value: Double(intervals.count), start: seriesStart, end: t,
                                      device: strap, beats: offsets))
            }
            if let speed, let v = speed(i) {
                samples.append(Sample(type: .runningSpeed, value: v, start: t, device: pod))
                samples.append(Sample(type: .runningCadence, value: 80 + v, start: t, device: pod))
                let second = secondZero + Millis(i) * 1000
                if v > 0 { samples.append(Sample(type: .runningDistance, value: v, start: second, end: second + 1000, device: pod)) }
            }
            if energyEvery > 0 && i % energyEvery == energyEvery - 1 {
                let second = secondZero + Millis(i) * 1000
                samples.append(Sample(type: .activeEnergy, value: 1.5, start: second, end: second + 1000, device: strap))
            }
        }
        samples.sort { $0.start < $1.start }
        var workout = Workout(activityType: activity, locationType: .outdoor, start: start,
                              end: secondZero + Millis(seconds) * 1000, deviceIDs: [strap.id, pod.id],
                              events: events, laps: laps)
        workout.uuid = UUID(uuidString: "5E1A0000-0000-4000-8000-00000000C0DE")!
        return SyntheticWorkout(workout: workout, samples: samples)
    }

    var source: SampleSource { SampleSource(samples) }

    func export(_ format: ExportFormat, options: ExportOptions = ExportOptions()) throws -> [UInt8] {
        try ExportStream.data(format: format, workout: workout, samples: source, options: options)
    }

    /// Writes the export to a fresh temporary file.
    func write(_ format: ExportFormat, in dir: URL, name: String = "workout") throws -> URL {
        let url = dir.appendingPathComponent("\(name).\(format.fileExtension)")
        try Data(try export(format)).write(to: url)
        return url
    }
}

/// The expectations the tests compute on their own, from the rules of docs/export.md
/// "Resampling", deliberately without the encoder's code: a sample belongs to the second its
/// start is in; a second with samples has their mean, else the last value for up to 5 seconds.
enum Expected {
    static func perSecond(_ values: [Int: [Double]], seconds: Int, hold: Int = 5) -> [Double?] {
        var out: [Double?] = []
        var last: (Int, Double)?
        for i in 0..<seconds {
            if let v = values[i], !v.isEmpty {
                let mean = v.reduce(0, +) / Double(v.count)
                out.append(mean)
                last = (i, mean)
            } else if let (at, value) = last, i - at <= hold {
                out.append(value)
            } else {
                out.append(nil)
            }
        }
        return out
    }

    /// FIT's `date_time` for Unix milliseconds, independently of `FIT.timestamp`.
    static func unixSeconds(_ ms: Millis) -> Int { Int((Double(ms) / 1000).rounded(.down)) }
}
