import StrapExport
import StrapModel

/// The values of strapctl's enum-valued options. They are checked before anything is sent:
/// the daemon's own refusal names its wire parameter (`"predicate": Cannot initialize
/// QuantityType ...`), not the option the user typed, and exits 1 where a typo is a usage
/// error (exit 2). Taken from the model where it has the list, so a new type is accepted here
/// without touching strapctl. `workout start --activity/--location` are left to strapd,
/// whose refusal already lists the names (strapctl(1)).
enum Choices {
    static let sampleTypes = QuantityType.allCases.map(\.rawValue)
    /// `samples.anchored` also returns workouts.
    static let objectTypes = sampleTypes + ["workout"]
    /// `StatisticsOptions` is an option set without names; these are the wire's
    /// (docs/protocol.md statistics.query).
    static let statisticsOptions = ["average", "minimum", "maximum", "mostRecent", "sum"]
    static let sortKeys = ["start", "end"]
    static let exportFormats = ExportFormat.allCases.map(\.rawValue)
    static let chartModes = ChartMode.allCases.map(\.rawValue)

    /// `value` if it is one of `accepted`.
    static func check(_ value: String, option: String, noun: String, among accepted: [String]) throws(UsageError) -> String {
        guard accepted.contains(value) else {
            throw UsageError(message: "--\(option): unknown \(noun) \"\(value)\"; one of: \(accepted.joined(separator: ", "))")
        }
        return value
    }
}

extension Arguments {
    /// The last `--name` value, checked against `accepted`.
    func choice(_ name: String, _ noun: String, among accepted: [String]) throws(UsageError) -> String? {
        guard let v = value(name) else { return nil }
        return try Choices.check(v, option: name, noun: noun, among: accepted)
    }

    /// Every `--name` value (a repeated option), each checked against `accepted`.
    func choices(_ name: String, _ noun: String, among accepted: [String]) throws(UsageError) -> [String] {
        var out: [String] = []
        for v in all(name) { out.append(try Choices.check(v, option: name, noun: noun, among: accepted)) }
        return out
    }
}
