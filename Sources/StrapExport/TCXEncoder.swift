import StrapModel

/// TrainingCenterDatabase v2 (docs/export.md "TCX"): one Activity, a Lap per lap with its
/// totals, a Track of Trackpoints (Time, DistanceMeters, HeartRateBpm, bike Cadence, and the
/// ActivityExtension v2 TPX Speed / RunCadence / Watts), the lap's LX averages, Creator and Author.
/// Elements appear in the schema's order; text from the workout is XML-escaped.
struct TCXEncoder: FormatEncoder {
    private var trackOpen = false

    mutating func begin(_ ctx: EncodeContext, into sink: inout ByteSink) {
        sink.text("""
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 \
            http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
             <Activities>
              <Activity Sport="
            """)
        sink.string(ctx.mapping.tcxSport.rawValue)
        sink.text("\">\n   <Id>")
        sink.rfc3339(ctx.schedule.start, milliseconds: true)
        sink.text("</Id>\n")
    }

    mutating func boundary(_ b: ExportSchedule.Boundary, at time: Millis, _ ctx: EncodeContext,
                           _ stats: ExportStats, into sink: inout ByteSink) {
        switch b {
        case .lapStart(let i):
            // The header holds the lap's totals, known only after the first pass; that pass
            // writes the same header at the lap's end instead (same bytes, other place).
            if let summary = ctx.summary { lapHeader(summary.laps[i], ctx, into: &sink) }
        case .lapEnd(let i):
            if trackOpen {
                sink.text("    </Track>\n")
                trackOpen = false
            }
            let lap = stats.lapSummary(i, ctx.schedule)
            lapExtensions(lap, ctx, into: &sink)
            sink.text("   </Lap>\n")
            if ctx.isSizingPass { lapHeader(lap, ctx, into: &sink) }
        case .timerStart, .pause, .resume, .timerStop, .marker:
            break   // TCX has no timer events: a pause is the absence of trackpoints
        }
    }

    mutating func second(_ s: ExportSecond, _ ctx: EncodeContext, into sink: inout ByteSink) {
        let family = ctx.mapping.family
        guard s.lap != nil, s.hasContent(family) else { return }
        if !trackOpen {
            sink.text("    <Track>\n")
            trackOpen = true
        }
        sink.text("     <Trackpoint>\n      <Time>")
        sink.rfc3339(s.second * 1000, milliseconds: false)
        sink.text("</Time>\n")
        if let d = s.distanceTotal(family) {
            sink.text("      <DistanceMeters>")
            sink.decimal(d, digits: 2)
            sink.text("</DistanceMeters>\n")
        }
        if let hr = s.value(.heartRate), hr.rounded() >= 1 {
            sink.text("      <HeartRateBpm><Value>")
            sink.decimal(min(255, hr), digits: 0)
            sink.text("</Value></HeartRateBpm>\n")
        }
        let (bike, run) = Self.cadences(s, family)
        if let bike {
            sink.text("      <Cadence>")
            sink.decimal(min(254, bike), digits: 0)
            sink.text("</Cadence>\n")
        }
        let speed = s.speed(family)
        let watts = s.value(.cyclingPower)
        if speed != nil || run != nil || watts != nil {
            sink.text("      <Extensions><ns3:TPX>")
            if let speed {
                sink.text("<ns3:Speed>")
                sink.decimal(speed, digits: 3)
                sink.text("</ns3:Speed>")
            }
            if let run {
                sink.text("<ns3:RunCadence>")
                sink.decimal(min(254, run), digits: 0)
                sink.text("</ns3:RunCadence>")
            }
            if let watts {
                sink.text("<ns3:Watts>")
                sink.decimal(min(65_535, watts), digits: 0)
                sink.text("</ns3:Watts>")
            }
            sink.text("</ns3:TPX></Extensions>\n")
        }
        sink.text("     </Trackpoint>\n")
    }

