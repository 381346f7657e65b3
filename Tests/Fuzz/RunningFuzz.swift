/// Running Speed and Cadence: 0x2A53 and the total-distance counter, 0x2A54.
@_cdecl("LLVMFuzzerTestOneInput")
public func runningFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? RSCFeature.decode(bytes)
    var counter = CumulativeCounter.rscTotalDistance()
    var total: UInt64 = 0
    var time = 0.0
    for packet in bytes.packets() {
        time += 1
        guard let m = try? RSCMeasurement.decode(packet) else { continue }
        invariant(m.speed >= 0 && m.speed < 256, "speed out of range")
        var whole = m
        whole.warnings = []      // re-encoding drops ignored trailing octets, so their warning too
        invariant((try? RSCMeasurement.decode(m.encoded())) == whole, "round trip")
        if let raw = m.totalDistanceRaw {
            counter.update(UInt64(raw), at: time)
            invariant(counter.total >= total, "total distance went backwards")
            total = counter.total
        }
    }
    return 0
}
