import StrapModel
import Synchronization

/// Samples made per quantity type since strapd started (`status.pipeline.samplesByType`,
/// strapd-web's `strapd_pipeline_samples_by_type_total`). Added to on the ingest queue, read
/// by `status` on any thread: one atomic per type, so neither side takes a lock.
final class SampleTypeCounts: Sendable {
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    private let counts: [Count] = QuantityType.allCases.map { _ in Count() }
    private static let ordinal: [QuantityType: Int] = Dictionary(
        uniqueKeysWithValues: QuantityType.allCases.enumerated().map { ($1, $0) })

    func count(_ samples: ArraySlice<Sample>) {
        for sample in samples {
            guard let i = Self.ordinal[sample.type] else { continue }
            counts[i].value.add(1, ordering: .relaxed)
        }
    }

    /// The types with at least one sample.
    var snapshot: [QuantityType: Int] {
        var out: [QuantityType: Int] = [:]
        for (i, type) in QuantityType.allCases.enumerated() {
            let n = counts[i].value.load(ordering: .relaxed)
            if n > 0 { out[type] = n }
        }
        return out
    }
}
