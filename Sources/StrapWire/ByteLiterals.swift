extension Array where Element == UInt8 {
    /// Appends a literal's UTF-8 bytes as one copy. `append(contentsOf: "…".utf8)` goes through
    /// the generic sequence path, about 175 instructions a call; the JSON encoders of the
    /// notification path make some twenty such calls per sample (docs/benchmarks.md,
    /// "Instructions and allocations per notification").
    @inlinable
    public mutating func appendLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { append(contentsOf: $0) }
    }
}
