import StrapModel

/// A FIT activity file (docs/export.md "FIT"): header, every local definition once at the
/// start, file_id, file_creator, the creator's device_info, timer events, a record per second
/// with content, hrv messages with the RR intervals (5 per message), a lap message at each
/// lap's end, device_info per sensor, session, activity, file CRC.
struct FITEncoder: FormatEncoder {
    // Local message numbers, one per message kind, each defined once.
    static let fileID = FIT.Definition(local: 0, global: 0, [
        .init(0, .enumeration), .init(1, .uint16), .init(2, .uint16), .init(3, .uint32z), .init(4, .uint32),
        .init(8, .string, count: 16),
    ])
    static let fileCreator = FIT.Definition(local: 1, global: 49, [.init(0, .uint16)])
    static let deviceInfo = FIT.Definition(local: 2, global: 23, [
        .init(253, .uint32), .init(0, .uint8), .init(1, .uint8), .init(25, .enumeration), .init(2, .uint16),
        .init(3, .uint32z), .init(4, .uint16), .init(5, .uint16), .init(27, .string, count: 20),
        .init(19, .string, count: 20),
    ])
    static let event = FIT.Definition(local: 3, global: 21, [
        .init(253, .uint32), .init(0, .enumeration), .init(1, .enumeration), .init(3, .uint32),
    ])
    /// 13 bytes a record: header, timestamp, heart_rate, cadence, speed, distance.
    static let record = FIT.Definition(local: 4, global: 20, [
        .init(253, .uint32), .init(3, .uint8), .init(4, .uint8), .init(6, .uint16), .init(5, .uint32),
    ])
    /// A record with power (22 bytes): the plain record's fields, then power,
    /// accumulated_power and left_right_balance. Only seconds with power use it, so a file
    /// without a power meter is what it was before power existed.
    static let powerRecord = FIT.Definition(local: 9, global: 20, [
        .init(253, .uint32), .init(3, .uint8), .init(4, .uint8), .init(6, .uint16), .init(5, .uint32),
        .init(7, .uint16), .init(29, .uint32), .init(30, .uint8),
    ])
    static let hrvValuesPerMessage = 5
    static let hrv = FIT.Definition(local: 5, global: 78, [.init(0, .uint16, count: hrvValuesPerMessage)])
    static let lap = FIT.Definition(local: 6, global: 19, [
        .init(254, .uint16), .init(253, .uint32), .init(0, .enumeration), .init(1, .enumeration), .init(2, .uint32),
        .init(7, .uint32), .init(8, .uint32), .init(9, .uint32), .init(11, .uint16), .init(13, .uint16),
        .init(14, .uint16), .init(15, .uint8), .init(16, .uint8), .init(63, .uint8), .init(17, .uint8),
        .init(18, .uint8), .init(24, .enumeration), .init(25, .enumeration), .init(39, .enumeration),
        .init(19, .uint16), .init(20, .uint16), .init(33, .uint16), .init(41, .uint32),
    ])
    static let session = FIT.Definition(local: 7, global: 18, [
        .init(254, .uint16), .init(253, .uint32), .init(0, .enumeration), .init(1, .enumeration), .init(2, .uint32),
        .init(5, .enumeration), .init(6, .enumeration), .init(7, .uint32), .init(8, .uint32), .init(9, .uint32),
        .init(11, .uint16), .init(14, .uint16), .init(15, .uint16), .init(16, .uint8), .init(17, .uint8),
        .init(64, .uint8), .init(18, .uint8), .init(19, .uint8), .init(25, .uint16), .init(26, .uint16),
        .init(28, .enumeration), .init(65, .uint32, count: HeartRateZones.count),
        .init(20, .uint16), .init(21, .uint16), .init(34, .uint16), .init(48, .uint32), .init(35, .uint16),
        .init(36, .uint16), .init(45, .uint16), .init(68, .uint32, count: PowerZones.count),
    ])
    static let activity = FIT.Definition(local: 8, global: 34, [
        .init(253, .uint32), .init(0, .uint32), .init(1, .uint16), .init(2, .enumeration), .init(3, .enumeration),
        .init(4, .enumeration), .init(5, .uint32),
    ])
    static let definitions = [fileID, fileCreator, deviceInfo, event, record, hrv, lap, session, activity, powerRecord]

