import Foundation
import Testing
import StrapWire
@testable import StrapControl

/// `query`, `anchored`, `delete`, `stats` and `live` without a daemon: option checking and
/// how samples read.
@Suite struct SampleCommandTests {
    let missing = "/tmp/strapctl-test-\(UUID().uuidString.prefix(8))/none.sock"
    static let types = "heartRate, heartbeatSeries, energyExpended, activeEnergy, cyclingSpeed, cyclingCadence, cyclingDistance, " +
        "runningSpeed, runningCadence, strideLength, runningDistance, batteryLevel, sensorContact, cyclingPower, cyclingPowerBalance"

    /// Exit 2 with a socket nobody listens on: the value was refused before connecting (that
    /// would be exit 3), naming the option the user typed and what it takes.
    @Test(arguments: [
        (["query", "--type", "bogus"], #"--type: unknown type "bogus"; one of: \#(types)"#),
        (["query", "--type", "heartRate", "--type", "HeartRate"], #"--type: unknown type "HeartRate"; one of: \#(types)"#),
        (["anchored", "--type", "bogus", "--follow"], #"--type: unknown type "bogus"; one of: \#(types), workout"#),
        (["delete", "--type", "bogus", "--from", "-1h", "--to", "now"], #"--type: unknown type "bogus"; one of: \#(types)"#),
        (["stats", "--type", "bogus", "--option", "average"], #"--type: unknown type "bogus"; one of: \#(types)"#),
        (["stats", "--type", "heartRate", "--option", "median"],
         #"--option: unknown option "median"; one of: average, minimum, maximum, mostRecent, sum"#),
        (["live", "--type", "hr"], #"--type: unknown type "hr"; one of: \#(types)"#),
        (["query", "--sort", "middle"], #"--sort: unknown sort key "middle"; one of: start, end"#),
        (["workout", "export", "A", "--format", "gpx"], #"--format: unknown format "gpx"; one of: fit, tcx, csv"#),
        (["workout", "show", "A", "--chart", "fancy"], #"--chart: unknown chart mode "fancy"; one of: auto, unicode, ascii, none"#),
    ])
    func unknownEnumValuesAreUsageErrorsNamingTheOption(_ args: [String], _ message: String) {
        let out = Strapctl.run(["--socket", missing] + args)
        #expect(out.exitCode == ExitCode.usage, "\(args): \(out.stderr)")
        #expect(out.stderr.hasPrefix("strapctl: \(message)\n"), "\(args): \(out.stderr)")
    }

    @Test func knownEnumValuesReachForTheDaemon() {
        for args in [["query", "--type", "heartRate", "--type", "heartbeatSeries", "--sort", "end"], ["anchored", "--type", "workout"],
                     ["stats", "--type", "runningDistance", "--option", "sum"], ["live", "--type", "sensorContact"]] {
            #expect(Strapctl.run(["--socket", missing] + args).exitCode == ExitCode.unreachable, "\(args)")
        }
    }

    func object(_ json: String) -> JSONObject {
        guard case .object(let o) = try! JSONParser.parse(Array(json.utf8)) else { fatalError("not an object: \(json)") }
        return o
    }

    static let device = #""device":{"id":"AA:00","address":"AA:00","name":"Strap"}"#

    /// `query`, `anchored` and `live` print a sample's value alike: rounded, beats as RR.
    @Test func samplesReadTheSameInQueryAnchoredAndLive() {
        let cadence = object(#"{"anchor":7,"type":"cyclingCadence","value":84.97925311203319,"unit":"rpm","start":"2026-11-29T20:00:00.000Z",\#(Self.device)}"#)
        // 850 and 816 in 1/1024 s are 830 and 797 ms.
        let beats = object(#"{"anchor":8,"type":"heartbeatSeries","beats":[0.830078125,1.626953125],"unit":"s","start":"2026-11-29T20:00:01.000Z",\#(Self.device)}"#)
        let moved = object(#"{"type":"heartbeatSeries","beats":[0.9,1.7],"unit":"s","start":"2026-11-29T20:00:02.000Z","metadata":{"adjusted":"1","rr":"850,816"},\#(Self.device)}"#)
        #expect(SampleCommands.sampleLine(cadence) == "#7 2026-11-29T20:00:00.000Z cyclingCadence 84.98 rpm Strap")
        #expect(SampleCommands.sampleLine(beats) == "#8 2026-11-29T20:00:01.000Z heartbeatSeries rr=830,797ms Strap")
        #expect(SampleText.value(moved) == "rr=830,797ms")
        var view = LiveView()
        #expect(view.apply("sample", cadence) == "2026-11-29T20:00:00.000Z AA:00 cyclingCadence 84.98 rpm")
        #expect(view.apply("sample", beats) == "2026-11-29T20:00:01.000Z AA:00 heartbeatSeries rr=830,797ms")
        // Each line shows its own sample's intervals; the panel keeps the last four.
        #expect(view.apply("sample", moved) == "2026-11-29T20:00:02.000Z AA:00 heartbeatSeries rr=830,797ms")
        #expect(view.render()[1] == "  RR 830 797 830 797 ms  cadence 84.98 rpm")
    }

    @Test func numbersRoundToTwoDecimals() {
        #expect(SampleText.number(84.97925311203319) == "84.98")
        #expect(SampleText.number(72) == "72")
        #expect(SampleText.number(71.999) == "72")
        #expect(SampleText.number(-0.001) == "0")
        #expect(SampleText.number(2.5) == "2.5")
        #expect(SampleText.value(object(#"{"type":"heartbeatSeries","beats":[]}"#)) == "rr=-")
    }

    func ms(_ rfc3339: String) -> Int64 { try! RFC3339Timestamp.parse(rfc3339) }

    /// Without --anchor-date, intervals start on clock boundaries of the zone, not at --from.
    @Test(arguments: [
        ("15m", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T20:00:00Z"),
        ("1m", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T20:00:00Z"),
        ("7m", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T20:07:00Z"),
        ("90m", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T00:00:00Z"),
        ("1h", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T20:00:00Z"),
        ("5h", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T20:00:00Z"),
        ("6h", "UTC", "2026-11-29T20:07:31.123Z", "2026-11-29T00:00:00Z"),
        // +05:30: the top of the local hour is half past in UTC.
        ("15m", "Asia/Kolkata", "2026-11-29T20:07:31.123Z", "2026-11-29T19:30:00Z"),
        ("1d", "Europe/Berlin", "2026-11-29T20:07:31.123Z", "2026-11-28T23:00:00Z"),
        ("1d", "Europe/Berlin", "2026-11-28T23:30:00Z", "2026-11-28T23:00:00Z"),
        // The day summer time starts: midnight was still CET.
        ("1d", "Europe/Berlin", "2026-03-29T10:00:00Z", "2026-03-28T23:00:00Z"),
        // 2026-11-29 is a Sunday: the week began on Monday the 23rd.
        ("1w", "Europe/Berlin", "2026-11-29T20:07:31.123Z", "2026-11-22T23:00:00Z"),
        ("1mo", "Europe/Berlin", "2026-11-29T20:07:31.123Z", "2026-10-31T23:00:00Z"),
    ])
    func statsIntervalsAnchorOnTheClock(_ interval: String, _ zone: String, _ from: String, _ anchor: String) throws {
        let aligned = StatsAnchor.aligned(try SampleCommands.intervalJSON(interval), from: ms(from), zone: try StatsAnchor.zone(zone))
        #expect(RFC3339Timestamp.format(millisecondsSinceEpoch: aligned) == RFC3339Timestamp.format(millisecondsSinceEpoch: ms(anchor)))
    }

    @Test func anUnknownTimeZoneIsAUsageError() {
        let out = Strapctl.run(["--socket", missing, "stats", "--type", "heartRate", "--option", "average", "--interval", "1h", "--tz", "Mars/Olympus"])
        #expect(out.exitCode == ExitCode.usage)
        #expect(out.stderr.hasPrefix(#"strapctl: --tz: unknown time zone "Mars/Olympus""#))
    }

    /// strapd may write an integral value as `72` rather than `72.0`: every number strapctl
    /// reads from a reply takes both.
    @Test func integralValuesMayArriveAsIntegers() {
        for value in ["72", "72.0"] {
            let hr = object(#"{"anchor":5,"type":"heartRate","value":\#(value),"unit":"count/min","start":"2026-11-29T20:00:00.000Z",\#(Self.device)}"#)
            #expect(SampleCommands.sampleLine(hr) == "#5 2026-11-29T20:00:00.000Z heartRate 72 count/min Strap", "\(value)")
            var view = LiveView()
            #expect(view.apply("sample", hr) == "2026-11-29T20:00:00.000Z AA:00 heartRate 72 count/min")
            let battery = object(#"{"type":"batteryLevel","value":\#(value == "72" ? "95" : "95.0"),"unit":"%","start":"2026-11-29T20:00:01.000Z",\#(Self.device)}"#)
            let contact = object(#"{"type":"sensorContact","value":\#(value == "72" ? "2" : "2.0"),"unit":"state","start":"2026-11-29T20:00:01.000Z",\#(Self.device)}"#)
            _ = view.apply("sample", battery)
            _ = view.apply("sample", contact)
            #expect(view.render()[0] == "Strap [AA:00]  battery 95%  contact detected", "\(value)")
            #expect(view.render()[1].hasPrefix("  ♥ 72 bpm"))
            let change = object(#"{"address":"AA:00","change":"battery","battery":\#(value == "72" ? "94" : "94.0")}"#)
            #expect(view.apply("device", change) == "AA:00 battery 94%", "\(value)")
            let stats = object(#"{"start":"a","end":"b","count":\#(value == "72" ? "3" : "3.0"),"average":\#(value)}"#)
            #expect(SampleCommands.statsLine(stats, options: ["average"], unit: "count/min") == "a … b  n=3  average=72 count/min")
        }
        #expect(SampleText.value(object(#"{"type":"heartbeatSeries","beats":[1,2]}"#)) == "rr=1000,1000ms")
        #expect(DaemonCommands.scanningLine(object(#"{"timeout":2}"#), asked: 2, until: nil) == "scanning for 2 s…")
        #expect(DaemonCommands.scanningLine(object(#"{"timeout":2.5}"#), asked: 2.5, until: "AA") == "scanning for 2.5 s… (until AA is found)")
        #expect(DaemonCommands.plain(.int(72)) == "72" && DaemonCommands.plain(.double(72)) == "72")
    }
}
