/// FIT workout files (FITReader, FITWorkoutFile.decode): the input as a whole file (mostly
/// refused by its header or CRC), then framed with a valid header and CRC so the record
/// parser and the step mapping see it. Whatever decodes must encode, and what that encoding
/// decodes to must encode to the same bytes (one normalization, then a fixed point).
/// Compiled with StrapWire's and StrapModel's sources and the FIT files of StrapExport in one
/// module (scripts/fuzz.sh strips their imports of each other).
@_cdecl("LLVMFuzzerTestOneInput")
public func fitFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    check(bytes)
    var framed = FIT.header(dataSize: UInt32(bytes.count)) + bytes
    let crc = FIT.CRC.checksum(framed)
    framed += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    check(framed)
    return 0
}

private func check(_ file: [UInt8]) {
    guard let plan = try? FITWorkoutFile.decode(file) else { return }
    let once = FITWorkoutFile.encode(plan, created: 0)
    guard let again = try? FITWorkoutFile.decode(once) else {
        invariant(false, "strapd cannot read the file it wrote for \(plan)")
        return
    }
    invariant(FITWorkoutFile.encode(again, created: 0) == once, "encoding is not a fixed point for \(plan)")
}
