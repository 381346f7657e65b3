// Shared by every fuzz entry point; compiled into the same module as StrapGATT's sources
// (scripts/fuzz.sh), so internal API is reachable without `import`.

/// Crashes with a message: libFuzzer records the input that broke an invariant.
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

extension UnsafeRawBufferPointer {
    /// Splits a fuzz input into packets: each starts with a length octet.
    func packets() -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i < count {
            let n = Int(self[i]) % 40
            i += 1
            let end = Swift.min(count, i + n)
            out.append(Array(self[i..<end]))
            i = end
        }
        return out
    }
}
