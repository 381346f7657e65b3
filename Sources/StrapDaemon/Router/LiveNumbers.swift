import StrapModel
import StrapWire

/// A live sample's two times with the members around them, written by `RFC3339Timestamp`
/// straight into the line's buffer in one copy (docs/benchmarks.md, "Instructions and
/// allocations per notification").
enum LiveNumbers {
    /// `<start>","end":"<end>","device":`: what follows a sample's `"start":"`, as one copy.
    static func appendTimes(start: Millis, end: Millis, into out: inout [UInt8]) {
        let endOpen: StaticString = #"","end":""#
        let deviceOpen: StaticString = #"","device":"#
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 80) { buf in
            var p = buf.baseAddress!
            RFC3339Timestamp.write(millisecondsSinceEpoch: start, to: p)
            p += 24
            copy(endOpen, to: p)
            p += endOpen.utf8CodeUnitCount
            // Most samples are an instant (a heart rate, a power reading): the same 24 bytes.
            if end == start {
                p.update(from: buf.baseAddress!, count: 24)
            } else {
                RFC3339Timestamp.write(millisecondsSinceEpoch: end, to: p)
            }
            p += 24
            copy(deviceOpen, to: p)
            p += deviceOpen.utf8CodeUnitCount
            out.append(contentsOf: UnsafeBufferPointer(start: buf.baseAddress!, count: p - buf.baseAddress!))
        }
    }

    private static func copy(_ literal: StaticString, to p: UnsafeMutablePointer<UInt8>) {
        p.update(from: literal.utf8Start, count: literal.utf8CodeUnitCount)
    }
}
