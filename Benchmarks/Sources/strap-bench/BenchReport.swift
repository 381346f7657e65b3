import Foundation

/// One measured figure, in the shape docs/product.md §8 fixes for `bench-results.json`.
struct BenchFigure: Codable, Sendable {
    var section: String
    var name: String
    var unit: String
    var ours: Double
    var peer: String?
    var peerValue: Double?
    var ratio: Double?
    var higherIsBetter: Bool

    init(section: String, name: String, unit: String, ours: Double,
         peer: String? = nil, peerValue: Double? = nil, higherIsBetter: Bool) {
        self.section = section
        self.name = name
        self.unit = unit
        self.ours = ours
        self.peer = peer
        self.peerValue = peerValue
        self.higherIsBetter = higherIsBetter
        // The ratio always reads "how many times better we are", whichever way is better.
        if let peerValue, peerValue > 0, ours > 0 {
            ratio = higherIsBetter ? ours / peerValue : peerValue / ours
        }
    }
}

/// A benchmark section (`strap-bench decode`, `strap-bench store`, …).
protocol BenchSection {
    static var name: String { get }
    static var summary: String { get }
    /// Runs the section and returns its figures; `quick` shrinks workloads for smoke runs.
    static func run(quick: Bool) throws -> [BenchFigure]
}

/// `bench-results.json`: each section run merges its figures, replacing older ones of the
/// same section, so sections can be run alone.
struct BenchReport: Codable {
    var machine: String
    var date: String
    var results: [BenchFigure]

    static func merge(_ figures: [BenchFigure], sections: Set<String>, into path: String) throws {
        var report = BenchReport(machine: machineDescription(), date: "", results: [])
        if let data = FileManager.default.contents(atPath: path),
           let old = try? JSONDecoder().decode(BenchReport.self, from: data) {
            report.results = old.results.filter { !sections.contains($0.section) }
        }
        report.results += figures
        report.date = ISO8601DateFormatter().string(from: Date())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }

    static func machineDescription() -> String {
        var model = "unknown cpu"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            model = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, Linux"
    }
}

/// Prints figures as an aligned table, peer and ratio beside ours.
func printTable(_ figures: [BenchFigure]) {
    func fmt(_ v: Double) -> String {
        if v >= 1e6 { return String(format: "%.2f M", v / 1e6) }
        if v >= 1e4 { return String(format: "%.1f k", v / 1e3) }
        if v >= 100 { return String(format: "%.0f", v) }
        return String(format: "%.3g", v)
    }
    let header = ["section", "figure", "unit", "strapd", "peer", "peer value", "ratio"]
    var rows = [header]
    for f in figures {
        rows.append([f.section, f.name, f.unit, fmt(f.ours), f.peer ?? "—",
                     f.peerValue.map(fmt) ?? "—", f.ratio.map { String(format: "%.2f×", $0) } ?? "—"])
    }
    var widths = [Int](repeating: 0, count: header.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    for (n, row) in rows.enumerated() {
        let line = row.enumerated().map { i, cell in
            i >= 3 ? String(repeating: " ", count: widths[i] - cell.count) + cell
                   : cell + String(repeating: " ", count: widths[i] - cell.count)
        }.joined(separator: "  ")
        print(line)
        if n == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
    }
}
