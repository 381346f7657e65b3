/// Cycling Speed and Cadence: 0x2A5B and its derivation, 0x2A5C, 0x2A5D, 0x2A55 responses.
@_cdecl("LLVMFuzzerTestOneInput")
public func cyclingFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let m = try? CSCMeasurement.decode(bytes) {
        invariant(bytes.count >= 1 + (m.wheel == nil ? 0 : 6) + (m.crank == nil ? 0 : 4), "read past the packet")
    }
    _ = try? CSCFeature.decode(bytes)
    _ = try? SensorLocation.decode(bytes)
    _ = try? SCControlPointResponse.decode(bytes)
    var derivation = CSCDerivation()
    var time = 0.0
    var distance = 0.0
    for packet in bytes.packets() {
        time += Double(packet.count) * 0.37
        guard let m = try? CSCMeasurement.decode(packet) else { continue }
        let out = derivation.update(m, receivedAt: time)
        if let s = out.speed { invariant(s >= 0 && s <= 30, "speed \(s) outside the gate") }
        if let c = out.cadence { invariant(c >= 0 && c <= 250, "cadence \(c) outside the gate") }
        invariant(derivation.totalDistance >= distance, "distance went backwards")
        distance = derivation.totalDistance
    }
    return 0
}
