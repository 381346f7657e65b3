import StrapModel

/// Where a session riding a plan is, read from its laps (docs/workouts.md, "Riding a plan"):
/// step *i* of the unrolled plan is lap *i + 1*. Nothing else is kept, so a session recovered
/// from its journal is at the right step by construction, and a lap the athlete takes ends
/// the step early (WorkoutKit's "skip to the next step"). Laps after the last step are free.
public struct PlanProgress: Sendable {
    public let steps: [ExpandedStep]

    public init(_ plan: WorkoutPlan) { steps = plan.expandedSteps }

    /// The step the lap in progress rides; nil once the plan is done.
    public func step(atLap lap: Int) -> ExpandedStep? {
        let i = lap - 1
        return steps.indices.contains(i) ? steps[i] : nil
    }

    /// Whether the lap in progress has met its step's goal: time in active seconds, distance
    /// in metres; an open goal ends only with a lap the athlete takes.
    public func goalMet(atLap lap: Int, elapsed: Double, distance: Double?) -> Bool {
        guard let step = step(atLap: lap) else { return false }
        switch step.step.goal {
        case .open: return false
        case .time(let s): return elapsed >= s
        case .distance(let m): return (distance ?? 0) >= m
        }
    }

    /// The metadata of the lap that begins step `index` (0-based) of the plan; the lap
    /// strapd takes at a goal carries it, so the saved workout says which laps were which step.
    public func lapMetadata(beginning index: Int) -> [String: String] {
        guard steps.indices.contains(index) else { return [PlanMetadataKey.step: "done"] }
        var m = [PlanMetadataKey.step: String(index + 1), PlanMetadataKey.purpose: steps[index].purpose.rawValue]
        if let name = steps[index].step.displayName { m[PlanMetadataKey.name] = name }
        return m
    }
}

/// The metadata keys a plan's laps and alerts carry (one place, as constants).
public enum PlanMetadataKey {
    public static let step = "planStep"
    public static let purpose = "planPurpose"
    public static let name = "planStepName"
    public static let alert = "planAlert"
    public static let target = "planTarget"
    public static let value = "planValue"
}

/// Whether a measurement is off a step's target, debounced: an alert is raised after the
/// value has stayed out of range for `raiseAfter`, and cleared after it has stayed back in
/// for `clearAfter`, so a single noisy reading neither raises nor clears one.
public struct TargetMonitor: Sendable {
    public enum State: String, Sendable, Equatable { case inRange, below, above }

    public let range: ClosedRange<Double>
    public let raiseAfter: Int64
    public let clearAfter: Int64
    public private(set) var state: State = .inRange
    private var candidate: (state: State, since: Int64)?

    public init(range: ClosedRange<Double>, raiseAfter: Int64 = 5_000, clearAfter: Int64 = 3_000) {
        self.range = range; self.raiseAfter = raiseAfter; self.clearAfter = clearAfter
    }

    /// A reading at `now` (ms); returns the new state when it changed.
    public mutating func observe(_ value: Double, at now: Int64) -> State? {
        guard value.isFinite else { return nil }
        let seen: State = value < range.lowerBound ? .below : value > range.upperBound ? .above : .inRange
        guard seen != state else { candidate = nil; return nil }
        if candidate?.state != seen { candidate = (seen, now) }
        let wait = seen == .inRange ? clearAfter : raiseAfter
        guard let c = candidate, now - c.since >= wait else { return nil }
        state = seen
        candidate = nil
        return seen
    }
}
