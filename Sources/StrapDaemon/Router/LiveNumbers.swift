import StrapModel
import StrapWire

/// The numbers and times of a live sample, written as `JSONWriter` and `RFC3339Timestamp` write
/// them but straight into the line's buffer: through `String` (the number) and a general
/// digit loop (each timestamp) they cost about 650 and 800 instructions, a quarter of a
/// sample's encoding (docs/benchmarks.md, "Instructions and allocations per notification").
/// `LiveLinesTests` compares both with the general writers over many random values.
enum LiveNumbers {
    /// `JSONWriter.write(.double(d))`: a whole number below 2^53 as an integer, others in
    /// Swift's shortest round-trip form (rare on this path: speeds, beat times), non-finite
    /// as null.
    static func append(_ d: Double, into out: inout [UInt8]) {
        if d.isFinite, d == d.rounded(.towardZero), abs(d) < 9_007_199_254_740_992 {
            appendInteger(Int64(d), into: &out)
        } else if d.isFinite {
            var text = String(d)
            text.withUTF8 { out.append(contentsOf: $0) }
        } else {
            out.appendLiteral("null")
        }
    }

    /// Decimal digits of `v`, with a minus sign when negative (`String(v)`'s form).
    static func appendInteger(_ v: Int64, into out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var rest = v.magnitude
            var i = 20
            repeat {
                i -= 1
                buf[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if v < 0 {
                i -= 1
                buf[i] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<20]))
        }
    }

    /// `<start>","end":"<end>","device":`: what follows a sample's `"start":"`, as one copy.
    static func appendTimes(start: Millis, end: Millis, into out: inout [UInt8]) {
        let endOpen: StaticString = #"","end":""#
        let deviceOpen: StaticString = #"","device":"#
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 80) { buf in
            var p = buf.baseAddress!
            writeTimestamp(start, to: p)
            p += 24
            copy(endOpen, to: p)
            p += endOpen.utf8CodeUnitCount
            // Most samples are an instant (a heart rate, a power reading): the same 24 bytes.
            if end == start {
                p.update(from: buf.baseAddress!, count: 24)
            } else {
                writeTimestamp(end, to: p)
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

    /// `RFC3339Timestamp.format(millisecondsSinceEpoch:)`'s 24 bytes (`YYYY-MM-DDTHH:MM:SS.mmmZ`,
    /// UTC, clamped to four-digit years).
    static func writeTimestamp(_ ms: Int64, to p: UnsafeMutablePointer<UInt8>) {
        let clamped = min(max(ms, RFC3339Timestamp.minimumMilliseconds), RFC3339Timestamp.maximumMilliseconds)
        var days = clamped / 86_400_000
        var msOfDay = clamped % 86_400_000
        if msOfDay < 0 {
            days -= 1
            msOfDay += 86_400_000
        }
        let (year, month, day) = RFC3339Timestamp.civil(fromDays: days)
        let t = Int(msOfDay)
        two(year / 100, p)
        two(year % 100, p + 2)
        p[4] = UInt8(ascii: "-")
        two(month, p + 5)
        p[7] = UInt8(ascii: "-")
        two(day, p + 8)
        p[10] = UInt8(ascii: "T")
        two(t / 3_600_000, p + 11)
        p[13] = UInt8(ascii: ":")
        two(t / 60_000 % 60, p + 14)
        p[16] = UInt8(ascii: ":")
        two(t / 1000 % 60, p + 17)
        p[19] = UInt8(ascii: ".")
        let milli = t % 1000
        p[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: milli / 100)
        two(milli % 100, p + 21)
        p[23] = UInt8(ascii: "Z")
    }

    /// Two digits of `v` (0...99).
    @inline(__always)
    private static func two(_ v: Int, _ p: UnsafeMutablePointer<UInt8>) {
        p[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v / 10)
        p[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
    }
}
