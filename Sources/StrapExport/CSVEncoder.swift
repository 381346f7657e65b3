import StrapModel

/// One row per second of the workout, paused and empty seconds included (docs/export.md
/// "CSV"). Columns are fixed whatever the workout measured; a cell is empty when that second
/// has no value. RFC 4180: comma separated, CRLF-free (LF line ends), no cell needs quoting.
struct CSVEncoder: FormatEncoder {
    /// The header, in column order: units are in the names.
    static let columns = [
        "time",                              // RFC 3339 UTC, milliseconds: the second's start
        "elapsed_s",                         // seconds since the workout's first second
        "lap",                               // 1-based lap number; empty outside every lap
        "paused",                            // 1 with the timer stopped, else 0
        "heart_rate_bpm",
        "rr_ms",                             // RR intervals ending in this second, space separated
        "cycling_speed_mps",
        "cycling_cadence_rpm",
        "cycling_distance_m",                // cumulative over running-timer seconds
        "running_speed_mps",
        "running_cadence_strides_per_min",
        "stride_length_m",
        "running_distance_m",                // cumulative over running-timer seconds
        "active_energy_kcal",                // cumulative over running-timer seconds
        "cycling_power_w",
        "power_balance_left_pct",            // the left pedal's share; empty when the meter knows no side
    ]

    static var header: String { columns.joined(separator: ",") + "\n" }

    mutating func begin(_ ctx: EncodeContext, into sink: inout ByteSink) {
        sink.string(Self.header)
    }

    mutating func boundary(_ b: ExportSchedule.Boundary, at time: Millis, _ ctx: EncodeContext,
                           _ stats: ExportStats, into sink: inout ByteSink) {}

    mutating func second(_ s: ExportSecond, _ ctx: EncodeContext, into sink: inout ByteSink) {
        sink.rfc3339(s.second * 1000, milliseconds: true)
        sink.u8(UInt8(ascii: ","))
        sink.integer(s.second - ctx.schedule.firstSecond)
        sink.u8(UInt8(ascii: ","))
        if let lap = s.lap { sink.integer(Int64(lap + 1)) }
        sink.text(s.paused ? ",1," : ",0,")
        value(s.value(.heartRate), 1, &sink)
        sink.u8(UInt8(ascii: ","))
        for (i, beat) in s.beats.enumerated() {
            if i > 0 { sink.u8(UInt8(ascii: " ")) }
            sink.decimal(beat.milliseconds, digits: 3)
        }
        sink.u8(UInt8(ascii: ","))
        value(s.value(.cyclingSpeed), 3, &sink)
        sink.u8(UInt8(ascii: ","))
        value(s.value(.cyclingCadence), 1, &sink)
        sink.u8(UInt8(ascii: ","))
        total(s, .cyclingDistance, 2, &sink)
        sink.u8(UInt8(ascii: ","))
        value(s.value(.runningSpeed), 3, &sink)
        sink.u8(UInt8(ascii: ","))
        value(s.value(.runningCadence), 1, &sink)
        sink.u8(UInt8(ascii: ","))
        value(s.value(.strideLength), 3, &sink)
        sink.u8(UInt8(ascii: ","))
        total(s, .runningDistance, 2, &sink)
        sink.u8(UInt8(ascii: ","))
        total(s, .activeEnergy, 3, &sink)
        sink.u8(UInt8(ascii: ","))
        value(s.value(.cyclingPower), 0, &sink)
        sink.u8(UInt8(ascii: ","))
        value(s.value(.powerBalanceLeft), 1, &sink)
        sink.u8(UInt8(ascii: "\n"))
    }

    mutating func finish(_ ctx: EncodeContext, _ stats: ExportStats, devices: [ExportDevice], into sink: inout ByteSink) {}

    private func value(_ v: Double?, _ digits: Int, _ sink: inout ByteSink) {
        if let v { sink.decimal(v, digits: digits) }
    }

    private func total(_ s: ExportSecond, _ a: Amount, _ digits: Int, _ sink: inout ByteSink) {
        if s.started[a.rawValue] { sink.decimal(s.totals[a.rawValue], digits: digits) }
    }
}
