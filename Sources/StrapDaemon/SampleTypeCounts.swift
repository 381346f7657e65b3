import StrapModel
import Synchronization

/// Samples made per quantity type since strapd started (`status.pipeline.samplesByType`,
/// strapd-web's `strapd_pipeline_samples_by_type_total`). Added to on the ingest queue, read
/// by `status` on any thread: one atomic per type, so neither side takes a lock.
final class SampleTypeCounts: Sendable {
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    /// Indexed by the type's store code (`QuantityType.code`, a switch): a dictionary keyed by
    /// the type hashed its raw string for every sample.
    private let counts: [Count] = (0...Int(QuantityType.allCases.map(\.code).max() ?? 0)).map { _ in Count() }

    func count(_ samples: ArraySlice<Sample>) {
        // By index: a `for` over the slice copied each sample (its device and metadata retained).
        for i in samples.indices {
            counts[Int(samples[i].type.code)].value.add(1, ordering: .relaxed)
        }
    }

    /// The types with at least one sample.
    var snapshot: [QuantityType: Int] {
        var out: [QuantityType: Int] = [:]
        for type in QuantityType.allCases {
            let n = counts[Int(type.code)].value.load(ordering: .relaxed)
            if n > 0 { out[type] = n }
        }
        return out
    }
}
