import StrapGATT
import StrapWire

/// `strapctl decode` for the Cycling Power and Fitness Machine characteristics: the raw wire
/// values under the spec's names, plus SI where the unit is not obvious.
extension PacketJSON {
    static func renderTrainer(_ characteristic: GATTCharacteristic, _ bytes: [UInt8]) throws(GATTDecodingError) -> JSONValue {
        switch characteristic {
        case .cyclingPowerMeasurement:
            let m = try CyclingPowerMeasurement.decode(bytes)
            return .fields([
                ("instantaneousPower", .int(Int64(m.instantaneousPower))),
                ("pedalPowerBalance", .optional(m.pedalPowerBalancePercent)),
                ("pedalPowerBalanceReference", .string(m.pedalPowerBalanceReference == .left ? "left" : "unknown")),
                ("accumulatedTorque", .optional(m.accumulatedTorqueNewtonMetres)),
                ("accumulatedTorqueSource", .string(m.accumulatedTorqueSource == .crankBased ? "crank" : "wheel")),
                ("wheelRevolutions", .optional(m.wheel.map { Int($0.revolutions) })),
                ("lastWheelEventTime", .optional(m.wheel.map { Int($0.eventTime) })),
                ("crankRevolutions", .optional(m.crank.map { Int($0.revolutions) })),
                ("lastCrankEventTime", .optional(m.crank.map { Int($0.eventTime) })),
                ("maximumForce", .optional(m.extremeForce.map { Int($0.maximum) })),
                ("minimumForce", .optional(m.extremeForce.map { Int($0.minimum) })),
                ("maximumTorque", .optional(m.extremeTorque.map { Double($0.maximum) / 32 })),
                ("minimumTorque", .optional(m.extremeTorque.map { Double($0.minimum) / 32 })),
                ("maximumAngle", .optional(m.extremeAngles.map { Int($0.maximum) })),
                ("minimumAngle", .optional(m.extremeAngles.map { Int($0.minimum) })),
                ("topDeadSpotAngle", .optional(m.topDeadSpotAngle.map { Int($0) })),
                ("bottomDeadSpotAngle", .optional(m.bottomDeadSpotAngle.map { Int($0) })),
                ("accumulatedEnergy", .optional(m.accumulatedEnergy.map { Int($0) })),
                ("offsetCompensationIndicator", .bool(m.offsetCompensationIndicator)),
                ("warnings", .strings(m.warnings.names)),
            ])
        case .indoorBikeData:
            let d = try IndoorBikeData.decode(bytes)
            return .fields([
                ("moreData", .bool(d.moreData)),
                ("speed", .optional(d.instantaneousSpeed.map { Double($0) / 100 })),
                ("averageSpeed", .optional(d.averageSpeed.map { Double($0) / 100 })),
                ("cadence", .optional(d.cadenceRPM)),
                ("averageCadence", .optional(d.averageCadence.map { Double($0) / 2 })),
                ("totalDistance", .optional(d.totalDistance.map { Int($0) })),
                ("resistanceLevel", .optional(d.resistanceLevel.map { Int($0) })),
                ("power", .optional(d.instantaneousPower.map { Int($0) })),
                ("averagePower", .optional(d.averagePower.map { Int($0) })),
                ("totalEnergy", .optional(d.expendedEnergy.map { Int($0.total) })),
                ("heartRate", .optional(d.heartRate.map { Int($0) })),
                ("metabolicEquivalent", .optional(d.metabolicEquivalent.map { Double($0) / 10 })),
                ("elapsedTime", .optional(d.elapsedTime.map { Int($0) })),
                ("remainingTime", .optional(d.remainingTime.map { Int($0) })),
                ("warnings", .strings(d.warnings.names)),
            ])
        case .cyclingPowerFeature:
            return .fields([("featureBits", .int(Int64(try CyclingPowerFeature.decode(bytes).rawValue)))])
        case .fitnessMachineFeature:
            let f = try FitnessMachineFeature.decode(bytes)
            return .fields([("machineFeatures", .int(Int64(f.machineFeatures))),
                            ("targetSettingFeatures", .int(Int64(f.targetSettingFeatures)))])
        case .supportedPowerRange, .supportedResistanceLevelRange:
            let r = try SupportedRange.decode(characteristic, bytes)
            return .fields([("minimum", .int(Int64(r.minimum))), ("maximum", .int(Int64(r.maximum))),
                            ("increment", .int(Int64(r.increment)))])
        case .trainingStatus:
            let s = try TrainingStatus.decode(bytes)
            return .fields([("status", .string(s.name)), ("code", .int(Int64(s.code))),
                            ("text", s.text.map { .string($0) } ?? .null)])
        case .fitnessMachineStatus:
            let s = try FitnessMachineStatus.decode(bytes)
            return .fields([("opCode", .int(Int64(s.opCode))), ("status", .string("\(s)"))])
        case .cyclingPowerControlPoint:
            let r = try CyclingPowerControlPointResponse.decode(bytes)
            return .fields([("requestOpCode", .int(Int64(r.requestOpCode))),
                            ("result", .string(r.result.map { "\($0)" } ?? "reserved")),
                            ("code", .int(Int64(r.rawResult))), ("parameter", .string("\(r.parameter)"))])
        default:
            let r = try FitnessMachineControlPointResponse.decode(bytes)
            return .fields([("requestOpCode", .int(Int64(r.requestOpCode))),
                            ("result", .string(r.result.map { "\($0)" } ?? "reserved")),
                            ("code", .int(Int64(r.rawResult)))])
        }
    }
}
