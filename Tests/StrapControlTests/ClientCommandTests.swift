import Foundation
import Testing
import StrapWire
@testable import StrapControl

/// strapctl's daemon commands without a daemon: argument handling, exit codes, messages,
/// and the live view's rendering.
@Suite struct ClientCommandTests {
    let missing = "/tmp/strapctl-test-\(UUID().uuidString.prefix(8))/none.sock"

    @Test func noDaemonIsExitThreeWithAClearMessage() {
        for command in [["status"], ["devices"], ["query", "--type", "heartRate"], ["live"], ["pair", "AA:BB"]] {
            let out = Strapctl.run(["--socket", missing] + command)
            #expect(out.exitCode == ExitCode.unreachable, "\(command)")
            #expect(out.stderr == "strapctl: strapd is not running (no socket at \(missing))\n")
        }
    }

    @Test func socketComesFromTheEnvironmentUnlessGiven() {
        let env = Strapctl.run(["status"], environment: ["STRAPD_SOCKET": missing])
        #expect(env.stderr.contains(missing))
        let flag = Strapctl.run(["status", "--socket=/tmp/other-\(UUID().uuidString.prefix(4)).sock"], environment: ["STRAPD_SOCKET": missing])
        #expect(flag.stderr.contains("/tmp/other-"))
    }

    @Test(arguments: [["query", "--limit", "0"], ["query", "--sort", "middle"], ["query", "--from", "yesterday"], ["stats", "--option", "average"],
                      ["stats", "--type", "heartRate"], ["stats", "--type", "heartRate", "--option", "sum", "--interval", "3x"],
                      ["stats", "--type", "heartRate", "--option", "sum", "--tz", "UTC"], ["delete"], ["delete", "--uuid", "U", "--type", "heartRate"],
                      ["pair"], ["info", "A", "B"], ["scan", "--timeout", "-1"], ["scan", "--until", "C0:DA:E0:00:01"],
                      ["scan", "--until", "C0:DA:E0:00:00:0G"], ["scan", "--until"], ["live", "--color"], ["frobnicate"], [], ["--socket"]])
    func usageErrorsAreExitTwo(_ args: [String]) {
        let out = Strapctl.run(["--socket", missing] + args)
        #expect(out.exitCode == ExitCode.usage)
        #expect(out.stderr.contains("usage: strapctl"))
    }

    @Test func timeArguments() throws {
        let now: Int64 = 1_800_000_000_000
        #expect(TimeArgument.parse("now", now: now) == now)
        #expect(TimeArgument.parse("-15m", now: now) == now - 900_000)
        #expect(TimeArgument.parse("-2h", now: now) == now - 7_200_000)
        #expect(TimeArgument.parse("-1d", now: now) == now - 86_400_000)
        #expect(TimeArgument.parse("2026-11-29T20:00:00Z", now: now) == 1_795_982_400_000)
        #expect(TimeArgument.parse("soon", now: now) == nil)
        #expect(try SampleCommands.intervalJSON("15m") == ["minutes": .int(15)])
        #expect(try SampleCommands.intervalJSON("1mo") == ["months": .int(1)])
        #expect(try SampleCommands.intervalJSON("1w") == ["weeks": .int(1)])
    }

    @Test func queryOptionsBecomeOnePredicate() throws {
        let a = try Arguments(["--type", "heartRate", "--type", "batteryLevel", "--from", "2026-01-01T00:00:00Z", "--device", "H10"],
                              options: ["type", "from", "to", "device"], flags: [])
        let p = try SampleCommands.predicate(a, now: 0)
        #expect(p.map(JSONWriter.string) ==
                #"{"and":[{"types":["heartRate","batteryLevel"]},{"time":{"from":"2026-01-01T00:00:00.000Z"}},{"device":{"id":"H10"}}]}"#)
    }

    func event(_ json: String) -> (String, JSONObject) {
        guard case .object(let o) = try! JSONParser.parse(Array(json.utf8)) else { fatalError() }
        return (o.string("event")!, o.object("data")!)
    }

