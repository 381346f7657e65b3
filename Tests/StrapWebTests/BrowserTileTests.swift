import Foundation
import Testing
import StrapKit
import StrapWire

/// The dashboard tiles' figures in a real browser (docs/web.md, "The dashboard's tiles"),
/// judged against what strapd stored: dashboard.py's `figures` mode reads what the page shows,
/// this side works out by hand what each shown figure must be for some sample strapd sent.
extension BrowserTests {
    /// The default athlete's zones in the tile test: 30, 40, 45, 50, 55 % of 200 bpm, narrow
    /// and low so the simulated strap's heart rate (about 80–130 at the start) lands in
    /// zones above 0, whose colours and labels differ.
    static let zonePercents = [30, 40, 45, 50, 55, 100]
    static let zoneBounds: [Double] = [60, 80, 90, 100, 110]

    /// Rule: with strapd's three simulated sensors (HR, CSC, RSC) the strap's tile shows its
    /// heart rate in the zone the athlete's zones give that number (zone class and `Zn`), its
    /// last RR interval as strapd stored it and an RMSSD; the CSC tile a speed in km/h and a
    /// cadence in rpm that strapd stored, and no pace; the RSC tile a speed, a cadence per
    /// minute and a pace in min/km, each from a stored sample. Without the figures in
    /// strapd-web's events, or without the page's rows, this fails.
    @Test func theTilesShowZoneRRSpeedCadenceAndPaceThatStrapdSent() async throws {
        // The demo scenario rides the bike from the start: the default one may begin stopped or
        // coasting for 30–60 s, and then no cadence reaches the tile while the page is read.
        let web = try WebHarness(sensors: 3, strapdArguments: ["--simulate-scenario", "demo"])
        defer { web.stop() }
        try await LiveFiguresTests.setZones(web, percentOf200: Self.zonePercents)
        let addresses = try await Self.addressesByName(web)
        let hr = try #require(addresses.keys.first { $0.hasPrefix("Sim HR") }, "\(addresses)")
        let csc = try #require(addresses.keys.first { $0.hasPrefix("Sim CSC") }, "\(addresses)")
        let rsc = try #require(addresses.keys.first { $0.hasPrefix("Sim RSC") }, "\(addresses)")
        let report = try await Browser.run(.figures, web, screenshot: "dashboard-figures.png",
                                           ["\(hr)=zone,rr,rmssd", "\(csc)=speed,cadence", "\(rsc)=speed,cadence,pace"])
        let tiles = Dictionary((report["tiles"] as? [[String: Any]] ?? []).compactMap { t in (t["name"] as? String).map { ($0, t) } },
                               uniquingKeysWith: { a, _ in a })
        // The favicon a browser asks for by itself is a 404: strapd-web serves none.
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")

        // The strap: zone of the shown number, RR among the stored series' intervals, an RMSSD.
        let strap = try #require(tiles[hr], "no tile for \(hr): \(tiles.keys.sorted())")
        let bpm = try #require(Int(strap["hr"] as? String ?? ""), "\(hr) shows '\(strap["hr"] ?? "")'")
        let zone = Self.zoneBounds.filter { Double(bpm) >= $0 }.count
        #expect((strap["readingClass"] as? String)?.split(separator: " ").contains("z\(zone)") == true,
                "\(bpm) bpm is zone \(zone); the page's class is '\(strap["readingClass"] ?? "")'")
        #expect(strap["zone"] as? String == (zone > 0 ? "Z\(zone)" : ""), "label '\(strap["zone"] ?? "")' for zone \(zone)")
        let rr = try #require(Self.figure(strap, "rr").flatMap { Double($0) }, "\(hr): RR \(Self.figure(strap, "rr") ?? "not shown")")
        let intervals = await Self.stored(web, "heartbeatSeries", address: addresses[hr]!) { samples in
            Self.intervals(samples).contains { abs($0 - rr) <= 0.5 }
        }
        #expect(Self.intervals(intervals).contains { abs($0 - rr) <= 0.5 }, "RR \(rr) ms is no interval strapd stored")
        let rmssd = Self.figure(strap, "rmssd").flatMap { Int($0) }
        #expect(rmssd.map { $0 >= 0 } == true, "RMSSD '\(Self.figure(strap, "rmssd") ?? "not shown")'")
        #expect(Self.figure(strap, "speed") == nil && Self.figure(strap, "pace") == nil, "a strap shows no speed or pace")