    // Profile enum values.
    enum Event { static let timer: UInt8 = 0, session: UInt8 = 8, lap: UInt8 = 9, activity: UInt8 = 26, userMarker: UInt8 = 32 }
    enum EventType { static let start: UInt8 = 0, stop: UInt8 = 1, marker: UInt8 = 3, stopAll: UInt8 = 4 }
    enum SourceType { static let bluetoothLowEnergy: UInt8 = 3, local: UInt8 = 5 }
    enum BLEDeviceType { static let heartRate: UInt8 = 1, bikePower: UInt8 = 2, bikeSpeedCadence: UInt8 = 3, footpod: UInt8 = 6 }
    /// left_right_balance: the low 7 bits are a percentage, bit 7 says it is the right pedal's
    /// (clear: the side is unknown).
    static let balanceRight: UInt8 = 0x80
    static let fileTypeActivity: UInt8 = 4
    /// `manufacturer` development: strapd has no Garmin-assigned manufacturer id.
    static let manufacturerDevelopment: UInt16 = 255
    static let product: UInt16 = 1

    private var pendingRR: [UInt16] = []

    init() { pendingRR.reserveCapacity(Self.hrvValuesPerMessage * 4) }

    /// A stable serial number for the file: the workout UUID's first four bytes (0 is
    /// invalid for `uint32z`, so it becomes 1).
    static func serial(_ workout: Workout) -> UInt32 {
        let u = workout.uuid.uuid
        let s = UInt32(u.0) << 24 | UInt32(u.1) << 16 | UInt32(u.2) << 8 | UInt32(u.3)
        return s == 0 ? 1 : s
    }

    mutating func begin(_ ctx: EncodeContext, into sink: inout ByteSink) {
        let dataSize = ctx.isSizingPass ? 0 : ctx.byteCount - FIT.headerSize - 2
        sink.bytes.append(contentsOf: FIT.header(dataSize: UInt32(clamping: dataSize)))
        for d in Self.definitions { d.write(into: &sink) }
        let created = FIT.timestamp(ctx.schedule.start)
        let serial = Self.serial(ctx.workout)

        Self.fileID.header(into: &sink)
        sink.u8(Self.fileTypeActivity)
        sink.u16(Self.manufacturerDevelopment)
        sink.u16(Self.product)
        sink.u32(serial)
        sink.u32(created)
        sink.fixedString("strapd", width: 16)

        Self.fileCreator.header(into: &sink)
        sink.u16(ctx.options.softwareVersion)

        deviceInfo(timestamp: created, index: 0, type: FIT.invalid8, source: SourceType.local,
                   manufacturer: Self.manufacturerDevelopment, serial: serial, product: Self.product,
                   software: ctx.options.softwareVersion, productName: "strapd", descriptor: "", into: &sink)
    }

    mutating func boundary(_ b: ExportSchedule.Boundary, at time: Millis, _ ctx: EncodeContext,
                           _ stats: ExportStats, into sink: inout ByteSink) {
        switch b {
        case .timerStart, .resume: event(time, Event.timer, EventType.start, data: 0, into: &sink)
        case .pause, .timerStop: event(time, Event.timer, EventType.stopAll, data: 0, into: &sink)
        case .marker(let n, _): event(time, Event.userMarker, EventType.marker, data: UInt32(n), into: &sink)
        case .lapStart: break
        case .lapEnd(let i): lap(i, stats.lapSummary(i, ctx.schedule), ctx, into: &sink)
        }
    }

    mutating func second(_ s: ExportSecond, _ ctx: EncodeContext, into sink: inout ByteSink) {
        let family = ctx.mapping.family
        if s.hasContent(family) {
            let power = s.value(.cyclingPower)
            (power == nil ? Self.record : Self.powerRecord).header(into: &sink)
            sink.u32(FIT.timestamp(s.second * 1000))
            sink.u8(FIT.scaled8(s.value(.heartRate)))
            sink.u8(FIT.scaled8(s.cadence(family)))
            sink.u16(FIT.scaled16(s.speed(family), 1000))
            sink.u32(FIT.scaled32(s.distanceTotal(family), 100))
            if let power {
                sink.u16(FIT.scaled16(power))
                sink.u32(FIT.scaled32(s.accumulatedPower))
                sink.u8(Self.balance(s))
            }
        }
        guard !s.paused else { return }
        for beat in s.beats {
            pendingRR.append(FIT.scaled16(beat.milliseconds))   // hrv.time: s, scale 1000 = ms
            if pendingRR.count == Self.hrvValuesPerMessage { flushHRV(into: &sink) }
        }
    }

