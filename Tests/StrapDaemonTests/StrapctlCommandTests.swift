import Foundation
import Testing
import StrapControl
import StrapModel
import StrapWire
@testable import StrapDaemon

/// strapctl's subcommands against a real router on a temp socket.
@Suite struct StrapctlCommandTests {
    func strapctl(_ h: RouterHarness, _ args: String...) -> CommandOutput {
        Strapctl.run(["--socket", h.socketPath] + args)
    }

    @Test func statusDevicesAndInfo() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.ingest(seconds: 20)
        let status = strapctl(h, "status")
        #expect(status.exitCode == 0 && status.stdout.contains("strapd test (simulate)") && status.stdout.contains("store: anchors"))
        let devices = strapctl(h, "devices")
        #expect(devices.exitCode == 0 && devices.stdout.hasPrefix("ADDRESS"))
        for identity in h.identities { #expect(devices.stdout.contains(identity.address)) }
        let address = h.identities[0].address
        let info = strapctl(h, "info", address)
        #expect(info.exitCode == 0 && info.stdout.contains("address:") && info.stdout.contains(address))
        let missing = strapctl(h, "info", "00:11:22:33:44:55")
        #expect(missing.exitCode == ExitCode.daemonError && missing.stderr == "strapctl: no device 00:11:22:33:44:55 (notFound)\n")
        let json = strapctl(h, "--json", "status")
        #expect(json.exitCode == 0 && json.stdout.hasPrefix(#"{"id":1,"ok":true,"result":{"version":"test""#))
    }

