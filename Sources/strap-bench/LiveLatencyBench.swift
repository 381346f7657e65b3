import Foundation

/// The live-latency figures of `strap-bench pipeline`: notification → subscriber p50/p99 at
/// 1 k and 10 k notifications/s with 1 and 100 subscribers, strapd's socket beside mosquitto
/// relaying the same bytes (docs/benchmarks.md).
enum LiveLatency {
    static func figures(section: String, quick: Bool) throws -> [BenchFigure] {
        let workloads = LatencyWorkload.chosen(quick: quick)
        let ours = try OursLiveFrontEnd()
        var oursResults: [LatencyResult?] = []
        do {
            defer { ours.close() }
            for w in workloads {
                let r = try ours.measure(w)
                print("  live latency strapd    \(w): " + (r.map { String(format: "p50 %.3f ms, p99 %.3f ms, ", $0.p50, $0.p99) + $0.accounting } ?? "nothing delivered"))
                oursResults.append(r)
            }
        }
        // The peer publishes the bytes of a real live event line, its value swapped for the sequence.
        var peerResults: [LatencyResult?] = Array(repeating: nil, count: workloads.count)
        var peerNote: String?
        if let line = ours.sampleLine.withLock({ $0 }), let template = payloadTemplate(line) {
            do {
                let peer = try MosquittoPeer()
                defer { peer.stop() }
                for (i, w) in workloads.enumerated() {
                    let r = try peer.measure(w, payload: template)
                    print("  live latency mosquitto \(w): " + (r.map { String(format: "p50 %.3f ms, p99 %.3f ms, ", $0.p50, $0.p99) + $0.accounting } ?? "nothing delivered"))
                    peerResults[i] = r
                }
            } catch {
                peerNote = "\(error)"
            }
        } else {
            peerNote = "no live sample line captured from strapd to use as the payload"
        }
        if let peerNote { print("  live latency: mosquitto peer not measured (\(peerNote)); peer values are null") }

        var figures: [BenchFigure] = []
        for (i, w) in workloads.enumerated() {
            guard let o = oursResults[i] else {
                throw BenchFailure("live latency \(w): no sample reached a subscriber")
            }
            let p = peerResults[i]
            for (who, r) in [("strapd", o), ("mosquitto", p)] {
                guard let r, r.lowerBound else { continue }
                let share = Double(r.expected - r.received) / Double(r.expected) * 100
                print(String(format: "  live latency \(w), \(who): %.2f %% not delivered, ranked slower than every delivered message", share) +
                      (share > 1 ? "; its p99 is a lower bound" : "") + (share > 50 ? ", and its p50" : ""))
            }
            for (label, ours, peer) in [("p50", o.p50, p?.p50), ("p99", o.p99, p?.p99)] {
                figures.append(BenchFigure(section: section, name: "live latency \(label), \(w)", unit: "ms", ours: ours,
                                           peer: p == nil ? nil : "mosquitto", peerValue: peer, higherIsBetter: false))
            }
        }
        return figures
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