    mutating func finish(_ ctx: EncodeContext, _ stats: ExportStats, devices: [ExportDevice], into sink: inout ByteSink) {
        if !pendingRR.isEmpty { flushHRV(into: &sink) }
        let end = FIT.timestamp(ctx.schedule.end)
        for (i, d) in devices.enumerated() {
            let type: UInt8 = switch d.kind {
            case .heartRate: BLEDeviceType.heartRate
            case .speedCadence: BLEDeviceType.bikeSpeedCadence
            case .footPod: BLEDeviceType.footpod
            case .powerMeter: BLEDeviceType.bikePower
            case .other: FIT.invalid8
            }
            deviceInfo(timestamp: end, index: UInt8(clamping: i + 1), type: type, source: SourceType.bluetoothLowEnergy,
                       manufacturer: Self.manufacturer(d.device.manufacturer),
                       serial: d.device.serial.flatMap { UInt32($0) } ?? 0, product: FIT.invalid16,
                       software: Self.version(d.device.firmware), productName: d.device.model ?? d.device.name,
                       descriptor: d.device.name, into: &sink)
        }

        let session = stats.sessionSummary(ctx.schedule)
        Self.session.header(into: &sink)
        sink.u16(0)                                        // message_index
        sink.u32(end)
        sink.u8(Event.session)
        sink.u8(EventType.stop)
        sink.u32(FIT.timestamp(ctx.schedule.start))
        sink.u8(ctx.mapping.sport)
        sink.u8(ctx.mapping.subSport)
        totals(session, into: &sink)
        sink.u16(0)                                        // first_lap_index
        sink.u16(UInt16(clamping: ctx.schedule.laps.count))
        sink.u8(0)                                         // trigger: activity_end
        for k in 0..<HeartRateZones.count {                // time_in_hr_zone, s ×1000
            sink.u32(session.timeInZones.map { FIT.scaled32($0[k], 1000) } ?? FIT.invalid32)
        }
        power(session.power, into: &sink)
        let p = session.power
        sink.u16(FIT.scaled16(p?.trainingStressScore, 10))
        sink.u16(FIT.scaled16(p?.intensityFactor, 1000))
        sink.u16(FIT.scaled16(p?.functionalThresholdPower))
        for k in 0..<PowerZones.count {                    // time_in_power_zone, s ×1000
            sink.u32(p?.timeInZones.map { FIT.scaled32($0[k], 1000) } ?? FIT.invalid32)
        }

        Self.activity.header(into: &sink)
        sink.u32(end)
        sink.u32(UInt32(clamping: session.timerMillis))    // total_timer_time, scale 1000
        sink.u16(1)                                        // num_sessions
        sink.u8(0)                                         // type: manual
        sink.u8(Event.activity)
        sink.u8(EventType.stop)
        sink.u32(UInt32(clamping: Int64(end) + Int64(ctx.options.utcOffsetSeconds)))   // local_timestamp

        sink.updateCRC()
        let crc = sink.crc?.value ?? 0
        sink.u16(crc)
    }

    private func event(_ time: Millis, _ event: UInt8, _ type: UInt8, data: UInt32, into sink: inout ByteSink) {
        Self.event.header(into: &sink)
        sink.u32(FIT.timestamp(time))
        sink.u8(event)
        sink.u8(type)
        sink.u32(data)
    }

    private func lap(_ i: Int, _ lap: SegmentSummary, _ ctx: EncodeContext, into sink: inout ByteSink) {
        Self.lap.header(into: &sink)
        sink.u16(UInt16(clamping: i))                      // message_index
        sink.u32(FIT.timestamp(lap.end))
        sink.u8(Event.lap)
        sink.u8(EventType.stop)
        sink.u32(FIT.timestamp(lap.start))
        totals(lap, into: &sink)
        sink.u8(i == ctx.schedule.laps.count - 1 ? 7 : 0)  // lap_trigger: session_end / manual
        sink.u8(ctx.mapping.sport)
        sink.u8(ctx.mapping.subSport)
        power(lap.power, into: &sink)
    }

