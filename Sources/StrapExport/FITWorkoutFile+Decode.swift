import StrapModel

extension FITWorkoutFile {
    /// A plan from a FIT workout file. The first step is the warm-up and the last the
    /// cool-down when their intensity says so; steps a repeat step covers form a block with
    /// its count; other steps in a row form one block done once. What a plan cannot say (a
    /// heart-rate or power condition as a duration, % of maximum heart rate, nested repeats,
    /// speed targets) is refused naming the step, never approximated.
    public static func decode(_ bytes: [UInt8]) throws(Failure) -> WorkoutPlan {
        let file: FITReader
        do { file = try FITReader(bytes) } catch { throw .file(error) }
        guard let id = file.messages.first(where: { $0.global == Global.fileID }) else { throw .notAWorkout("no file_id message") }
        guard id.uint(0) == 5 else { throw .notAWorkout("file type \(id.uint(0).map(String.init) ?? "missing"), not 5 (workout)") }
        guard let workout = file.messages.first(where: { $0.global == Global.workout }) else { throw .notAWorkout("no workout message") }
        let raw = file.messages.filter { $0.global == Global.workoutStep }
        guard !raw.isEmpty else { throw .notAWorkout("no workout_step message") }
        guard raw.count <= WorkoutPlan.Limits.maximumExpandedSteps else { throw .invalid("\(raw.count) steps") }
        // message_index orders the steps when present (it is what repeat steps refer to).
        let ordered = raw.enumerated().sorted { ($0.element.uint(254).map(Int.init) ?? $0.offset) < ($1.element.uint(254).map(Int.init) ?? $1.offset) }
            .map(\.element)
        let steps = try ordered.enumerated().map { (i, m) throws(Failure) in try step(m, index: i) }

        var blocks: [PlanBlock] = []
        var warmup: PlanStep?, cooldown: PlanStep?
        var i = 0, end = steps.count
        if case .step(let s, let intensity)? = steps.first, intensity == Intensity.warmup { warmup = s; i = 1 }
        if end > i, case .step(let s, let intensity) = steps[end - 1], intensity == Intensity.cooldown { cooldown = s; end -= 1 }
        var pending: [IntervalStep] = []
        var pendingStart = i
        while i < end {
            switch steps[i] {
            case .step(let s, let intensity):
                pending.append(IntervalStep(intensity == Intensity.rest || intensity == Intensity.recovery ? .recovery : .work, s))
            case .repeat(let from, let count):
                // The repeated steps are the last ones gathered since `from`; steps gathered
                // before `from` are a block done once.
                guard from >= pendingStart, from < i, pending.count >= i - from else {
                    throw .unsupported(step: i, "repeats from step \(from), which is not a run of plain steps before it")
                }
                let once = pending.count - (i - from)
                if once > 0 { blocks.append(PlanBlock(iterations: 1, steps: Array(pending[..<once]))) }
                blocks.append(PlanBlock(iterations: count, steps: Array(pending[once...])))
                pending = []
                pendingStart = i + 1
            }
            i += 1
        }
        if !pending.isEmpty { blocks.append(PlanBlock(iterations: 1, steps: pending)) }

        let name = workout.string(8) ?? "FIT workout"
        let plan = WorkoutPlan(name: String(name.utf8.prefix(WorkoutPlan.Limits.maximumNameBytes)) ?? "FIT workout",
                               activity: activity(sport: workout.uint(4)), warmup: warmup, blocks: blocks, cooldown: cooldown)
        do throws(StrapError) { try plan.validate() } catch { throw .invalid("\(error)") }
        return plan
    }

    enum Decoded { case step(PlanStep, intensity: UInt8), `repeat`(from: Int, count: Int) }

    static func step(_ m: FITReader.Message, index: Int) throws(Failure) -> Decoded {
        // An enum field whose definition says a wider base type can hold any value: one that
        // no enum has is refused, never trapped on.
        func enumValue(_ field: UInt8, _ what: String, default d: UInt8) throws(Failure) -> UInt8 {
            guard let v = m.uint(field) else { return d }
            guard let e = UInt8(exactly: v) else { throw .unsupported(step: index, "\(what) \(v)") }
            return e
        }
        let duration = try enumValue(1, "duration type", default: Duration.open)
        if duration == Duration.repeatSteps {
            guard let from = m.uint(2), let count = m.uint(4), (1...UInt32(WorkoutPlan.Limits.maximumIterations)).contains(count) else {
                throw .unsupported(step: index, "a repeat step needs the step to repeat from and a count of 1 to \(WorkoutPlan.Limits.maximumIterations)")
            }
            return .repeat(from: Int(from), count: Int(count))
        }
        var p = PlanStep()
        switch duration {
        case Duration.open: p.goal = .open
        case Duration.time:
            guard let v = m.uint(2) else { throw .unsupported(step: index, "a time step without its time") }
            p.goal = .time(Double(v) / 1000)
        case Duration.distance:
            guard let v = m.uint(2) else { throw .unsupported(step: index, "a distance step without its distance") }
            p.goal = .distance(Double(v) / 100)
        default: throw .unsupported(step: index, "duration type \(duration) (only time, distance, open and repeats)")
        }
        let type = try enumValue(3, "target type", default: Target.open)
        let (low, high, zone) = (m.uint(5), m.uint(6), m.uint(4) ?? 0)
        func range(_ offset: UInt32, _ what: String) throws(Failure) -> ClosedRange<Double> {
            guard let low, let high, low <= high else { throw .unsupported(step: index, "a \(what) target without its low and high") }
            return Double(low - min(low, offset))...Double(high - min(high, offset))
        }
        switch type {
        case Target.open: break
        case Target.power:
            if zone != 0 { throw .unsupported(step: index, "a power zone target (zones are the device's own)") }
            guard let low, let high else { throw .unsupported(step: index, "a power target without its low and high") }
            if low > wattsOffset && high > wattsOffset { p.target = .power(watts: try range(wattsOffset, "power")) }
            else if low <= wattsOffset && high <= wattsOffset { p.target = .powerPercentFTP(try range(0, "power")) }
            else { throw .unsupported(step: index, "a power target mixing watts and % of FTP") }
        case Target.heartRate:
            if zone != 0 {
                guard (1...5).contains(zone) else { throw .unsupported(step: index, "heart-rate zone \(zone)") }
                p.target = .heartRateZone(Int(zone))
            } else {
                guard let low, let high, low > bpmOffset, high > bpmOffset else {
                    throw .unsupported(step: index, "a heart-rate target in % of maximum heart rate")
                }
                p.target = .heartRate(bpm: try range(bpmOffset, "heart-rate"))
            }
        case Target.cadence:
            if zone != 0 { throw .unsupported(step: index, "a cadence zone target") }
            p.target = .cadence(rpm: try range(0, "cadence"))
        default: throw .unsupported(step: index, "target type \(type) (only power, heart rate, cadence and open)")
        }
        if let name = m.string(0) { p.displayName = String(name.utf8.prefix(WorkoutPlan.Limits.maximumNameBytes)) }
        return .step(p, intensity: try enumValue(7, "intensity", default: Intensity.active))
    }

    static func activity(sport: UInt32?) -> ActivityType {
        switch sport {
        case 1: .running
        case 2: .cycling
        case 5: .swimming
        case 11: .walking
        case 15: .rowing
        case 17: .hiking
        default: .other
        }
    }
}
