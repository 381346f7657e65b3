import Dispatch
import FoundationEssentials
import StrapModel
import StrapTrainer
import StrapWorkout
import Synchronization

/// Moves sessions that ride a plan through its steps (docs/workouts.md, "Riding a plan"):
/// once a second, for each running session with a plan, the lap in progress is checked
/// against its step's goal and a lap is taken when it is met; the step's heart-rate or cadence
/// target is watched and a marker is written when the value leaves or re-enters the range.
/// Laps and markers go through `WorkoutService.command`, so they are journaled, mirrored to
/// followers and saved with the workout like any other. The timer runs only while a session
/// with a plan is open.
final class PlanRunner: Sendable {
    private let queue = DispatchQueue(label: "strapd.workouts.plans")
    struct State {
        var timer: DispatchSourceTimer?
        var progress: [UUID: PlanProgress] = [:]
        var monitors: [UUID: (lap: Int, target: String, monitor: TargetMonitor)] = [:]
        /// Heart-rate-targeted steps ridden on a trainer: the controller of each session's step.
        var heartRateDrives: [UUID: HeartRateDrive] = [:]
        var trainers: TrainerService?
        /// The extra pass at the next time goal's boundary, when it comes before the next tick.
        var boundaryPass: DispatchWorkItem?
        /// Counts changes, so a pass that saw no plan session stops the timer only if no
        /// session was created while it looked.
        var changes = 0
    }
    let state = Mutex(State())
    private let log: @Sendable (String) -> Void

    init(log: @escaping @Sendable (String) -> Void) { self.log = log }

    /// Where steps' trainer targets go (set once the device service exists).
    var trainers: TrainerService? {
        get { state.withLock { $0.trainers } }
        set { state.withLock { $0.trainers = newValue } }
    }