    @Test func deviceActionsAndScan() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let address = h.identities[1].address
        for (command, word) in [("pair", "paired"), ("connect", "connected"), ("reset-energy", "energy expended reset on"),
                                ("disconnect", "disconnected"), ("forget", "forgot")] {
            let out = strapctl(h, command, address)
            #expect(out.exitCode == 0 && out.stdout == "\(word) \(address)\n")
        }
        let scan = strapctl(h, "scan", "--timeout", "0.2")
        #expect(scan.exitCode == 0 && scan.stdout.contains("3 device(s) found"))
    }

    /// `scan --until` returns when the address is found, long before its timeout, and ends
    /// the daemon's scan (the one scanner is free again); without the address it waits out
    /// the timeout and says so with exit 5.
    @Test func scanUntilAnAddressEndsTheScanEarly() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let target = h.identities[2].address
        let found = strapctl(h, "scan", "--until", target.lowercased(), "--timeout", "60")
        #expect(found.exitCode == 0 && found.stdout.contains("\(target)  ") && found.stdout.hasSuffix("\(target) found\n"),
                "\(found.stdout)\(found.stderr)")
        // The cancelled scan released the daemon's scanner: a new scan is not `busy`.
        #expect(try waitFor { strapctl(h, "scan", "--timeout", "0.1").exitCode == 0 })

        let json = strapctl(h, "--json", "scan", "--until", target, "--timeout", "60")
        let events = json.stdout.split(separator: "\n").map(String.init)
        #expect(json.exitCode == 0 && events.first?.hasPrefix(#"{"id":1,"ok":true"#) == true)
        #expect(events.contains { $0.contains(#""event":"found""#) && $0.contains(target) })
        // Ended by our cancel, not by the 60 s timeout (that would be `finished`).
        #expect(events.last?.contains(#""event":"cancelled""#) == true, "\(json.stdout)")

        #expect(try waitFor { strapctl(h, "scan", "--timeout", "0.1").exitCode == 0 })
        let absent = "00:11:22:33:44:55"
        let missing = strapctl(h, "scan", "--until", absent, "--timeout", "0.5")
        #expect(missing.exitCode == ExitCode.notFound)
        #expect(missing.stderr == "strapctl: \(absent) not seen within 0.5 s (3 other device(s) found)\n")
    }

    @Test func queryAnchoredDeleteAndStats() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let stored = try h.store.append(heartRates(30))
        try h.store.sync()
        let query = strapctl(h, "query", "--type", "heartRate", "--limit", "5", "--sort", "end", "--desc")
        let lines = query.stdout.split(separator: "\n")
        #expect(query.exitCode == 0 && lines.count == 5 && lines[0].hasPrefix("#30 2023-11-14T22:13:49.000Z heartRate 89 count/min Test HR"))
        let anchored = strapctl(h, "anchored", "--anchor", "25")
        #expect(anchored.stdout.split(separator: "\n").count == 6 && anchored.stdout.hasSuffix("anchor 30\n"))
        let deleted = strapctl(h, "delete", "--uuid", stored[0].uuid.uuidString)
        #expect(deleted.stdout == "deleted 1 sample(s)\n")
        let byRange = strapctl(h, "delete", "--type", "heartRate", "--from", "2023-11-14T22:13:20Z", "--to", "2023-11-14T22:13:25Z")
        #expect(byRange.stdout == "deleted 4 sample(s)\n")  // the first was already gone
        let stats = strapctl(h, "stats", "--type", "heartRate", "--option", "maximum", "--option", "minimum",
                             "--from", "2023-11-14T22:00:00Z", "--to", "2023-11-15T00:00:00Z")
        #expect(stats.exitCode == 0 && stats.stdout.contains("n=25  maximum=89 count/min  minimum=65 count/min"))
        let collection = strapctl(h, "stats", "--type", "heartRate", "--option", "average", "--interval", "1h",
                                  "--from", "2023-11-14T22:00:00Z", "--to", "2023-11-15T00:00:00Z", "--tz", "UTC", "--by-source")
        #expect(collection.exitCode == 0 && collection.stdout.split(separator: "\n").count == 3)
        // No --anchor-date: the quarters start on the hour, not at --from.
        let quarters = strapctl(h, "stats", "--type", "heartRate", "--option", "average", "--interval", "15m",
                                "--from", "2023-11-14T22:07:31.123Z", "--to", "2023-11-14T22:40:00Z", "--tz", "UTC")
        #expect(quarters.stdout.split(separator: "\n").map { String($0.prefix(51)) } ==
                ["2023-11-14T22:00:00.000Z … 2023-11-14T22:15:00.000Z", "2023-11-14T22:15:00.000Z … 2023-11-14T22:30:00.000Z",
                 "2023-11-14T22:30:00.000Z … 2023-11-14T22:45:00.000Z"], "\(quarters.stdout)")
        let fromFrom = strapctl(h, "stats", "--type", "heartRate", "--option", "average", "--interval", "15m",
                                "--from", "2023-11-14T22:07:31Z", "--to", "2023-11-14T22:20:00Z", "--anchor-date", "2023-11-14T22:07:31Z")
        #expect(fromFrom.stdout.hasPrefix("2023-11-14T22:07:31.000Z … 2023-11-14T22:22:31.000Z"), "\(fromFrom.stdout)")
        // 60 days of minutes: more than one reply holds; strapctl follows the pages.
        let paged = strapctl(h, "stats", "--type", "heartRate", "--option", "average", "--interval", "1m",
                             "--from", "2023-11-01T00:00:00Z", "--to", "2023-12-31T00:00:00Z", "--tz", "UTC")
        let pagedLines = paged.stdout.split(separator: "\n")
        #expect(paged.exitCode == 0 && pagedLines.count == 60 * 1440, "\(pagedLines.count) lines")
        #expect(Set(pagedLines.map { $0.prefix(24) }).count == 60 * 1440)
        let invalid = strapctl(h, "stats", "--type", "heartRate", "--option", "sum", "--from", "-1d", "--to", "now")
        #expect(invalid.exitCode == ExitCode.daemonError && invalid.stderr.contains("(invalidOption)"))
    }

    /// An unknown type is strapctl's usage error (exit 2, naming --type), not the daemon's
    /// decoding message about "predicate" (exit 1).
    @Test func anUnknownTypeIsAUsageErrorNamingTheOption() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let bogus = strapctl(h, "query", "--type", "bogus")
        #expect(bogus.exitCode == ExitCode.usage)
        #expect(bogus.stderr.hasPrefix(#"strapctl: --type: unknown type "bogus"; one of: heartRate, heartbeatSeries, "#), "\(bogus.stderr)")
        #expect(!bogus.stderr.contains("predicate"))
    }

    /// A beat series reads as RR intervals and float noise is rounded, in `query` and in
    /// `anchored --follow`'s events alike; `--json` keeps the daemon's numbers.
    @Test func samplesReadAsLiveShowsThemInQueryAndAnchoredFollow() throws {
        let h = try RouterHarness()
        let t: Millis = 1_700_000_000_000
        // 850 and 816 in 1/1024 s: 830 and 797 ms.
        let beats = Sample(type: .heartbeatSeries, value: 2, start: t, device: testDevice, beats: [850.0 / 1024, 1666.0 / 1024])
        let cadence = Sample(type: .cyclingCadence, value: 84.97925311203319, start: t + 1000, device: testDevice)
        try h.store.append([beats])
        try h.store.sync()
        let query = strapctl(h, "query", "--type", "heartbeatSeries")
        #expect(query.stdout == "#1 2023-11-14T22:13:20.000Z heartbeatSeries rr=830,797ms Test HR\n", "\(query.stdout)")

        let collected = Collector()
        let sink = OutputSink(stdout: { collected.append($0) }, stderr: { collected.append($0) })
        let finished = DispatchSemaphore(value: 0)
        Thread {
            _ = Strapctl.run(["--socket", h.socketPath, "anchored", "--follow"], environment: [:], sink: sink)
            finished.signal()
        }.start()
        #expect(try waitFor { collected.text.contains("anchor 1\n") })
        try h.store.append([cadence, beats])
        try h.store.sync()
        #expect(try waitFor { collected.text.contains("+ #3 ") })
        #expect(collected.text.contains("+ #2 2023-11-14T22:13:21.000Z cyclingCadence 84.98 rpm Test HR\n"), "\(collected.text)")
        #expect(collected.text.contains("+ #3 2023-11-14T22:13:20.000Z heartbeatSeries rr=830,797ms Test HR\n"), "\(collected.text)")
        #expect(strapctl(h, "--json", "query", "--type", "cyclingCadence").stdout.contains(#""value":84.97925311203319"#))
        h.close()
        finished.wait()
    }

    @Test func liveFollowsUntilTheDaemonGoesAway() throws {
        let h = try RouterHarness()
        let collected = Collector()
        let sink = OutputSink(stdout: { collected.append($0) }, stderr: { collected.append($0) })
        let finished = DispatchSemaphore(value: 0)
        let code = Mutex<Int32?>(nil)
        Thread {
            code.withLock { $0 = Strapctl.run(["--socket", h.socketPath, "live", "--type", "heartRate"], environment: [:], sink: sink) }
            finished.signal()
        }.start()
        #expect(try waitFor { h.router.liveSubscriberCount == 1 })
        try h.ingest(seconds: 10)
        #expect(try waitFor { collected.text.contains(" heartRate ") })
        h.close()
        finished.wait()
        #expect(code.withLock { $0 } == ExitCode.unreachable)
        #expect(collected.text.contains("strapd closed the connection") || collected.text.contains("strapd is shutting down"))
        #expect(!collected.text.contains("cyclingSpeed"))
    }
}

import Synchronization

final class Collector: Sendable {
    private let buffer = Mutex("")
    func append(_ s: String) { buffer.withLock { $0 += s } }
    var text: String { buffer.withLock { $0 } }
}
