// strap-bench: `strap-bench [--quick] [--out FILE] SECTION...|all` (docs/product.md §8).
import Foundation

let sections: [any BenchSection.Type] = [
    // one line per section; keep this list sorted by name
    ClientBench.self,
    DecodeBench.self,
    ExportBench.self,
    FairnessBench.self,
    MQTTBench.self,
    PipelineBench.self,
    SoakBench.self,
    StoreBench.self,
    TrainerBench.self,
    WebBench.self,
    WorkoutsBench.self,
]

var arguments = Array(CommandLine.arguments.dropFirst())
var quick = false
var outPath = "bench-results.json"
var wanted: [String] = []
while !arguments.isEmpty {
    let arg = arguments.removeFirst()
    switch arg {
    case "--quick": quick = true
    case "--out": outPath = arguments.isEmpty ? outPath : arguments.removeFirst()
    case "-h", "--help":
        print("usage: strap-bench [--quick] [--out FILE] SECTION...|all")
        for s in sections { print("  \(s.name)\t\(s.summary)") }
        exit(0)
    default: wanted.append(arg)
    }
}
if wanted.isEmpty || wanted == ["all"] { wanted = sections.map { $0.name } }
let chosen = wanted.compactMap { name in sections.first { $0.name == name } }
if chosen.count != wanted.count {
    let unknown = wanted.filter { name in !sections.contains { $0.name == name } }
    FileHandle.standardError.write(Data("strap-bench: unknown section \(unknown.joined(separator: ", "))\n".utf8))
    exit(2)
}
var figures: [BenchFigure] = []
do {
    for section in chosen { figures += try section.run(quick: quick) }
    printTable(figures)
    try BenchReport.merge(figures, sections: Set(chosen.map { $0.name }), into: outPath)
    print("wrote \(outPath)")
} catch {
    FileHandle.standardError.write(Data("strap-bench: \(error)\n".utf8))
    exit(1)
}
