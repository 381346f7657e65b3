import Foundation
import Testing
import StrapWire
@testable import StrapControl

/// `query`, `anchored`, `delete`, `stats` and `live` without a daemon: option checking and
/// how samples read.
@Suite struct SampleCommandTests {
    let missing = "/tmp/strapctl-test-\(UUID().uuidString.prefix(8))/none.sock"
    static let types = "heartRate, heartbeatSeries, energyExpended, activeEnergy, cyclingSpeed, cyclingCadence, cyclingDistance, " +
        "runningSpeed, runningCadence, strideLength, runningDistance, batteryLevel, sensorContact"

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
}
