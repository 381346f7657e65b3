/// Cycling Power (0x2A63, 0x2A65, 0x2A66) and Fitness Machine (0x2ACC, 0x2AD2, 0x2AD3, 0x2AD6,
/// 0x2AD8, 0x2AD9, 0x2ADA): every decoder on the whole input, then the input split into
/// packets for the Indoor Bike Data assembler and for CSCDerivation over CPS revolution data.
@_cdecl("LLVMFuzzerTestOneInput")
public func trainerFuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = Array(raw)
    checkCyclingPower(raw, bytes)
    checkFitnessMachine(raw, bytes)
    checkTargets(bytes)
    checkAssembler(raw)
    checkPowerDerivation(raw)
    return 0
}

/// A decoded value re-encodes to at most the octets it came from (so the decoder read no
/// field the packet does not hold) and decodes back equal. Trailing octets are not
/// re-encoded, so that warning is the one difference allowed.
private func checkCyclingPower(_ raw: UnsafeRawBufferPointer, _ bytes: [UInt8]) {
    if var m = try? CyclingPowerMeasurement.decode(raw) {
        let again = m.encoded()
        invariant(again.count <= bytes.count, "CPM read past the packet: \(again.count) > \(bytes.count)")
        m.warnings.remove(.trailingOctets)
        invariant((try? CyclingPowerMeasurement.decode(again)) == m, "CPM does not round-trip: \(bytes)")
    }
    if let f = try? CyclingPowerFeature.decode(raw) {
        invariant(f.encoded() == Array(bytes.prefix(4)), "CP feature does not round-trip")
    }
    if let r = try? CyclingPowerControlPointRequest.decode(bytes) {
        invariant(r.encoded() == bytes, "CP request does not round-trip: \(bytes)") // exact lengths
    }
    if let r = try? CyclingPowerControlPointResponse.decode(bytes) {
        let again = r.encoded()
        invariant(again.count <= bytes.count, "CP response read past the packet")
        invariant((try? CyclingPowerControlPointResponse.decode(again)) == r, "CP response does not round-trip: \(bytes)")
    }
}

private func checkFitnessMachine(_ raw: UnsafeRawBufferPointer, _ bytes: [UInt8]) {
    if var d = try? IndoorBikeData.decode(raw) {
        let again = d.encoded()
        invariant(again.count <= bytes.count, "IBD read past the packet: \(again.count) > \(bytes.count)")
        invariant(d.moreData == (bytes[0] & 0x01 != 0), "IBD More Data bit not inverted")
        d.warnings.remove(.trailingOctets)
        invariant((try? IndoorBikeData.decode(again)) == d, "IBD does not round-trip: \(bytes)")
    }
    if let f = try? FitnessMachineFeature.decode(raw) {
        invariant(f.encoded() == Array(bytes.prefix(8)), "FM feature does not round-trip")
    }
    for c in [GATTCharacteristic.supportedPowerRange, .supportedResistanceLevelRange] {
        if let r = try? SupportedRange.decode(c, raw) {
            invariant(r.minimum <= r.maximum && r.encoded() == bytes, "range does not round-trip")
        }
    }
    if let s = try? TrainingStatus.decode(bytes) {
        invariant((try? TrainingStatus.decode(s.encoded())) == s, "training status does not round-trip: \(bytes)")
    }
    if let s = try? FitnessMachineStatus.decode(bytes) {
        let again = s.encoded()
        invariant(again.count <= bytes.count, "machine status read past the packet")
        invariant((try? FitnessMachineStatus.decode(again)) == s, "machine status does not round-trip: \(bytes)")
    }
    if let r = try? FitnessMachineControlPointRequest.decode(bytes) {
        invariant(r.encoded() == bytes, "FMCP request does not round-trip: \(bytes)")
    }
    if let r = try? FitnessMachineControlPointResponse.decode(raw) {
        let again = r.encoded()
        invariant(again.count <= bytes.count, "FMCP response read past the packet")
        invariant((try? FitnessMachineControlPointResponse.decode(again)) == r, "FMCP response does not round-trip")
    }
}