        // Speed and cadence of both sensors, pace of the foot pod.
        for (name, kind, cadenceUnit) in [(csc, "cycling", "rpm"), (rsc, "running", "/min")] {
            let tile = try #require(tiles[name], "no tile for \(name)")
            #expect((tile["hr"] as? String) == "–", "\(name) measures no heart rate")
            let address = addresses[name]!
            let kmh = try #require(Self.figure(tile, "speed").flatMap { Double($0) }, "\(name): speed \(Self.figure(tile, "speed") ?? "not shown")")
            let speeds = await Self.values(web, kind + "Speed", address: address) { $0.contains { abs($0 * 3.6 - kmh) <= 0.05 + 1e-9 } }
            #expect(speeds.contains { abs($0 * 3.6 - kmh) <= 0.05 + 1e-9 }, "\(name): \(kmh) km/h; strapd stored \(speeds.prefix(20)) m/s")
            let cadence = try #require(Self.figure(tile, "cadence").flatMap { Double($0) }, "\(name): cadence \(Self.figure(tile, "cadence") ?? "not shown")")
            let cadences = await Self.values(web, kind + "Cadence", address: address) { $0.contains { abs($0 - cadence) <= 0.5 } }
            #expect(cadences.contains { abs($0 - cadence) <= 0.5 }, "\(name): cadence \(cadence); strapd stored \(cadences.prefix(20))")
            #expect(Self.unit(tile, "cadence") == cadenceUnit, "\(name): cadence unit '\(Self.unit(tile, "cadence") ?? "")'")
            if kind == "cycling" {
                #expect(Self.figure(tile, "pace") == nil, "\(name): a cyclist gets no pace")
                continue
            }
            let paceText = try #require(Self.figure(tile, "pace"), "\(name): no pace")
            let parts = paceText.split(separator: ":").compactMap { Int($0) }
            try #require(parts.count == 2 && parts[1] < 60, "\(name): pace '\(paceText)' is not m:ss")
            let seconds = Double(parts[0] * 60 + parts[1])
            #expect(speeds.contains { $0 > 0 && abs(1000 / $0 - seconds) <= 0.5 + 1e-9 }, "\(name): pace \(paceText) /km is no stored speed's")
        }
        Browser.expectScreenshot(report, "dashboard-figures.png")
    }

    /// A shown figure's value; nil when its row is hidden.
    static func figure(_ tile: [String: Any], _ key: String) -> String? {
        guard let row = (tile["figures"] as? [String: Any])?[key] as? [String: Any], row["shown"] as? Bool == true else { return nil }
        return row["value"] as? String
    }

    static func unit(_ tile: [String: Any], _ key: String) -> String? {
        ((tile["figures"] as? [String: Any])?[key] as? [String: Any])?["unit"] as? String
    }

    /// The RR intervals (ms) of stored heartbeat series: differences of their beats.
    static func intervals(_ samples: [JSONObject]) -> [Double] {
        samples.flatMap { sample -> [Double] in
            guard case .array(let beats)? = sample["beats"] else { return [] }
            let seconds = beats.compactMap { b -> Double? in
                switch b { case .double(let d): d; case .int(let i): Double(i); default: nil }
            }
            return zip([0] + seconds, seconds).map { ($1 - $0) * 1000 }
        }
    }

    /// The values of a device's stored samples of `type`, as `stored`.
    static func values(_ web: WebHarness, _ type: String, address: String, until: ([Double]) -> Bool) async -> [Double] {
        let numbers = { (samples: [JSONObject]) in
            samples.compactMap { o -> Double? in
                switch o["value"] { case .int(let i)?: Double(i); case .double(let d)?: d; default: nil }
            }
        }
        return numbers(await stored(web, type, address: address) { until(numbers($0)) })
    }

    /// A device's stored samples of `type`, newest first, polled (up to 10 s) until `until`
    /// holds: the store trails the live stream the page saw by up to its sync interval.
    static func stored(_ web: WebHarness, _ type: String, address: String, until: ([JSONObject]) -> Bool) async -> [JSONObject] {
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        var samples: [JSONObject] = []
        for _ in 0..<50 {
            let result = try? await store.request("samples.query", ["types": .array([.string(type)]), "limit": .int(1000),
                                                                    "predicate": .object(["device": .object(["id": .string(address)])]),
                                                                    "sort": .string("end"), "descending": .bool(true)])
            if case .array(let items)? = result?["samples"] {
                samples = items.compactMap { if case .object(let o) = $0 { o } else { nil } }
            }
            if until(samples) { break }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return samples
    }
}