    mutating func finish(_ ctx: EncodeContext, _ stats: ExportStats, devices: [ExportDevice], into sink: inout ByteSink) {
        if let notes = ctx.workout.metadata["notes"] ?? ctx.workout.metadata["name"], !notes.isEmpty {
            sink.text("   <Notes>")
            sink.xmlEscaped(notes)
            sink.text("</Notes>\n")
        }
        let major = UInt64(ctx.options.softwareVersion / 100), minor = UInt64(ctx.options.softwareVersion % 100)
        sink.text("   <Creator xsi:type=\"Device_t\">\n    <Name>strapd</Name>\n    <UnitId>")
        sink.unsigned(UInt64(FITEncoder.serial(ctx.workout)))
        sink.text("</UnitId>\n    <ProductID>")
        sink.unsigned(UInt64(FITEncoder.product))
        sink.text("</ProductID>\n    <Version><VersionMajor>")
        sink.unsigned(major)
        sink.text("</VersionMajor><VersionMinor>")
        sink.unsigned(minor)
        sink.text("</VersionMinor></Version>\n   </Creator>\n  </Activity>\n </Activities>\n")
        sink.text(" <Author xsi:type=\"Application_t\">\n  <Name>strapd</Name>\n  <Build><Version><VersionMajor>")
        sink.unsigned(major)
        sink.text("</VersionMajor><VersionMinor>")
        sink.unsigned(minor)
        sink.text("""
            </VersionMinor></Version></Build>
              <LangID>en</LangID>
              <PartNumber>000-00000-00</PartNumber>
             </Author>
            </TrainingCenterDatabase>

            """)
    }

    /// Bike cadence goes to Trackpoint/Cadence, run cadence to TPX/RunCadence (strides/min).
    static func cadences(_ s: ExportSecond, _ family: ActivityMapping.Family) -> (bike: Double?, run: Double?) {
        switch family {
        case .cycling: (s.value(.cyclingCadence), nil)
        case .foot: (nil, s.value(.runningCadence))
        case .any: s.value(.cyclingCadence).map { ($0, nil) } ?? (nil, s.value(.runningCadence))
        }
    }

    private func lapHeader(_ lap: SegmentSummary, _ ctx: EncodeContext, into sink: inout ByteSink) {
        sink.text("   <Lap StartTime=\"")
        sink.rfc3339(lap.start, milliseconds: true)
        sink.text("\">\n    <TotalTimeSeconds>")
        sink.decimal(Double(lap.timerMillis) / 1000, digits: 3)
        sink.text("</TotalTimeSeconds>\n    <DistanceMeters>")
        sink.decimal(lap.distance ?? 0, digits: 2)
        sink.text("</DistanceMeters>\n")
        if let max = lap.maximumSpeed {
            sink.text("    <MaximumSpeed>")
            sink.decimal(max, digits: 3)
            sink.text("</MaximumSpeed>\n")
        }
        sink.text("    <Calories>")
        sink.decimal(min(65_535, lap.calories ?? 0), digits: 0)
        sink.text("</Calories>\n")
        if let avg = lap.averageHeartRate, let max = lap.maximumHeartRate, avg.rounded() >= 1 {
            sink.text("    <AverageHeartRateBpm><Value>")
            sink.decimal(min(255, avg), digits: 0)
            sink.text("</Value></AverageHeartRateBpm>\n    <MaximumHeartRateBpm><Value>")
            sink.decimal(min(255, max), digits: 0)
            sink.text("</Value></MaximumHeartRateBpm>\n")
        }
        sink.text("    <Intensity>Active</Intensity>\n")
        if ctx.mapping.tcxSport == .biking, let cadence = lap.averageCadence {
            sink.text("    <Cadence>")
            sink.decimal(min(254, cadence), digits: 0)
            sink.text("</Cadence>\n")
        }
        sink.text("    <TriggerMethod>Manual</TriggerMethod>\n")
    }

    private func lapExtensions(_ lap: SegmentSummary, _ ctx: EncodeContext, into sink: inout ByteSink) {
        let foot = ctx.mapping.family == .foot
        guard lap.averageSpeed != nil || (foot && lap.averageCadence != nil) || lap.power != nil else { return }
        sink.text("    <Extensions><ns3:LX>")
        if let avg = lap.averageSpeed {
            sink.text("<ns3:AvgSpeed>")
            sink.decimal(avg, digits: 3)
            sink.text("</ns3:AvgSpeed>")
        }
        if foot, let avg = lap.averageCadence, let max = lap.maximumCadence {
            sink.text("<ns3:AvgRunCadence>")
            sink.decimal(min(254, avg), digits: 0)
            sink.text("</ns3:AvgRunCadence><ns3:MaxRunCadence>")
            sink.decimal(min(254, max), digits: 0)
            sink.text("</ns3:MaxRunCadence>")
        }
        if let power = lap.power {
            sink.text("<ns3:AvgWatts>")
            sink.decimal(min(65_535, power.average), digits: 0)
            sink.text("</ns3:AvgWatts><ns3:MaxWatts>")
            sink.decimal(min(65_535, power.maximum), digits: 0)
            sink.text("</ns3:MaxWatts>")
        }
        sink.text("</ns3:LX></Extensions>\n")
    }
}