/// The first six octets as a supported range, the next eight as a target (any Double,
/// NaN and infinities included), the next eight as simulation values: what the control point
/// accepts must be inside the range and on its grid; nothing may trap.
private func checkTargets(_ bytes: [UInt8]) {
    guard bytes.count >= 14 else { return }
    let range = SupportedRange(minimum: Int16(bitPattern: UInt16(bytes[0]) | UInt16(bytes[1]) << 8),
                               maximum: Int16(bitPattern: UInt16(bytes[2]) | UInt16(bytes[3]) << 8),
                               increment: UInt16(bytes[4]) | UInt16(bytes[5]) << 8)
    let target = double(bytes, at: 6)
    if range.minimum <= range.maximum, let watts = try? range.validate(target, field: "target") {
        invariant(watts >= range.minimum && watts <= range.maximum, "target \(watts) outside \(range)")
        if range.increment > 1 {
            invariant((Int(watts) - Int(range.minimum)) % Int(range.increment) == 0, "target \(watts) off the grid of \(range)")
        }
        invariant(abs(Double(watts) - target) <= Double(max(range.increment, 1)), "target \(target) moved to \(watts)")
    }
    if case let .setTargetResistanceLevel(tenths)? = try? range.targetResistanceLevel(target) {
        invariant(Int(tenths) >= Int(range.minimum) && Int(tenths) <= Int(range.maximum), "resistance outside \(range)")
    }
    guard bytes.count >= 22 else { return }
    let a = target, b = double(bytes, at: 14)
    if let p = try? IndoorBikeSimulationParameters(windSpeed: a, grade: b, rollingResistance: a, windResistance: b) {
        let request = FitnessMachineControlPointRequest.setIndoorBikeSimulationParameters(p)
        invariant((try? FitnessMachineControlPointRequest.decode(request.encoded())) == request, "simulation round trip")
    }
    _ = try? CyclingPowerControlPointRequest.setCrankLength(millimetres: b)
}

private func double(_ bytes: [UInt8], at i: Int) -> Double {
    var bits: UInt64 = 0
    for k in 0..<8 { bits |= UInt64(bytes[i + k]) << (8 * k) }
    return Double(bitPattern: bits)
}

/// Packets in, records out: a More Data = 0 packet always ends a record and keeps its speed;
/// a record is flushed unterminated only when a field repeats; no field is invented.
private func checkAssembler(_ raw: UnsafeRawBufferPointer) {
    var assembler = IndoorBikeDataAssembler()
    var seen: UInt16 = 0
    for (index, packet) in raw.packets().enumerated() {
        if index % 17 == 16 { assembler.reset(); seen = 0 }
        guard let d = try? IndoorBikeData.decode(packet) else { continue }
        let pending = seen
        seen |= d.flags & 0xFFFE
        guard let record = assembler.add(d) else {
            invariant(d.moreData, "a More Data = 0 packet did not end its record")
            continue
        }
        invariant(record.flags & 0xFFFE & ~seen == 0, "assembler invented a field")
        if record.warnings.contains(.unterminatedRecord) {
            invariant(record.moreData && d.moreData, "unterminated record without More Data")
            invariant(pending & d.flags & 0xFFFE != 0, "record flushed though no field repeated")
            seen = d.flags & 0xFFFE
        } else {
            invariant(!record.moreData && record.instantaneousSpeed == d.instantaneousSpeed, "completed record lost its speed")
            invariant(record.flags & d.flags == d.flags, "completed record lost a field of its last packet")
            seen = 0
        }
    }
}

/// CSC rules over CPS revolution data (wheel time in 1/2048 s): gated speed and cadence,
/// distance never backwards.
private func checkPowerDerivation(_ raw: UnsafeRawBufferPointer) {
    var derivation = CSCDerivation()
    var time = 0.0
    var distance = 0.0
    for packet in raw.packets() {
        time += Double(packet.count) * 0.37
        guard let m = try? CyclingPowerMeasurement.decode(packet) else { continue }
        let out = derivation.update(m, receivedAt: time)
        if let s = out.speed { invariant(s >= 0 && s <= 30, "speed \(s) outside the gate") }
        if let c = out.cadence { invariant(c >= 0 && c <= 250, "cadence \(c) outside the gate") }
        invariant(derivation.totalDistance >= distance, "distance went backwards")
        distance = derivation.totalDistance
    }
}