    /// A session changed: make sure the timer runs if one with a plan may be open. Cheap, and
    /// safe to call under the engine's lock (the work happens on `queue`).
    func sessionsChanged(_ service: WorkoutService) {
        state.withLock { s in
            s.changes &+= 1
            guard s.timer == nil else { return }
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now() + .milliseconds(200), repeating: .seconds(1), leeway: .milliseconds(50))
            t.setEventHandler { [weak self, weak service] in
                guard let self, let service else { return }
                self.evaluate(service)
            }
            s.timer = t
            t.resume()
        }
    }

    func stop() {
        state.withLock { s in s.timer?.cancel(); s.timer = nil; s.boundaryPass?.cancel(); s.boundaryPass = nil }
    }

    /// One pass now, on the runner's queue (tests move a clock and call this).
    func evaluateNow(_ service: WorkoutService) { queue.sync { evaluate(service) } }

    /// One pass over the open sessions.
    func evaluate(_ service: WorkoutService) {
        dispatchPrecondition(condition: .onQueue(queue))
        let seen = state.withLock { $0.changes }
        let riding = service.list().filter {
            $0.session.configuration.plan != nil && [.notStarted, .prepared, .running, .paused].contains($0.session.state)
        }
        if riding.isEmpty {
            state.withLock { s in
                guard s.changes == seen else { return }
                s.timer?.cancel(); s.timer = nil
                s.boundaryPass?.cancel(); s.boundaryPass = nil
                s.progress = [:]; s.monitors = [:]; s.heartRateDrives = [:]
            }
            trainers?.drive([:])
            return
        }
        let now = service.now()
        var wanted: [UUID: (devices: [String], target: TrainerTarget?)] = [:]
        var soonest: Double?
        for info in riding where info.session.state == .running || info.session.state == .paused {
            // A paused session keeps its step's target: the rider stops pedalling, and the
            // same step goes on at resume.
            let lap = info.session.state == .running ? evaluate(info, service, now: now) : info.statistics.laps.last?.index
            wanted[info.session.id] = (info.session.deviceIDs, lap.flatMap { trainerTarget(info, lap: $0, now: now) })
            if info.session.state == .running, let current = info.statistics.laps.last, current.index == lap,
               let remaining = Self.remaining(info, lap: current) {
                soonest = min(soonest ?? remaining, remaining)
            }
        }
        trainers?.drive(wanted)
        scheduleBoundary(in: soonest, service)
    }

    /// Active seconds left in the lap's step when its goal is a time: the pass that ends it is
    /// made then, not at the next tick of the second, so a step (and its trainer target)
    /// changes on time.
    static func remaining(_ info: WorkoutSessionInfo, lap: LapStatistics) -> Double? {
        guard let plan = info.session.configuration.plan, let step = PlanProgress(plan).step(atLap: lap.index),
              case .time(let goal) = step.step.goal else { return nil }
        return max(0, goal - lap.figures.elapsedTime)
    }

    /// One extra pass at the step boundary due before the next regular one.
    private func scheduleBoundary(in seconds: Double?, _ service: WorkoutService) {
        dispatchPrecondition(condition: .onQueue(queue))
        state.withLock { s in
            s.boundaryPass?.cancel()
            s.boundaryPass = nil
            guard let seconds, seconds < 1 else { return }
            let item = DispatchWorkItem { [weak self, weak service] in
                guard let self, let service else { return }
                self.evaluate(service)
            }
            s.boundaryPass = item
            // A millisecond past the boundary: elapsed time is counted in whole milliseconds.
            queue.asyncAfter(deadline: .now() + .microseconds(Int(seconds * 1e6) + 1000), execute: item)
        }
    }

    /// Returns the lap in progress after the pass (one more when it took a lap).
    private func evaluate(_ info: WorkoutSessionInfo, _ service: WorkoutService, now: Millis) -> Int? {
        guard let plan = info.session.configuration.plan, let lap = info.statistics.laps.last else { return nil }
        let id = info.session.id
        let progress = state.withLock { s in
            if let p = s.progress[id] { return p }
            let p = PlanProgress(plan)
            s.progress[id] = p
            return p
        }
        if progress.goalMet(atLap: lap.index, elapsed: lap.figures.elapsedTime, distance: lap.figures.distance) {
            do throws(StrapError) {
                _ = try service.command("lap", id, metadata: progress.lapMetadata(beginning: lap.index))
                return lap.index + 1
            } catch {
                log("workout session \(id): the lap ending plan step \(lap.index) failed: \(error)")
            }
            return lap.index
        }
        guard let step = progress.step(atLap: lap.index), let target = step.step.target else { return lap.index }
        watch(target, lap: lap, stats: info.statistics, ftp: info.session.profile?.functionalThresholdPower,
              session: id, service: service, now: now)
        return lap.index
    }

    /// The step's target against the lap's latest value (power: the latest reading of the
    /// session's power source; a %FTP target with the FTP of the profile the session started
    /// with, and none without one).
    private func watch(_ target: PlanTarget, lap: LapStatistics, stats: LiveStatistics, ftp: Double?, session id: UUID,
                       service: WorkoutService, now: Millis) {
        let zones = stats.heartRateZones
        let resolved: PlanTarget.Resolved
        do throws(StrapError) {
            resolved = try target.resolved(ftp: ftp) { () throws(StrapError) -> HeartRateZones in
                guard let zones else { throw .noData("no heart-rate zones for this session") }
                return zones
            }
        } catch { return }
        let (name, range, value): (String, ClosedRange<Double>, Double?) = switch resolved {
        case .heartRate(let r): ("heartRate", r, lap.figures.heartRateMostRecent)
        case .cadence(let r): ("cadence", r, lap.figures.cadenceMostRecent)
        case .power(let r): ("power", r, lap.figures.powerMostRecent)
        }
        guard let value else { return }
        let changed: TargetMonitor.State? = state.withLock { s in
            var entry = s.monitors[id]
            if entry == nil || entry!.lap != lap.index || entry!.target != name {
                entry = (lap.index, name, TargetMonitor(range: range))
            }
            let out = entry!.monitor.observe(value, at: now)
            s.monitors[id] = entry
            return out
        }
        guard let changed else { return }
        let metadata = [PlanMetadataKey.alert: changed.rawValue, PlanMetadataKey.target: name,
                        PlanMetadataKey.value: String(Int(value.rounded())), PlanMetadataKey.step: String(lap.index)]
        do throws(StrapError) { _ = try service.command("marker", id, metadata: metadata) } catch {
            log("workout session \(id): the target alert marker failed: \(error)")
        }
    }
}
