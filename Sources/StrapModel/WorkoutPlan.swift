import FoundationEssentials

/// A structured workout, shaped as WorkoutKit's `CustomWorkout`: an optional warm-up, blocks of
/// steps repeated `iterations` times, an optional cool-down (docs/workouts.md, "Structured
/// workouts"). Plain data: a session runs it through `PlanProgress`.
public struct WorkoutPlan: Sendable, Hashable, Codable {
    public var name: String
    public var activity: ActivityType
    public var warmup: PlanStep?
    public var blocks: [PlanBlock]
    public var cooldown: PlanStep?

    public init(name: String, activity: ActivityType, warmup: PlanStep? = nil, blocks: [PlanBlock], cooldown: PlanStep? = nil) {
        self.name = name; self.activity = activity; self.warmup = warmup; self.blocks = blocks; self.cooldown = cooldown
    }

    /// Bounds that keep a plan something a person wrote: its expansion is journaled per step.
    public enum Limits {
        public static let maximumNameBytes = 100
        public static let maximumBlocks = 32
        public static let maximumStepsPerBlock = 32
        public static let maximumIterations = 100
        public static let maximumExpandedSteps = 1000
        public static let maximumStepSeconds = 86_400.0
        public static let maximumStepMeters = 1_000_000.0
    }

    public func validate() throws(StrapError) {
        let n = name.utf8.count
        guard n > 0, n <= Limits.maximumNameBytes else {
            throw .invalidOption("plan name must be 1 to \(Limits.maximumNameBytes) bytes, got \(n)")
        }
        guard warmup != nil || !blocks.isEmpty || cooldown != nil else { throw .invalidOption("plan \"\(name)\" has no step") }
        guard blocks.count <= Limits.maximumBlocks else { throw .invalidOption("at most \(Limits.maximumBlocks) blocks, got \(blocks.count)") }
        try warmup?.validate(at: "warmup")
        for (b, block) in blocks.enumerated() {
            let at = "blocks[\(b)]"
            guard (1...Limits.maximumIterations).contains(block.iterations) else {
                throw .invalidOption("\(at).iterations must be 1 to \(Limits.maximumIterations), got \(block.iterations)")
            }
            guard (1...Limits.maximumStepsPerBlock).contains(block.steps.count) else {
                throw .invalidOption("\(at) must have 1 to \(Limits.maximumStepsPerBlock) steps, got \(block.steps.count)")
            }
            for (s, step) in block.steps.enumerated() { try step.step.validate(at: "\(at).steps[\(s)]") }
        }
        try cooldown?.validate(at: "cooldown")
        let count = expandedStepCount
        guard count <= Limits.maximumExpandedSteps else {
            throw .invalidOption("the plan expands to \(count) steps; at most \(Limits.maximumExpandedSteps)")
        }
    }

    var expandedStepCount: Int {
        (warmup == nil ? 0 : 1) + (cooldown == nil ? 0 : 1) + blocks.reduce(0) { $0 + $1.iterations * $1.steps.count }
    }

    /// The steps in the order a session takes them, blocks unrolled: each one lap.
    public var expandedSteps: [ExpandedStep] {
        var out: [ExpandedStep] = []
        out.reserveCapacity(expandedStepCount)
        if let warmup { out.append(ExpandedStep(purpose: .warmup, step: warmup, block: nil, iteration: nil)) }
        for (b, block) in blocks.enumerated() {
            for i in 0..<block.iterations {
                for s in block.steps {
                    out.append(ExpandedStep(purpose: s.purpose, step: s.step, block: b, iteration: i + 1))
                }
            }
        }
        if let cooldown { out.append(ExpandedStep(purpose: .cooldown, step: cooldown, block: nil, iteration: nil)) }
        return out
    }

    /// The sum of the time goals; nil when a step ends on distance or is open.
    public var plannedDuration: Double? {
        var total = 0.0
        for e in expandedSteps {
            guard case .time(let s) = e.step.goal else { return nil }
            total += s
        }
        return total
    }
}

