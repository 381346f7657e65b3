import StrapWire

/// How a sample's value reads for people, one function for `live`, `query` and `anchored` so
/// the three never disagree. `--json` prints the daemon's lines untouched, full precision.
enum SampleText {
    /// `72 count/min`, `84.98 rpm`; a beat series as its RR intervals, `rr=830,797ms`.
    static func value(_ s: JSONObject) -> String {
        if s.string("type") == "heartbeatSeries" || s["beats"] != nil {
            let rr = rrMilliseconds(s)
            return "rr=" + (rr.isEmpty ? "-" : rr.map(String.init).joined(separator: ",") + "ms")
        }
        let shown = s.number("value").map(number) ?? "?"
        let unit = s.string("unit") ?? ""
        return unit.isEmpty ? shown : shown + " " + unit
    }

    /// A beat series' RR intervals in whole milliseconds. The raw intervals (1/1024 s, in
    /// `metadata.rr` when the timeline moved a beat) are exact; otherwise they are the
    /// differences of consecutive beat offsets, the first one from 0 (docs/protocol.md).
    static func rrMilliseconds(_ s: JSONObject) -> [Int] {
        if let raw = s.object("metadata")?.string("rr") {
            return raw.split(separator: ",").compactMap { Int($0) }.map { ($0 * 1000 + 512) / 1024 }
        }
        guard case .array(let beats)? = s["beats"] else { return [] }
        let t = beats.compactMap { v -> Double? in
            switch v { case .double(let d): d; case .int(let i): Double(i); default: nil }
        }
        return zip(t, [0] + t).map { Int((($0 - $1) * 1000).rounded()) }
    }

    /// At most two decimals, none when the rounded value is whole: sensor values carry
    /// float noise (`84.97925311203319` rpm) that means nothing to a reader.
    static func number(_ d: Double) -> String {
        let r = (d * 100).rounded() / 100
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return String(r)
    }
}
