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

        if let rr = m.rrIntervals, !rr.isEmpty {
            let beats = timeline.append(rrIntervals: rr, receivedAt: monotonic)
            // The series starts at the beat before its first RR interval, so beat offsets are
            // running sums of the RR intervals: exact in binary, and each raw RR is the
            // difference of two offsets × 1024 — lossless without a metadata copy. Only when
            // the timeline had to move a beat are the raw values kept separately.
            let toWall = Double(wall) / 1000 - monotonic
            let start = beats[0].time - Double(rr[0]) / 1024
            var offsets = [Double]()
            offsets.reserveCapacity(rr.count)
            var sum: UInt32 = 0
            var adjusted = false
            for (i, value) in rr.enumerated() {
                sum += UInt32(value)
                offsets.append(Double(sum) / 1024)
                adjusted = adjusted || beats[i].adjusted
            }
            var meta: [String: String] = [:]
            if beats[0].gapBefore { meta["gapBefore"] = "true" }
            if adjusted {
                meta["adjusted"] = "true"
                meta["rr"] = rr.map(String.init).joined(separator: ",")
                offsets = beats.map { $0.time - start }
            }
            let startMillis = Millis(((start + toWall) * 1000).rounded())
            out.samples.append(sample(.heartbeatSeries, Double(beats.count), startMillis,
                                      end: startMillis + Millis((offsets[offsets.count - 1] * 1000).rounded()),
                                      metadata: meta, beats: offsets))
        }

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

    mutating func cycling(_ m: CSCMeasurement, wall: Millis, monotonic: Double, into out: inout Output) {
        let d = csc.update(m, receivedAt: monotonic)
        let start = lastCSCTime ?? wall
        lastCSCTime = wall
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
