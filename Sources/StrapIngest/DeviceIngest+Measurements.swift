import StrapGATT
import StrapModel

extension DeviceIngest {
    mutating func heartRate(_ m: HeartRateMeasurement, wall: Millis, monotonic: Double, into out: inout Output) {
        if m.contact != contact {
            contact = m.contact
            out.changes.append(.contact(m.contact))
            out.samples.append(sample(.sensorContact, Double(m.contact.rawValue), wall, metadata: ["state": m.contact.name]))
        }
        // HR 0 is "no reading" on many straps: stored, flagged, never silently dropped.
        var metadata = m.isNoReading ? ["quality": "noReading"] : [:]
        if m.contact == .notDetected { metadata["contact"] = "notDetected" }
        out.samples.append(sample(.heartRate, Double(m.heartRate), wall, metadata: metadata))

        if let rr = m.rrIntervals, !rr.isEmpty { beatSeries(rr, wall: wall, monotonic: monotonic, into: &out) }

        if let raw = m.energyExpended {
            let start = lastEnergyTime ?? wall
            lastEnergyTime = wall
            switch energy.update(UInt64(raw), at: monotonic) {
            case .baseline: break
            case let .advanced(by: kj), let .wrapped(by: kj), let .reset(by: kj):
                if kj > 0 {
                    let meta = ["counter": String(raw)]  // the sensor's cumulative kJ as sent
                    out.samples.append(sample(.energyExpended, Double(kj), start, end: wall, metadata: meta))
                    out.samples.append(sample(.activeEnergy, Double(kj) / 4.184, start, end: wall,
                                              metadata: ["source": "sensorEnergyExpended"]))
                }
            case .saturated:
                out.changes.append(.energySaturated)
            }
        }
    }

    /// One `heartbeatSeries` per packet. Offsets are running sums of the RR intervals from the
    /// beat before the first one (exact in binary: each raw RR is the difference of two offsets
    /// × 1024). A series continuing the run starts at the previous series' `end`, the same
    /// beat to the millisecond, so series tile; `end` is where the timeline placed the last
    /// beat, which differs from `start` + the last offset by the drift step (≤ 1 ms settled).
    mutating func beatSeries(_ rr: [UInt16], wall: Millis, monotonic: Double, into out: inout Output) {
        let beats = timeline.append(rrIntervals: rr, receivedAt: monotonic)
        // Wall time of the timeline's monotonic clock, fixed for a run: both clocks advance
        // together unless the wall clock is stepped, and a step restarts the run.
        let toWall = Double(wall) / 1000 - monotonic
        var restart = beats[0].gapBefore || lastSeriesEnd == nil
        if let beatsToWall, abs(toWall - beatsToWall) > Self.wallStepTolerance { restart = true }
        let offsetToWall = restart ? toWall : beatsToWall ?? toWall
        beatsToWall = offsetToWall
        var offsets = [Double]()
        offsets.reserveCapacity(rr.count)
        var sum: UInt32 = 0
        for value in rr {
            sum += UInt32(value)
            offsets.append(Double(sum) / 1024)
        }
        let start: Millis
        if !restart, let lastSeriesEnd {
            start = lastSeriesEnd
        } else {
            start = Millis((((timeline.opening ?? beats[0].time) + offsetToWall) * 1000).rounded())
        }
        let end = max(start, Millis(((beats[beats.count - 1].time + offsetToWall) * 1000).rounded()))
        // The first series ever has nothing before it to be missing.
        let meta = restart && lastSeriesEnd != nil ? ["gapBefore": "true"] : [:]
        lastSeriesEnd = end
        out.samples.append(sample(.heartbeatSeries, Double(beats.count), start, end: end, metadata: meta, beats: offsets))
    }

    mutating func cycling(_ m: CSCMeasurement, wall: Millis, monotonic: Double, into out: inout Output) {
        let d = csc.update(m, receivedAt: monotonic)
        let start = lastCSCTime ?? wall
        lastCSCTime = wall
        revolutions(d, since: start, wall: wall, into: &out)
    }

    /// Speed, cadence and distance from either service's revolution data (CSC or Cycling Power).
    func revolutions(_ d: CSCDerivation.Output, since start: Millis, wall: Millis, into out: inout Output) {
        let meta = d.warnings.isEmpty ? [:] : ["warnings": d.warnings.names.joined(separator: ",")]
        if let speed = d.speed { out.samples.append(sample(.cyclingSpeed, speed, wall, metadata: meta)) }
        if let cadence = d.cadence { out.samples.append(sample(.cyclingCadence, cadence, wall, metadata: meta)) }
        if d.distanceDelta > 0 {
            out.samples.append(sample(.cyclingDistance, d.distanceDelta, start, end: wall))
        }
    }

    private static let running = SharedMetadata(["running": "true"])
    private static let walking = SharedMetadata(["running": "false"])
    private static let cadenceInSteps = SharedMetadata(["cadenceUnit": "steps"])

    mutating func running(_ m: RSCMeasurement, wall: Millis, monotonic: Double, into out: inout Output) {
        let start = lastRSCTime ?? wall
        lastRSCTime = wall
        out.samples.append(Sample(type: .runningSpeed, value: m.speed, start: wall, device: device,
                                  metadata: m.isRunning ? Self.running : Self.walking))
        if settings.cadenceIsStepsPerMinute {
            out.samples.append(Sample(type: .runningCadence, value: Double(m.cadence), start: wall, device: device,
                                      metadata: Self.cadenceInSteps))
        } else {
            out.samples.append(sample(.runningCadence, Double(m.cadence), wall))
        }
        if let stride = m.strideLength { out.samples.append(sample(.strideLength, stride, wall)) }
        if let raw = m.totalDistanceRaw {
            switch runningDistance.update(UInt64(raw), at: monotonic) {
            case .baseline, .saturated: break
            case let .advanced(by: dm), let .wrapped(by: dm), let .reset(by: dm):
                if dm > 0 { out.samples.append(sample(.runningDistance, Double(dm) / 10, start, end: wall)) }
            }
        }
    }
}

extension Device {
    /// A copy with one Device Information string set, or nil when nothing changed.
    func with(_ characteristic: GATTCharacteristic, _ text: String) -> Device? {
        var manufacturer = self.manufacturer, model = self.model, serial = self.serial, firmware = self.firmware
        switch characteristic {
        case .manufacturerName: manufacturer = text
        case .modelNumber: model = text
        case .serialNumber: serial = text
        case .firmwareRevision: firmware = text
        default: return nil
        }
        let updated = Device(id: id, address: address, name: name, manufacturer: manufacturer, model: model,
                             serial: serial, firmware: firmware)
        return updated == self ? nil : updated
    }
}
