import Foundation

/// The live-latency figures of `strap-bench pipeline`: notification → subscriber p50/p99 at
/// 1 k and 10 k notifications/s with 1 and 100 subscribers, strapd's socket beside mosquitto
/// relaying the same bytes (docs/benchmarks.md).
enum LiveLatency {
    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        let workloads = LatencyWorkload.chosen(quick: quick)
        let ours = try OursLiveFrontEnd()
        defer { ours.close() }
        var peer: MosquittoPeer?
        defer { peer?.stop() }
        var peerNote: String?
        var template: (prefix: [UInt8], suffix: [UInt8])?
        var figures: [BenchFigure] = []
        for w in workloads {
            // Ours and the peer alternate, round by round, so a burst of load from the rest of
            // the machine does not land on one side only. Each figure is the median of the
            // rounds' percentiles (3 rounds; 1 for the million-deliveries-a-second
            // configuration and with --quick).
            let rounds = quick || w.rate * w.subscribers >= 1_000_000 ? 1 : 3
            var oursRounds: [LatencyResult] = []
            var peerRounds: [LatencyResult] = []
            for round in 1...rounds {
                guard let o = try ours.measure(w) else { throw BenchFailure("live latency \(w): no sample reached a subscriber") }
                report("strapd   ", w, round, o)
                oursRounds.append(o)
                // The peer publishes the bytes of a real live event line, its value swapped for the sequence.
                if template == nil, peerNote == nil {
                    template = ours.sampleLine.withLock { $0 }.flatMap(payloadTemplate)
                    if template == nil { peerNote = "no live sample line captured from strapd to use as the payload" }
                    do { if template != nil { peer = try MosquittoPeer() } } catch { peerNote = "\(error)" }
                    if let peerNote { print("  live latency: mosquitto peer not measured (\(peerNote)); peer values are null") }
                }
                if let peer, let template {
                    if let p = try peer.measure(w, payload: template) {
                        report("mosquitto", w, round, p)
                        peerRounds.append(p)
                    } else {
                        print("  live latency mosquitto \(w): nothing delivered")
                    }
                }
            }
            let hasPeer = peerRounds.count == rounds
            for (label, pick) in [("p50", { (r: LatencyResult) in r.p50 }), ("p99", { (r: LatencyResult) in r.p99 })] {
                figures.append(BenchFigure(section: section, name: "live latency \(label), \(w)", unit: "ms",
                                           ours: median(oursRounds.map(pick)), peer: hasPeer ? "mosquitto" : nil,
                                           peerValue: hasPeer ? median(peerRounds.map(pick)) : nil, higherIsBetter: false))
            }
        }
        return figures
    }

    static func report(_ who: String, _ w: LatencyWorkload, _ round: Int, _ r: LatencyResult) {
        print("  live latency \(who) \(w), round \(round): " + String(format: "p50 %.3f ms, p99 %.3f ms, ", r.p50, r.p99) + r.accounting)
        guard r.lowerBound else { return }
        let share = Double(r.expected - r.received) / Double(r.expected) * 100
        print(String(format: "    %.2f %% not delivered, ranked slower than every delivered message", share) +
              (share > 1 ? "; p99 is a lower bound" : "") + (share > 50 ? ", and p50" : ""))
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Splits `…"value":123…` into the bytes before and after the number.
    static func payloadTemplate(_ line: [UInt8]) -> (prefix: [UInt8], suffix: [UInt8])? {
        let key = valueKey
        guard let at = (0...(line.count - key.count)).first(where: { Array(line[$0..<$0 + key.count]) == key }) else { return nil }
        var end = at + key.count
        while end < line.count, (48...57).contains(line[end]) || line[end] == UInt8(ascii: ".") { end += 1 }
        return (Array(line[..<(at + key.count)]), Array(line[end...]))
    }
}
