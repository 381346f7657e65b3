import StrapModel

/// A structured workout as a FIT workout file (file type 5): file_id, one `workout` message and
/// its `workout_step`s, blocks as repeat steps (docs/export.md, "FIT workout files"). Both ways:
/// what `encode` writes, `decode` reads back to an equal plan, and files other tools write are
/// read when their steps fit what a plan can say.
public enum FITWorkoutFile {
    enum Global { static let fileID: UInt16 = 0, workout: UInt16 = 26, workoutStep: UInt16 = 27 }
    enum Duration { static let time: UInt8 = 0, distance: UInt8 = 1, open: UInt8 = 5, repeatSteps: UInt8 = 6 }
    enum Target { static let heartRate: UInt8 = 1, open: UInt8 = 2, cadence: UInt8 = 3, power: UInt8 = 4 }
    enum Intensity { static let active: UInt8 = 0, rest: UInt8 = 1, warmup: UInt8 = 2, cooldown: UInt8 = 3, recovery: UInt8 = 4 }
    /// `workout_hr` and `workout_power`: values above these offsets are bpm and watts; below, % of
    /// the maximum heart rate and % of FTP.
    static let bpmOffset: UInt32 = 100, wattsOffset: UInt32 = 1000

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case file(FITReader.Failure)
        case notAWorkout(String)
        case unsupported(step: Int, String)
        case invalid(String)

        public var description: String {
            switch self {
            case .file(let f): "\(f)"
            case .notAWorkout(let why): "not a FIT workout file: \(why)"
            case let .unsupported(step, why): "workout step \(step): \(why)"
            case .invalid(let why): "the workout is not a valid plan: \(why)"
            }
        }
    }

    // MARK: writing

    /// The file's bytes; `created` (ms since the Unix epoch) is file_id's time_created.
    public static func encode(_ plan: WorkoutPlan, created: Millis) -> [UInt8] {
        let steps = flatten(plan)
        let nameSize = max(1, steps.map { $0.name.utf8.count + 1 }.max() ?? 1)
        let fileID = FIT.Definition(local: 0, global: Global.fileID, [.init(0, .enumeration), .init(1, .uint16), .init(2, .uint16), .init(4, .uint32)])
        let workout = FIT.Definition(local: 1, global: Global.workout, [.init(4, .enumeration), .init(6, .uint16),
                                                                        .init(8, .string, count: plan.name.utf8.count + 1)])
        let step = FIT.Definition(local: 2, global: Global.workoutStep, [
            .init(254, .uint16), .init(0, .string, count: nameSize), .init(1, .enumeration), .init(2, .uint32),
            .init(3, .enumeration), .init(4, .uint32), .init(5, .uint32), .init(6, .uint32), .init(7, .enumeration),
        ])
        var sink = ByteSink(capacity: 64 + steps.count * (step.dataSize + 1))
        fileID.write(into: &sink); fileID.header(into: &sink)
        sink.u8(5); sink.u16(255); sink.u16(1); sink.u32(FIT.timestamp(created))
        workout.write(into: &sink); workout.header(into: &sink)
        sink.u8(ActivityMapping(activityType: plan.activity.rawValue).sport)
        sink.u16(UInt16(steps.count))
        string(plan.name, size: plan.name.utf8.count + 1, into: &sink)
        step.write(into: &sink)
        for (i, s) in steps.enumerated() {
            step.header(into: &sink)
            sink.u16(UInt16(i)); string(s.name, size: nameSize, into: &sink)
            sink.u8(s.durationType); sink.u32(s.durationValue); sink.u8(s.targetType); sink.u32(s.targetValue)
            sink.u32(s.low); sink.u32(s.high); sink.u8(s.intensity)
        }
        let data = sink.bytes
        var file = FIT.header(dataSize: UInt32(data.count)) + data
        let crc = FIT.CRC.checksum(file)
        file += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        return file
    }

    struct Step: Equatable {
        var name = ""
        var durationType = Duration.open, durationValue = FIT.invalid32
        var targetType = Target.open, targetValue: UInt32 = 0, low = FIT.invalid32, high = FIT.invalid32
        var intensity = Intensity.active
    }

    /// Warm-up, each block's steps followed by a repeat step when it repeats, cool-down.
    static func flatten(_ plan: WorkoutPlan) -> [Step] {
        var out: [Step] = []
        if let w = plan.warmup { out.append(step(w, Intensity.warmup)) }
        for block in plan.blocks {
            let first = out.count
            for s in block.steps { out.append(step(s.step, s.purpose == .work ? Intensity.active : Intensity.recovery)) }
            if block.iterations > 1 {
                out.append(Step(durationType: Duration.repeatSteps, durationValue: UInt32(first), targetType: Target.open,
                                targetValue: UInt32(block.iterations)))
            }
        }
        if let c = plan.cooldown { out.append(step(c, Intensity.cooldown)) }
        return out
    }

    static func step(_ p: PlanStep, _ intensity: UInt8) -> Step {
        var s = Step(name: p.displayName ?? "", intensity: intensity)
        switch p.goal {
        case .open: break
        case .time(let seconds): s.durationType = Duration.time; s.durationValue = FIT.scaled32(seconds, 1000)
        case .distance(let m): s.durationType = Duration.distance; s.durationValue = FIT.scaled32(m, 100)
        }
        func range(_ r: ClosedRange<Double>, _ offset: UInt32) -> (UInt32, UInt32) {
            (UInt32(r.lowerBound.rounded()) + offset, UInt32(r.upperBound.rounded()) + offset)
        }
        switch p.target {
        case nil: break
        case .power(let w)?: s.targetType = Target.power; (s.low, s.high) = range(w, wattsOffset)
        case .powerPercentFTP(let r)?: s.targetType = Target.power; (s.low, s.high) = range(r, 0)
        case .heartRate(let b)?: s.targetType = Target.heartRate; (s.low, s.high) = range(b, bpmOffset)
        case .heartRateZone(let z)?: s.targetType = Target.heartRate; s.targetValue = UInt32(z)
        case .cadence(let c)?: s.targetType = Target.cadence; (s.low, s.high) = range(c, 0)
        }
        return s
    }

    static func string(_ text: String, size: Int, into sink: inout ByteSink) {
        let b = Array(text.utf8.prefix(size - 1))
        for byte in b { sink.u8(byte) }
        for _ in b.count..<size { sink.u8(0) }
    }
}
