import Foundation
import Testing
import StrapModel
@testable import StrapExport

/// The CSV layout (docs/export.md "CSV") and the text primitives behind TCX and CSV.
@Suite struct CSVExportTests {
    @Test func headerIsTheDocumentedOne() throws {
        #expect(CSVEncoder.header == "time,elapsed_s,lap,paused,heart_rate_bpm,rr_ms,cycling_speed_mps,cycling_cadence_rpm,"
                + "cycling_distance_m,running_speed_mps,running_cadence_strides_per_min,stride_length_m,running_distance_m,"
                + "active_energy_kcal,cycling_power_w,power_balance_left_pct\n")
        let w = ThirdPartyReaderTests.full.synthetic
        let text = String(decoding: try w.export(.csv), as: UTF8.self)
        #expect(text.hasPrefix(CSVEncoder.header))
    }

    @Test func oneRowPerSecondWithLapPauseAndEmptyCells() throws {
        let scenario = ThirdPartyReaderTests.full
        let rows = String(decoding: try scenario.synthetic.export(.csv), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).dropFirst().dropLast()
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count == 600)
        #expect(rows.allSatisfy { $0.count == CSVEncoder.columns.count })
        // 2024-01-01T10:00:00Z, beat intervals 600 and 610 (1/1024 s) in second 0's series
        #expect(rows[0] == ["2024-01-01T10:00:00.000Z", "0", "1", "0", "110", "595.703", "", "", "", "2.5", "82.5", "", "2.5", "", "", ""])
        #expect(rows[1][5] == "590.82")                                  // 605/1024 s
        #expect(rows[9][13] == "1.5")                                   // energy, cumulative
        #expect(rows[100][4] == "129" && rows[104][4] == "129" && rows[105][4] == "")   // hole: held 5 s, then empty
        #expect(rows[199][3] == "0" && rows[200][3] == "1" && rows[259][3] == "1" && rows[260][3] == "0")
        #expect(rows[299][2] == "1" && rows[300][2] == "2")
        // Distance stops growing while paused, and carries on after.
        #expect(rows[200][12] == rows[259][12])
        #expect(Double(rows[260][12])! - Double(rows[259][12])! == scenario.moved(260))
    }

    @Test func decimalsAndTimesAreSpelledExactly() {
        var sink = ByteSink(capacity: 64)
        for (v, d) in [(0.0, 2), (3.0, 2), (2.5, 3), (0.125, 3), (-1.5, 1), (1234.5678, 2), (0.004, 2), (0.05, 2), (7.0e-5, 3)] {
            sink.decimal(v, digits: d)
            sink.text(" ")
        }
        #expect(String(decoding: sink.bytes, as: UTF8.self) == "0 3 2.5 0.125 -1.5 1234.57 0 0.05 0 ")
        for ms: Millis in [0, 631_065_600_000, 951_782_400_123, 1_711_843_199_999, 4_102_444_800_000, 1_709_251_199_000] {
            var t = ByteSink(capacity: 32)
            t.rfc3339(ms, milliseconds: true)
            #expect(String(decoding: t.bytes, as: UTF8.self) == RFC3339.string(ms))
        }
        var t = ByteSink(capacity: 32)
        t.rfc3339(951_868_800_500, milliseconds: false)                 // 2000-03-01 (after a leap day)
        #expect(String(decoding: t.bytes, as: UTF8.self) == "2000-03-01T00:00:00Z")
    }

    @Test func xmlTextIsEscapedAndControlCharactersDropped() {
        var sink = ByteSink(capacity: 64)
        sink.xmlEscaped("a<b>&\"c\"'d'\u{0}\u{7}\te\nf")
        #expect(String(decoding: sink.bytes, as: UTF8.self) == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;\te\nf")
    }
}
