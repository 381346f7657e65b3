import Testing
@testable import StrapControl

/// `strapctl decode` exactly as docs/product.md §3.2: outputs, keys, exit codes.
@Suite struct DecodeCommandTests {
    func run(_ args: String...) -> CommandOutput { Strapctl.run(["decode"] + args) }

    @Test func heartRateKeysInOrder() {
        let out = run("2a37", "16 4a 3e 03")
        #expect(out.exitCode == 0 && out.stderr.isEmpty)
        #expect(out.stdout == #"{"heartRate":74,"contact":"detected","energyExpended":null,"rrIntervals":[830],"rrIntervalsMs":[810.546875],"warnings":[]}"# + "\n")
    }

    @Test(arguments: [["2a37", "164a3e03"], ["0x2A37", "16:4a:3e:03"], ["heart-rate-measurement", "16", "4a", "3e", "03"],
                      ["2A37", "0x16", "0x4a3e03"]])
    func hexAndNameForms(_ args: [String]) {
        let out = Strapctl.run(["decode"] + args)
        #expect(out.exitCode == 0 && out.stdout.hasPrefix(#"{"heartRate":74,"#))
    }

    @Test func rrFlagClearGivesNullIntervals() {
        #expect(run("2a37", "0848 0a00").stdout.contains(#""energyExpended":10,"rrIntervals":null,"rrIntervalsMs":null"#))
    }

    @Test func oddTailKeptWithWarning() {
        let out = run("2a37", "10 48 00 04 07")
        #expect(out.exitCode == 0)
        #expect(out.stdout.contains(#""rrIntervals":[1024],"rrIntervalsMs":[1000],"warnings":["danglingOddOctet"]"#))
    }

