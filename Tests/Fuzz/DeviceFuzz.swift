/// Battery Level, Device Information strings, and the energy-expended counter.
@_cdecl("LLVMFuzzerTestOneInput")
public func deviceFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let b = try? BatteryLevel.decode(bytes) { invariant(b.percent <= 100, "battery above 100") }
    let array = Array(bytes)
    for characteristic in DeviceInformationString.characteristics {
        _ = try? DeviceInformationString.decode(characteristic, array)
    }
    var energy = CumulativeCounter.energyExpended()
    var time = 0.0
    for packet in bytes.packets() where packet.count >= 2 {
        time += Double(packet[0]) / 16
        let before = energy.total
        energy.update(UInt64(packet[0]) | UInt64(packet[1]) << 8, at: time)
        invariant(energy.total >= before, "energy went backwards")
    }
    return 0
}
