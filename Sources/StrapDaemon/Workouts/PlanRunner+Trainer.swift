import FoundationEssentials
import StrapModel
import StrapTrainer
import StrapWorkout

/// A heart-rate-targeted step on a trainer: its controller and what it has been fed.
struct HeartRateDrive {
    var lap: Int
    var controller: HeartRateTargetController
    /// The session's heart-rate sample count at the last pass: a new reading is one more.
    var samples: Int
}

extension PlanRunner {
    /// The trainer target of the step lap `lap` rides (docs/trainer.md, "Riding a plan on a
    /// trainer"): ERG at the middle of a power range; a heart-rate range held by moving the
    /// power (`HeartRateTargetController`); nothing for a cadence target, an open step or
    /// past the plan's end, which leaves the trainer free.
    func trainerTarget(_ info: WorkoutSessionInfo, lap: Int, now: Millis) -> TrainerTarget? {
        let id = info.session.id
        guard let plan = info.session.configuration.plan, let step = PlanProgress(plan).step(atLap: lap),
              let target = step.step.target else {
            state.withLock { _ = $0.heartRateDrives.removeValue(forKey: id) }
            return nil
        }
        let ftp = info.session.profile?.functionalThresholdPower
        let resolved: PlanTarget.Resolved
        do throws(StrapError) {
            resolved = try target.resolved(ftp: ftp) { () throws(StrapError) -> HeartRateZones in
                guard let zones = info.statistics.heartRateZones else { throw .noData("no heart-rate zones for this session") }
                return zones
            }
        } catch {
            return nil
        }
        switch resolved {
        case .power(let r):
            state.withLock { _ = $0.heartRateDrives.removeValue(forKey: id) }
            return .power(watts: ((r.lowerBound + r.upperBound) / 2).rounded())
        case .cadence:
            state.withLock { _ = $0.heartRateDrives.removeValue(forKey: id) }
            return nil
        case .heartRate(let range):
            return heartRateTarget(id, range: range, lap: lap, ftp: ftp, figures: info.statistics.totals, now: now)
        }
    }

    /// Bounds of a heart-rate-targeted step: an endurance effort, so the power stays between
    /// 40 % and 100 % of FTP (60–250 W without one), and starts at 55 % of FTP (120 W).
    static func heartRateBounds(ftp: Double?) -> (floor: Double, ceiling: Double, start: Double) {
        guard let ftp, ftp > 0 else { return (60, 250, 120) }
        return ((0.4 * ftp).rounded(), ftp.rounded(), (0.55 * ftp).rounded())
    }

    private func heartRateTarget(_ id: UUID, range: ClosedRange<Double>, lap: Int, ftp: Double?,
                                 figures: WorkoutFigures, now: Millis) -> TrainerTarget? {
        state.withLock { s -> TrainerTarget? in
            var drive = s.heartRateDrives[id]
            if drive == nil || drive!.lap != lap {
                let b = Self.heartRateBounds(ftp: ftp)
                do throws(StrapError) {
                    let c = try HeartRateTargetController(.init(range: range, floor: b.floor, ceiling: b.ceiling), start: b.start)
                    drive = HeartRateDrive(lap: lap, controller: c, samples: figures.heartRateSamples)
                } catch {
                    s.heartRateDrives[id] = nil
                    return nil
                }
            }
            var d = drive!
            if figures.heartRateSamples > d.samples, let bpm = figures.heartRateMostRecent {
                _ = d.controller.reading(bpm, at: now)
            } else {
                _ = d.controller.tick(now)
            }
            d.samples = figures.heartRateSamples
            s.heartRateDrives[id] = d
            return .power(watts: d.controller.power)
        }
    }
}
