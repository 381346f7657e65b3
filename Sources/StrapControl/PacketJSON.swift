import StrapGATT
import StrapWire

/// The JSON `strapctl decode` prints for one packet: keys and units exactly as docs/product.md
/// §3.2 lists them, null where the packet does not carry a field.
public enum PacketJSON {
    public static func render(_ characteristic: GATTCharacteristic, _ bytes: [UInt8]) throws(GATTDecodingError) -> JSONValue {
        switch characteristic {
        case .heartRateMeasurement:
            let m = try HeartRateMeasurement.decode(bytes)
            return .fields([
                ("heartRate", .int(Int64(m.heartRate))),
                ("contact", .string(m.contact.name)),
                ("energyExpended", .optional(m.energyExpended.map { Int($0) })),
                ("rrIntervals", m.rrIntervals.map { .array($0.map { .int(Int64($0)) }) } ?? .null),
                ("rrIntervalsMs", m.rrIntervalsMilliseconds.map { .array($0.map { .double($0) }) } ?? .null),
                ("warnings", .strings(m.warnings.names + (m.isNoReading ? ["heartRateZeroNoReading"] : []))),
            ])
        case .cscMeasurement:
            let m = try CSCMeasurement.decode(bytes)
            return .fields([
                ("wheelRevolutions", .optional(m.wheel.map { Int($0.revolutions) })),
                ("lastWheelEventTime", .optional(m.wheel.map { Int($0.eventTime) })),
                ("crankRevolutions", .optional(m.crank.map { Int($0.revolutions) })),
                ("lastCrankEventTime", .optional(m.crank.map { Int($0.eventTime) })),
                ("warnings", .strings(m.warnings.names)),
            ])
        case .rscMeasurement:
            let m = try RSCMeasurement.decode(bytes)
            return .fields([
                ("speed", .double(m.speed)),
                ("cadence", .int(Int64(m.cadence))),
                ("strideLength", .optional(m.strideLength)),
                ("totalDistance", .optional(m.totalDistance)),
                ("running", .bool(m.isRunning)),
                ("warnings", .strings(m.warnings.names)),
            ])
        case .batteryLevel:
            return .fields([("batteryLevel", .int(Int64(try BatteryLevel.decode(bytes).percent)))])
        case .bodySensorLocation:
            let l = try BodySensorLocation.decode(bytes)
            return .fields([("location", .string(l.name)), ("code", .int(Int64(l.code)))])
        case .sensorLocation:
            let l = try SensorLocation.decode(bytes)
            return .fields([("location", .string(l.name)), ("code", .int(Int64(l.code)))])
        case .heartRateControlPoint:
            let c = try HeartRateControlPoint.decode(bytes)
            return .fields([("opCode", .int(Int64(c.opCode))), ("operation", .string(c.operation))])
        case .cscFeature:
            let f = try CSCFeature.decode(bytes)
            return .fields([
                ("wheelRevolutionDataSupported", .bool(f.wheelRevolutionDataSupported)),
                ("crankRevolutionDataSupported", .bool(f.crankRevolutionDataSupported)),
                ("multipleSensorLocationsSupported", .bool(f.multipleSensorLocationsSupported)),
            ])
        case .rscFeature:
            let f = try RSCFeature.decode(bytes)
            return .fields([
                ("instantaneousStrideLengthSupported", .bool(f.instantaneousStrideLengthSupported)),
                ("totalDistanceSupported", .bool(f.totalDistanceSupported)),
                ("walkingOrRunningStatusSupported", .bool(f.walkingOrRunningStatusSupported)),
                ("calibrationProcedureSupported", .bool(f.calibrationProcedureSupported)),
                ("multipleSensorLocationsSupported", .bool(f.multipleSensorLocationsSupported)),
            ])
        case .scControlPoint:
            let r = try SCControlPointResponse.decode(bytes)
            return .fields([
                ("requestOpCode", .int(Int64(r.requestOpCode))),
                ("result", .string(r.result.map { "\($0)" } ?? "reserved")),
                ("code", .int(Int64(r.rawResult))),
                ("supportedLocations", .strings(r.supportedLocations.map(\.name))),
            ])
        case .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision:
            return .fields([("value", .string(try DeviceInformationString.decode(characteristic, bytes).value))])
        case .cyclingPowerMeasurement, .cyclingPowerFeature, .cyclingPowerControlPoint, .fitnessMachineFeature,
             .indoorBikeData, .trainingStatus, .supportedResistanceLevelRange, .supportedPowerRange,
             .fitnessMachineControlPoint, .fitnessMachineStatus:
            return try renderTrainer(characteristic, bytes)
        }
    }

    /// One line of `decode csc-measurement --sequence` output.
    public static func render(_ output: CSCDerivation.Output) -> JSONValue {
        .fields([
            ("speed", .optional(output.speed)),
            ("cadence", .optional(output.cadence)),
            ("distance", .optional(output.distance)),
            ("warnings", .strings(output.warnings.names)),
        ])
    }
}

/// Building blocks for the decode output over StrapWire's ordered JSON (keys stay in the
/// documented order).
extension JSONValue {
    static func fields(_ pairs: [(String, JSONValue)]) -> JSONValue {
        var object = JSONObject()
        for (key, value) in pairs { object[key] = value }
        return .object(object)
    }

    static func optional(_ v: Int?) -> JSONValue { v.map { .int(Int64($0)) } ?? .null }
    static func optional(_ v: Double?) -> JSONValue { v.map { .double($0) } ?? .null }
    static func strings(_ v: [String]) -> JSONValue { .array(v.map { .string($0) }) }
}