    @Test func everyCharacteristicHasItsKeys() {
        let expectations: [(String, String, String)] = [
            ("2a5b", "03 10000000 0004 0500 0008", #"{"wheelRevolutions":16,"lastWheelEventTime":1024,"crankRevolutions":5,"lastCrankEventTime":2048,"warnings":[]}"#),
            ("2a5b", "00", #"{"wheelRevolutions":null,"lastWheelEventTime":null,"crankRevolutions":null,"lastCrankEventTime":null,"warnings":["noDataFlags"]}"#),
            ("2a53", "07 0002 b4 6400 10270000", #"{"speed":2,"cadence":180,"strideLength":1,"totalDistance":1000,"running":true,"warnings":[]}"#),
            ("2a53", "00 0003 b4", #"{"speed":3,"cadence":180,"strideLength":null,"totalDistance":null,"running":false,"warnings":[]}"#),
            ("2a19", "64", #"{"batteryLevel":100}"#),
            ("2a38", "05", #"{"location":"earLobe","code":5}"#),
            ("body-sensor-location", "09", #"{"location":"reserved","code":9}"#),
            ("2a5d", "0c", #"{"location":"rearWheel","code":12}"#),
            ("2a39", "01", #"{"opCode":1,"operation":"resetEnergyExpended"}"#),
            ("2a39", "02", #"{"opCode":2,"operation":"reserved"}"#),
            ("2a5c", "0300", #"{"wheelRevolutionDataSupported":true,"crankRevolutionDataSupported":true,"multipleSensorLocationsSupported":false}"#),
            ("2a54", "0500", #"{"instantaneousStrideLengthSupported":true,"totalDistanceSupported":false,"walkingOrRunningStatusSupported":true,"calibrationProcedureSupported":false,"multipleSensorLocationsSupported":false}"#),
        ]
        for (char, hex, json) in expectations {
            let out = run(char, hex)
            #expect(out.exitCode == 0, "\(char) \(hex): \(out.stderr)")
            #expect(out.stdout == json + "\n", "\(char) \(hex)")
        }
    }

    @Test(arguments: [("2a37", "01 48"), ("2a19", "65"), ("2a19", "6400"), ("2a5b", "01 00"), ("2a53", "00 00 03"), ("2a38", "")])
    func invalidPacketExitsOneWithOneLineReason(_ char: String, _ hex: String) {
        let out = Strapctl.run(["decode", char] + (hex.isEmpty ? ["  "] : [hex]))
        #expect(out.exitCode == 1)
        #expect(out.stdout.isEmpty)
        #expect(out.stderr.hasPrefix("strapctl decode: invalid packet") && out.stderr.filter { $0 == "\n" }.count == 1)
    }

    @Test(arguments: [["2a99", "00"], ["nonsense", "00"], ["2a37", "164"], ["2a37", "zz"], ["2a37"], [], ["2a37", "--bogus", "00"]])
    func badArgumentsExitTwoWithUsage(_ args: [String]) {
        let out = Strapctl.run(["decode"] + args)
        #expect(out.exitCode == 2)
        #expect(out.stdout.isEmpty)
        #expect(out.stderr.hasPrefix("strapctl decode: ") && out.stderr.contains("usage: strapctl decode"))
    }

    @Test func sequenceWithWrapsRepeatsAndDecay() {
        // Wheel, crank and both event times wrap; packet 3 repeats packet 2's event times, so it
        // holds the last value, bounded by "no revolution since the last event" (2 m / 0.5 s).
        let out = run("csc-measurement", "--sequence",
                      "03 feffffff 00fc feff 00fc",
                      "03 00000000 00fe ffff 00fe",
                      "03 00000000 00fe ffff 00fe",
                      "03 01000000 0000 0000 0000",
                      "--circumference", "2", "--interval", "0.5")
        #expect(out.exitCode == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == #"{"speed":null,"cadence":null,"distance":null,"warnings":[]}"#)
        #expect(lines[1] == #"{"speed":8,"cadence":120,"distance":4,"warnings":[]}"#)
        #expect(lines[2] == #"{"speed":4,"cadence":120,"distance":4,"warnings":[]}"#)
        #expect(lines[3] == #"{"speed":4,"cadence":120,"distance":6,"warnings":[]}"#)
    }

    /// Cycling Power revolution data: the wheel event time is in 1/2048 s, so 2 revolutions
    /// from 2048 to 4096 ticks are 1 s (4.21 m/s at 2.105 m); the crank's is 1/1024 s.
    @Test func sequenceOfCyclingPowerPackets() {
        let out = run("cycling-power-measurement", "--sequence",
                      "30 00 64 00 00010000 0008 2a00 0004",
                      "30 00 6e 00 02010000 0010 2b00 0008")
        #expect(out.exitCode == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [#"{"speed":null,"cadence":null,"distance":null,"warnings":[]}"#,
                          #"{"speed":4.21,"cadence":60,"distance":4.21,"warnings":[]}"#])
    }

    @Test func sequenceDecaysToZeroWhenStopped() {
        let packets = ["02 0000 0000", "02 0100 0004"] + Array(repeating: "02 0100 0004", count: 4)
        let out = Strapctl.run(["decode", "2a5b", "--sequence"] + packets)
        let lines = out.stdout.split(separator: "\n")
        #expect(lines[1].contains(#""cadence":60"#))
        #expect(lines.last!.contains(#""cadence":0"#))
    }

    @Test func sequenceImplausibleValueIsNullWithWarning() {
        let out = run("2a5b", "--sequence", "02 0000 0000", "02 0a00 0004")
        #expect(out.stdout.split(separator: "\n")[1] == #"{"speed":null,"cadence":null,"distance":null,"warnings":["implausibleCadence"]}"#)
    }

    @Test func sequenceBadPacketPrintsNothing() {
        let out = run("2a5b", "--sequence", "02 0000 0000", "02 00")
        #expect(out.exitCode == 1 && out.stdout.isEmpty && out.stderr.contains("packet 2"))
    }

    @Test(arguments: [["2a37", "--sequence", "00 48"], ["2a5b", "--sequence"], ["2a5b", "--sequence", "00", "--interval", "-1"],
                      ["2a5b", "--sequence", "00", "--circumference"]])
    func sequenceUsageErrors(_ args: [String]) {
        #expect(Strapctl.run(["decode"] + args).exitCode == 2)
    }

    @Test func topLevelUsage() {
        #expect(Strapctl.run([]).exitCode == 2)
        #expect(Strapctl.run(["frobnicate"]).exitCode == 2)
        #expect(Strapctl.run(["help"]).stdout.contains("decode"))
    }
}