    /// avg_power, max_power, normalized_power (W) and total_work (J), in that order in the lap
    /// and the session definitions.
    private func power(_ p: PowerSummary?, into sink: inout ByteSink) {
        sink.u16(FIT.scaled16(p?.average))
        sink.u16(FIT.scaled16(p?.maximum))
        sink.u16(FIT.scaled16(p?.normalized))
        sink.u32(FIT.scaled32(p.map { $0.work * 1000 }))
    }

    /// The second's pedal balance as FIT's left_right_balance: a left share becomes the right
    /// one (100 − left) with the right bit; a share of an unknown pedal goes as it is.
    static func balance(_ s: ExportSecond) -> UInt8 {
        if let left = s.value(.powerBalanceLeft) { return UInt8(min(100, max(0, (100 - left).rounded()))) | balanceRight }
        if let share = s.value(.powerBalanceUnknown) { return UInt8(min(100, max(0, share.rounded()))) }
        return FIT.invalid8
    }

    /// The totals lap and session share, in the same field order in both definitions
    /// (elapsed, timer, distance, calories, avg/max speed, avg/max/min heart rate, avg/max cadence).
    private func totals(_ t: SegmentSummary, into sink: inout ByteSink) {
        sink.u32(UInt32(clamping: t.elapsedMillis))
        sink.u32(UInt32(clamping: t.timerMillis))
        sink.u32(FIT.scaled32(t.distance, 100))
        sink.u16(FIT.scaled16(t.calories))
        sink.u16(FIT.scaled16(t.averageSpeed, 1000))
        sink.u16(FIT.scaled16(t.maximumSpeed, 1000))
        sink.u8(FIT.scaled8(t.averageHeartRate))
        sink.u8(FIT.scaled8(t.maximumHeartRate))
        sink.u8(FIT.scaled8(t.minimumHeartRate))
        sink.u8(FIT.scaled8(t.averageCadence))
        sink.u8(FIT.scaled8(t.maximumCadence))
    }

    private mutating func flushHRV(into sink: inout ByteSink) {
        Self.hrv.header(into: &sink)
        for i in 0..<Self.hrvValuesPerMessage {
            sink.u16(i < pendingRR.count ? pendingRR[i] : FIT.invalid16)
        }
        pendingRR.removeAll(keepingCapacity: true)
    }

    private func deviceInfo(timestamp: UInt32, index: UInt8, type: UInt8, source: UInt8, manufacturer: UInt16,
                            serial: UInt32, product: UInt16, software: UInt16, productName: String,
                            descriptor: String, into sink: inout ByteSink) {
        Self.deviceInfo.header(into: &sink)
        sink.u32(timestamp)
        sink.u8(index)
        sink.u8(type)
        sink.u8(source)
        sink.u16(manufacturer)
        sink.u32(serial)
        sink.u16(product)
        sink.u16(software)
        sink.fixedString(productName, width: 20)
        sink.fixedString(descriptor, width: 20)
    }

    /// FIT manufacturer ids of common strap and sensor makers, matched on the Device
    /// Information manufacturer string; anything else is left invalid rather than guessed.
    static func manufacturer(_ name: String?) -> UInt16 {
        guard let name = name?.lowercased() else { return FIT.invalid16 }
        let known: [(String, UInt16)] = [
            ("garmin", 1), ("suunto", 23), ("wahoo", 32), ("4iiii", 51), ("stages", 69), ("scosche", 83),
            ("tacx", 89), ("magene", 107), ("polar", 123), ("coospo", 135), ("coros", 294), ("decathlon", 310),
        ]
        return known.first { name.contains($0.0) }?.1 ?? FIT.invalid16
    }

    /// "major.minor" firmware as FIT's software_version (scale 100: "2.15" → 215).
    static func version(_ firmware: String?) -> UInt16 {
        guard let parts = firmware?.split(separator: "."), parts.count == 2,
              let major = UInt16(parts[0]), let minor = UInt16(parts[1]), major < 655, minor < 100 else {
            return FIT.invalid16
        }
        return major * 100 + (parts[1].count == 1 ? minor * 10 : minor)
    }
}
