/// Heart Rate Service: 0x2A37, 0x2A38, 0x2A39, plus the beat timeline fed from what decodes.
@_cdecl("LLVMFuzzerTestOneInput")
public func heartRateFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let m = try? HeartRateMeasurement.decode(bytes) {
        let flags = bytes[0]
        invariant(flags & 1 == 1 || m.heartRate <= 255, "uint8 heart rate above 255")
        invariant((m.rrIntervals != nil) == (flags & 0x10 != 0), "RR presence differs from its flag")
        let reencoded = m.encoded()
        invariant((try? HeartRateMeasurement.decode(reencoded))?.rrIntervals == m.rrIntervals, "RR round trip")
    }
    _ = try? BodySensorLocation.decode(bytes)
    _ = try? HeartRateControlPoint.decode(bytes)
    var timeline = BeatTimeline()
    var time = 0.0
    var previous = -Double.infinity
    for packet in bytes.packets() {
        time += Double(packet.first ?? 0) / 64
        guard let m = try? HeartRateMeasurement.decode(packet), let rr = m.rrIntervals else { continue }
        for beat in timeline.append(rrIntervals: rr, receivedAt: time) {
            invariant(beat.time >= previous, "beat times must not go back")
            previous = beat.time
        }
    }
    return 0
}
