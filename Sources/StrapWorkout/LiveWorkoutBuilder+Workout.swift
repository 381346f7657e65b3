import FoundationEssentials
import StrapModel

extension LiveWorkoutBuilder {
    /// The workout object of an ended (or stopped) session: HealthKit's `finishWorkout`.
    /// It spans start → stop; summary and info keys are listed in docs/workouts.md.
    public func workout(for session: WorkoutSession) -> Workout {
        let start = session.startDate ?? session.created
        let end = session.stopDate ?? session.endDate ?? session.lastEventTime
        let stats = statistics(session: session.id, state: session.state, at: end)
        var w = Workout(activityType: session.configuration.activityType.rawValue,
                        locationType: session.configuration.locationType,
                        start: start, end: end, deviceIDs: session.deviceIDs, events: session.events,
                        laps: stats.laps.map { lap in
                            // A lap begun after the workout's end (lap pressed while paused, then
                            // ended: the end is the pause) holds nothing: it is empty, at the end.
                            let lapStart = min(lap.start, end)
                            return Workout.Lap(start: lapStart, end: max(lapStart, min(lap.end ?? end, end)), summary: lap.figures.summary)
                        },
                        summary: stats.totals.summary, metadata: session.configuration.metadata)
        w.sessionID = session.id
        w.athlete = session.configuration.athlete
        var info: [String: String] = [:]
        info["activeEnergySource"] = stats.activeEnergySource
        info["activeEnergyReason"] = stats.activeEnergyReason
        if let z = stats.heartRateZones {
            info["heartRateZoneMethod"] = z.scheme.method.rawValue
            info["heartRateZoneScheme"] = z.isDefaultScheme ? "default" : "profile"
            for (i, b) in z.bpm.enumerated() { w.summary["heartRateZoneBound\(i)"] = b }
            if let max = z.maximumHeartRate {
                w.summary["maximumHeartRate"] = max.value
                info["maximumHeartRateSource"] = max.formula ?? "profile"
            }
        }
        info["heartRateZonesReason"] = stats.heartRateZonesReason
        if let ftp = powerZones?.functionalThresholdPower { w.summary["functionalThresholdPower"] = ftp }
        w.info = info
        return w
    }
}
