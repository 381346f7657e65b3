import Foundation

/// `strap-bench workouts` (issue 11): a live session's statistics per sample on one core, the
/// CPU 100 sessions at 1 Hz add to an idle daemon, and start-up with 10 open sessions over
/// 10 M stored samples; (issue 35) a saved 4 h ride's power figures. Method: docs/benchmarks.md.
enum WorkoutsBench: BenchSection {
    static let name = "workouts"
    static let summary = "live builder samples/s, CPU of 100 sessions at 1 Hz, start-up with 10 open sessions, 4 h power figures"

    /// `STRAP_BENCH_WORKOUTS=builder,service,daemon,startup,end,power` runs only those parts (to rerun
    /// one figure; use `--out` with another file, a section run replaces its figures).
    static func run(quick: Bool) throws -> [BenchFigure] {
        let parts = getenv("STRAP_BENCH_WORKOUTS").map { String(cString: $0).split(separator: ",").map(String.init) }
            ?? ["builder", "service", "daemon", "startup", "end", "power"]
        var figures: [BenchFigure] = []
        for part in parts {
            print("  workouts/\(part): load average \(loadAverage())")
            switch part {
            case "builder": figures += try WorkoutBuilderBench.figures(section: name, quick: quick)
            case "service": figures += try WorkoutServiceCost.figures(section: name, quick: quick)
            case "daemon": figures += try WorkoutDaemonLoad.figures(section: name, quick: quick)
            case "startup": figures += try WorkoutStartup.figures(section: name, quick: quick)
            case "end": figures += try WorkoutEndStall.figures(section: name, quick: quick)
            case "power": figures += try WorkoutPowerFigures.figures(section: name, quick: quick)
            default: throw BenchFailure("STRAP_BENCH_WORKOUTS: unknown part \(part) (builder, service, daemon, startup, end, power)")
            }
        }
        print("  workouts: load average \(loadAverage()) at the end")
        return figures
    }
}

/// The 1, 5 and 15 minute load averages: the machine is shared, and the docs record them.
func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// A temporary directory under /var/tmp (large stores) or /tmp.
func makeTemporaryDirectory(_ prefix: String, under parent: String = "/var/tmp") -> String {
    var template = Array("\(parent)/\(prefix)-XXXXXX".utf8CString)
    return String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!)
}
