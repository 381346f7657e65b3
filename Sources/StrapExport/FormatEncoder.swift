import StrapModel

/// What an encoder sees of an export besides the second at hand (a class: passed to every
/// hook of every second without copying the workout).
final class EncodeContext: Sendable {
    let workout: Workout
    let schedule: ExportSchedule
    let mapping: ActivityMapping
    let options: ExportOptions
    /// The first pass's complete totals; nil during the first pass.
    let summary: ExportSummary?
    /// The byte count announced before the first chunk; 0 during the first pass.
    let byteCount: Int

    var isSizingPass: Bool { summary == nil }

    init(workout: Workout, schedule: ExportSchedule, mapping: ActivityMapping, options: ExportOptions,
         summary: ExportSummary?, byteCount: Int) {
        self.workout = workout
        self.schedule = schedule
        self.mapping = mapping
        self.options = options
        self.summary = summary
        self.byteCount = byteCount
    }
}

/// A file format, driven second by second by `ExportStream`. Each pass calls the same hooks in
/// the same order, so the first (sizing) pass and the second (emitting) pass write the same
/// number of bytes; a format whose bytes depend on totals not known yet writes, in the first
/// pass, the same-sized text from the live totals at a later hook (TCX's lap header).
protocol FormatEncoder {
    mutating func begin(_ ctx: EncodeContext, into sink: inout ByteSink)
    /// A timer event, marker, lap start or lap end, in time order between the seconds.
    mutating func boundary(_ b: ExportSchedule.Boundary, at time: Millis, _ ctx: EncodeContext,
                           _ stats: ExportStats, into sink: inout ByteSink)
    /// One second; `stats` already include it.
    mutating func second(_ s: ExportSecond, _ ctx: EncodeContext, into sink: inout ByteSink)
    mutating func finish(_ ctx: EncodeContext, _ stats: ExportStats, devices: [ExportDevice], into sink: inout ByteSink)
}