public struct PlanBlock: Sendable, Hashable, Codable {
    public var iterations: Int
    public var steps: [IntervalStep]
    public init(iterations: Int, steps: [IntervalStep]) { self.iterations = iterations; self.steps = steps }
}

/// WorkoutKit's `IntervalStep`: a step with its purpose in the block.
public struct IntervalStep: Sendable, Hashable, Codable {
    public enum Purpose: String, Sendable, Hashable, Codable { case work, recovery }
    public var purpose: Purpose
    public var step: PlanStep

    public init(_ purpose: Purpose, _ step: PlanStep) { self.purpose = purpose; self.step = step }

    // Flat in JSON: {"purpose": "work", "goal": …, "target": …}.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        purpose = try c.decode(Purpose.self, forKey: .purpose)
        step = try PlanStep(from: decoder)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(purpose, forKey: .purpose)
        try step.encode(to: encoder)
    }

    enum CodingKeys: String, CodingKey { case purpose }
}

public struct PlanStep: Sendable, Hashable, Codable {
    public var goal: PlanGoal
    public var target: PlanTarget?
    public var displayName: String?

    public init(goal: PlanGoal = .open, target: PlanTarget? = nil, displayName: String? = nil) {
        self.goal = goal; self.target = target; self.displayName = displayName
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        goal = try c.decodeIfPresent(PlanGoal.self, forKey: .goal) ?? .open
        target = try c.decodeIfPresent(PlanTarget.self, forKey: .target)
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
    }

    enum CodingKeys: String, CodingKey { case goal, target, displayName }

    func validate(at path: String) throws(StrapError) {
        switch goal {
        case .open: break
        case .time(let s):
            guard s.isFinite, s >= 1, s <= WorkoutPlan.Limits.maximumStepSeconds else {
                throw .invalidOption("\(path).goal.time must be 1 to \(Int(WorkoutPlan.Limits.maximumStepSeconds)) s, got \(s)")
            }
        case .distance(let m):
            guard m.isFinite, m >= 1, m <= WorkoutPlan.Limits.maximumStepMeters else {
                throw .invalidOption("\(path).goal.distance must be 1 to \(Int(WorkoutPlan.Limits.maximumStepMeters)) m, got \(m)")
            }
        }
        if let displayName, displayName.utf8.count > WorkoutPlan.Limits.maximumNameBytes {
            throw .invalidOption("\(path).displayName is over \(WorkoutPlan.Limits.maximumNameBytes) bytes")
        }
        try target?.validate(at: path + ".target")
    }
}

/// When a step ends: after a time (s), a distance (m), or when the athlete says so (a lap).
public enum PlanGoal: Sendable, Hashable, Codable {
    case open
    case time(Double)
    case distance(Double)

    enum CodingKeys: String, CodingKey { case open, time, distance }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let keys = c.allKeys
        guard keys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "a goal has exactly one of open, time (s), distance (m)"))
        }
        switch keys[0] {
        case .open: self = .open
        case .time: self = .time(try c.decode(Double.self, forKey: .time))
        case .distance: self = .distance(try c.decode(Double.self, forKey: .distance))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .open: try c.encode(true, forKey: .open)
        case .time(let s): try c.encode(s, forKey: .time)
        case .distance(let m): try c.encode(m, forKey: .distance)
        }
    }
}

/// One step of the unrolled plan.
public struct ExpandedStep: Sendable, Hashable {
    public enum Purpose: String, Sendable, Hashable { case warmup, work, recovery, cooldown }
    public var purpose: Purpose
    public var step: PlanStep
    /// The block (0-based) and its iteration (1-based); nil for warm-up and cool-down.
    public var block: Int?
    public var iteration: Int?

    init(purpose: IntervalStep.Purpose, step: PlanStep, block: Int?, iteration: Int?) {
        let p: Purpose = purpose == IntervalStep.Purpose.work ? .work : .recovery
        self.init(purpose: p, step: step, block: block, iteration: iteration)
    }

    init(purpose: Purpose, step: PlanStep, block: Int?, iteration: Int?) {
        self.purpose = purpose; self.step = step; self.block = block; self.iteration = iteration
    }
}
