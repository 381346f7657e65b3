import StrapModel

/// The saved workout's power figures (docs/workouts.md "Power figures"), made by the same
/// per-second resampling and the same `PowerAnalysis` as the exports' lap and session power,
/// so `workout show`, the FIT session and the TCX laps say the same numbers.
public enum WorkoutPower {
    /// The session's figures and each lap's (nil for a lap without a power reading), or nil
    /// when no power was measured. `samples`: the workout's samples in ascending start order
    /// (only `cyclingPower` ones matter); `holdSeconds` as the export's.
    public static func figures(_ workout: Workout, samples: some Sequence<Sample>,
                               holdSeconds: Int = ExportOptions().holdSeconds) throws(ExportError)
        -> (session: PowerSummary, laps: [PowerSummary?])? {
        let schedule = try ExportSchedule(workout)
        var timeline = ExportTimeline(schedule: schedule, workout: workout, samples: AnyIterator(samples.makeIterator()),
                                      holdSeconds: holdSeconds)
        var stats = ExportStats(lapCount: schedule.laps.count)
        while try timeline.advance() { stats.add(timeline.current, .any) }
        let summary = stats.summary(schedule, devices: timeline.devices)
        guard let session = summary.session.power else { return nil }
        return (session, summary.laps.map(\.power))
    }

    /// Adds the figures to the workout's summary and its laps' (keys: `PowerSummary.summaryFigures`);
    /// the laps only when the export's tidied laps are the workout's own.
    public static func add(_ figures: (session: PowerSummary, laps: [PowerSummary?]), to workout: inout Workout) {
        workout.summary.merge(figures.session.summaryFigures) { _, new in new }
        guard figures.laps.count == workout.laps.count else { return }
        for (i, lap) in figures.laps.enumerated() {
            if let lap { workout.laps[i].summary.merge(lap.summaryFigures) { _, new in new } }
        }
    }
}