    @Test func liveViewPipedLinesAndTerminalFrame() {
        var view = LiveView()
        let device = #""device":{"id":"A","address":"AA:00","name":"Strap"}"#
        var lines: [String?] = []
        for t in 0..<60 {
            let (k, d) = event(#"{"id":1,"event":"sample","data":{"type":"heartRate","value":\#(60 + t),"unit":"count/min","start":"2026-11-29T20:00:\#(String(format: "%02d", t)).000Z",\#(device)}}"#)
            lines.append(view.apply(k, d))
        }
        let (k1, d1) = event(#"{"id":1,"event":"sample","data":{"type":"heartbeatSeries","beats":[0.8,1.62],"unit":"s","start":"2026-11-29T20:00:59.000Z",\#(device)}}"#)
        lines.append(view.apply(k1, d1))
        let (kr, dr) = event(#"{"id":1,"event":"sample","data":{"type":"heartbeatSeries","beats":[1.0,1.5],"unit":"s","start":"2026-11-29T20:00:59.500Z",\#(device)}}"#)
        _ = view.apply(kr, dr)
        let (k2, d2) = event(#"{"id":1,"event":"device","data":{"address":"AA:00","change":"battery","battery":87}}"#)
        lines.append(view.apply(k2, d2))
        let (k3, d3) = event(#"{"id":1,"event":"sample","data":{"type":"cyclingSpeed","value":8.25,"unit":"m/s","start":"2026-11-29T20:00:59.000Z",\#(device)}}"#)
        lines.append(view.apply(k3, d3))
        let (k5, d5) = event(#"{"id":1,"event":"device","data":{"address":"AA:00","change":"sensorLocation","location":"left crank"}}"#)
        #expect(view.apply(k5, d5) == "AA:00 sensorLocation left crank")
        let (k6, d6) = event(#"{"id":1,"event":"device","data":{"address":"AA:00","change":"energySaturated"}}"#)
        #expect(view.apply(k6, d6) == "AA:00 energySaturated")
        let (k4, d4) = event(#"{"id":1,"event":"dropped","data":{"count":12}}"#)
        lines.append(view.apply(k4, d4))
        #expect(lines[0] == "2026-11-29T20:00:00.000Z AA:00 heartRate 60 count/min")
        #expect(lines[60] == "2026-11-29T20:00:59.000Z AA:00 heartbeatSeries rr=800,820ms")
        #expect(lines.last == "dropped 12 events (too slow to read)")
        let frame = view.render()
        #expect(frame[0] == "Strap [AA:00]  battery 87%")
        #expect(frame[1] == "  ♥ 119 bpm  RR 800 820 1000 500 ms  speed 8.25 m/s")
        #expect(frame[2].count == 32 && frame[2].hasSuffix("█") && frame[2].contains("▁"))
        #expect(frame.last == "(12 events dropped: terminal too slow)")
    }

    @Test func liveViewShowsRSSIOrWhyNot() {
        var view = LiveView()
        let (k1, d1) = event(#"{"id":1,"event":"device","data":{"address":"AA:00","change":"rssi","rssi":null,"rssiUnavailable":"not permitted (CAP_NET_RAW missing)"}}"#)
        #expect(view.apply(k1, d1) == "AA:00 rssi n/a (not permitted (CAP_NET_RAW missing))")
        #expect(view.render()[0] == "AA:00 [AA:00]  RSSI n/a (not permitted (CAP_NET_RAW missing))")
        let (k2, d2) = event(#"{"id":1,"event":"device","data":{"address":"AA:00","change":"rssi","rssi":-64}}"#)
        #expect(view.apply(k2, d2) == "AA:00 rssi -64 dBm")
        #expect(view.render()[0] == "AA:00 [AA:00]  RSSI -64 dBm")
    }

    @Test func redrawMovesUpOverThePreviousFrame() {
        let (sink, collected) = OutputSink.collecting(isTerminal: true)
        var drawn = LiveCommand.redraw(["a", "b"], previous: 0, sink)
        drawn = LiveCommand.redraw(["c"], previous: drawn, sink)
        #expect(drawn == 2)
        #expect(collected().0 == "\u{1B}[2Ka\n\u{1B}[2Kb\n" + "\u{1B}[2F\u{1B}[2Kc\n\u{1B}[2K\n")
    }

    @Test func sparklineScalesTheMinute() {
        let history: [(Int64, Double)] = (0..<30).map { (Int64($0) * 2000 + 1000, Double($0)) }
        let line = LiveView.sparkline(history, end: 60_000)
        #expect(line.count == 30 && line.first == "▁" && line.last == "█")
        #expect(LiveView.sparkline([], end: 0) == "")
    }
}

@Suite struct ClientErrorTests {
    @Test func messagesAndExitCodes() {
        #expect(ClientError.notRunning("/x.sock").description == "strapd is not running (no socket at /x.sock)")
        #expect(ClientError.notRunning("/x.sock").exitCode == ExitCode.unreachable)
        #expect(ClientError.permissionDenied("/x.sock").exitCode == ExitCode.notAuthorized)
        #expect(ClientError.shuttingDown.exitCode == ExitCode.unreachable && ClientError.closed.exitCode == ExitCode.unreachable)
    }
}
