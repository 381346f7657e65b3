import StrapGATT

/// The JSON `strapctl decode` prints for one packet: keys and units exactly as spec §3.2
/// lists them, null where the packet does not carry a field.
public enum PacketJSON {
    public static func render(_ characteristic: GATTCharacteristic, _ bytes: [UInt8]) throws(GATTDecodingError) -> JSONValue {
        switch characteristic {
        case .heartRateMeasurement:
            let m = try HeartRateMeasurement.decode(bytes)
            return .object([
                ("heartRate", .int(Int(m.heartRate))),
                ("contact", .string(m.contact.name)),
                ("energyExpended", .optional(m.energyExpended.map(Int.init))),
                ("rrIntervals", m.rrIntervals.map { .array($0.map { .int(Int($0)) }) } ?? .null),
                ("rrIntervalsMs", m.rrIntervalsMilliseconds.map { .array($0.map { .double($0) }) } ?? .null),
                ("warnings", .strings(m.warnings.names + (m.isNoReading ? ["heartRateZeroNoReading"] : []))),
            ])
        case .cscMeasurement:
            let m = try CSCMeasurement.decode(bytes)
            return .object([
                ("wheelRevolutions", .optional(m.wheel.map { Int($0.revolutions) })),
                ("lastWheelEventTime", .optional(m.wheel.map { Int($0.eventTime) })),
                ("crankRevolutions", .optional(m.crank.map { Int($0.revolutions) })),
                ("lastCrankEventTime", .optional(m.crank.map { Int($0.eventTime) })),
                ("warnings", .strings(m.warnings.names)),
            ])
        case .rscMeasurement:
            let m = try RSCMeasurement.decode(bytes)
            return .object([
                ("speed", .double(m.speed)),
                ("cadence", .int(Int(m.cadence))),
                ("strideLength", .optional(m.strideLength)),
                ("totalDistance", .optional(m.totalDistance)),
                ("running", .bool(m.isRunning)),
                ("warnings", .strings(m.warnings.names)),
            ])
        case .batteryLevel:
            return .object([("batteryLevel", .int(Int(try BatteryLevel.decode(bytes).percent)))])
        case .bodySensorLocation:
            let l = try BodySensorLocation.decode(bytes)
            return .object([("location", .string(l.name)), ("code", .int(Int(l.code)))])
        case .sensorLocation:
            let l = try SensorLocation.decode(bytes)
            return .object([("location", .string(l.name)), ("code", .int(Int(l.code)))])
        case .heartRateControlPoint:
            let c = try HeartRateControlPoint.decode(bytes)
            return .object([("opCode", .int(Int(c.opCode))), ("operation", .string(c.operation))])
        case .cscFeature:
            let f = try CSCFeature.decode(bytes)
            return .object([
                ("wheelRevolutionDataSupported", .bool(f.wheelRevolutionDataSupported)),
                ("crankRevolutionDataSupported", .bool(f.crankRevolutionDataSupported)),
                ("multipleSensorLocationsSupported", .bool(f.multipleSensorLocationsSupported)),
            ])
        case .rscFeature:
            let f = try RSCFeature.decode(bytes)
            return .object([
                ("instantaneousStrideLengthSupported", .bool(f.instantaneousStrideLengthSupported)),
                ("totalDistanceSupported", .bool(f.totalDistanceSupported)),
                ("walkingOrRunningStatusSupported", .bool(f.walkingOrRunningStatusSupported)),
                ("calibrationProcedureSupported", .bool(f.calibrationProcedureSupported)),
                ("multipleSensorLocationsSupported", .bool(f.multipleSensorLocationsSupported)),
            ])
        case .scControlPoint:
            let r = try SCControlPointResponse.decode(bytes)
            return .object([
                ("requestOpCode", .int(Int(r.requestOpCode))),
                ("result", .string(r.result.map { "\($0)" } ?? "reserved")),
                ("code", .int(Int(r.rawResult))),
                ("supportedLocations", .strings(r.supportedLocations.map(\.name))),
            ])
        case .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision:
            return .object([("value", .string(try DeviceInformationString.decode(characteristic, bytes).value))])
        }
    }

    /// One line of `decode csc-measurement --sequence` output.
    public static func render(_ output: CSCDerivation.Output) -> JSONValue {
        .object([
            ("speed", .optional(output.speed)),
            ("cadence", .optional(output.cadence)),
            ("distance", .optional(output.distance)),
            ("warnings", .strings(output.warnings.names)),
        ])
    }
}
