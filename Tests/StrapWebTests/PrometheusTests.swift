import Foundation
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// /metrics as Prometheus itself reads it (docs/web.md, "Metrics"): Prometheus' own checker
/// (`promtool check metrics`: the text format and its naming lints) and a real Prometheus
/// server scraping strapd-web with the token. Both tools come from Debian's `prometheus`
/// package; without them these tests fail (PrometheusToolError.missing), they do not skip.
@Suite(.serialized) struct PrometheusTests {
    static let heartRate = "strapd_device_heart_rate_beats_per_minute"

    /// Every family a simulating strapd without MQTT yields (the MQTT ones need a broker;
    /// MQTTDeliveryProcessTests covers status.mqtt itself).
    static let families = [
        "strapd_up", "strapd_info", "strapd_start_time_seconds", "strapd_sensors_connected", "strapd_sensors_known",
        "strapd_sample_rate_per_second", "strapd_clients", "strapd_live_subscribers", "strapd_followers", "strapd_pipeline_events_total",
        "strapd_pipeline_samples_total", "strapd_pipeline_rejected_total", "strapd_pipeline_dropped_total", "strapd_samples_total", "strapd_store_bytes",
        "strapd_store_oldest_anchor", "strapd_store_latest_anchor", "strapd_store_segments", "strapd_store_damaged_segments",
        "strapd_degraded", "strapd_device_connected", "strapd_device_battery_ratio", "strapd_device_rssi_dbm",
        "strapd_device_notifications_total", heartRate, "strapd_workout_sessions_open",
        "strapd_web_live_stream_open", "strapd_web_event_clients",
    ]

    /// /metrics once the simulated strap's heart rate is in it (the live relay has its first
    /// sample), polled for up to 30 s.
    static func scrapeWithHeartRate(_ web: WebHarness) throws -> String {
        var body = ""
        for _ in 0..<150 {
            let reply = try RawHTTP.request(port: web.port, path: "/metrics", host: web.host, headers: [web.bearer])
            body = reply.body
            if reply.status == 200, body.contains("\n\(heartRate){") { return body }
            usleep(200_000)
        }
        Issue.record("no \(heartRate) sample within 30 s:\n\(body)\nstrapd-web: \(web.log("web"))")
        return body
    }

    /// Rule: what strapd-web serves is valid exposition by Prometheus' own parser and lints
    /// (HELP and TYPE, `_total` on counters only, base units), with every family documented.
    @Test func promtoolAcceptsTheScrapedMetrics() throws {
        let web = try WebHarness()
        let text = try Self.scrapeWithHeartRate(web)
        let check = try PrometheusTools.checkMetrics(text)
        #expect(check.status == 0, "promtool check metrics (exit \(check.status)):\n\(check.output)\n\(text)")
        for family in Self.families {
            #expect(text.contains("# TYPE \(family) "), "\(family) missing:\n\(text)")
        }
        // Samples by type carry the type as a label (the simulated strap's heart rate among them).
        #expect(text.contains("\nstrapd_samples_total{type=\"heartRate\"} "), "no heart-rate samples by type:\n\(text)")
        web.stop()
    }

    /// Rule: a real Prometheus scrapes /metrics with the bearer token under its own Host
    /// header, and its query API answers the simulated strap's heart rate, labelled with the
    /// strap's address and name.
    @Test func aRealPrometheusScrapesTheSimulatedStrapsHeartRate() async throws {
        let web = try WebHarness()
        let prometheus = try PrometheusServer(scraping: web.host, tokenFile: web.webState + "/" + AccessToken.fileName,
                                              directory: web.directory + "/prometheus")
        defer { prometheus.stop() }
        var series: [(labels: [String: String], value: Double)] = []
        for _ in 0..<150 where series.isEmpty {
            series = try prometheus.query(Self.heartRate).filter { $0.labels["name"] == "Sim HR 0" }
            if series.isEmpty { usleep(200_000) }
        }
        let strap = try #require(series.first, """
            Prometheus has no \(Self.heartRate){name="Sim HR 0"} within 30 s
            targets: \(prometheus.targets)
            prometheus: \(prometheus.log)
            strapd-web: \(web.log("web"))
            """)
        #expect(series.count == 1)
        #expect(strap.labels["job"] == "strapd-web" && strap.labels["address"] == "5E:1A:00:00:48:00", "\(strap.labels)")
        #expect((30...230).contains(strap.value), "heart rate \(strap.value)")
        // And it is strapd's: one of the strap's heart rates strapd stored (asked through
        // StrapKit; polled, as the store is read up to its last sync). Awaited, not through
        // DaemonLink: its blocking wait is for libmicrohttpd's threads, and on the test's
        // cooperative thread it could starve the task it waits for while other suites block
        // the pool's other threads (CI timed it out at 5 s).
        let kit = StrapStore(socket: web.socket)
        var stored: [Double] = []
        for _ in 0..<50 where !stored.contains(strap.value) {
            let result = try await kit.request("samples.query", ["types": .array([.string("heartRate")]), "limit": .int(120),
                                                            "predicate": .object(["device": .object(["id": .string("5E:1A:00:00:48:00")])]),
                                                            "sort": .string("end"), "descending": .bool(true)])
            if case .array(let samples)? = result["samples"] {
                stored = samples.compactMap { sample -> Double? in
                    guard case .object(let o) = sample else { return nil }
                    switch o["value"] { case .int(let i)?: return Double(i); case .double(let d)?: return d; default: return nil }
                }
            }
            if !stored.contains(strap.value) { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(stored.contains(strap.value), "Prometheus has \(strap.value) bpm; strapd stored \(stored)")
        // The scrape itself succeeded (not only one sample slipping through): up is 1.
        let up = try prometheus.query(#"up{job="strapd-web"}"#)
        #expect(up.map(\.value) == [1], "up: \(up); targets: \(prometheus.targets)")
        prometheus.stop()
        web.stop()
    }

    /// Rule: with `[mqtt]` configured the publisher's state and lag are there, one-hot over
    /// the states, its counters `_total`, and promtool still passes. The broker is a port
    /// nothing listens on: the publisher waits between attempts while the store grows, so
    /// the lag is the store's own items (MQTTDeliveryProcessTests covers a real broker).
    @Test func mqttStateAndLagAreExposed() throws {
        let port = PrometheusTools.freeLoopbackPort()
        let web = try WebHarness(strapdArguments: ["--set", "mqtt.host=127.0.0.1", "--set", "mqtt.port=\(port)"])
        var text = ""
        var lag: Double?
        for _ in 0..<150 {
            text = try RawHTTP.request(port: web.port, path: "/metrics", host: web.host, headers: [web.bearer]).body
            lag = text.split(separator: "\n").first { $0.hasPrefix("strapd_mqtt_lag_items ") }
                .flatMap { Double($0.split(separator: " ")[1]) }
            if let lag, lag > 0 { break }
            usleep(200_000)
        }
        #expect(lag.map { $0 > 0 } == true, "no MQTT lag within 30 s:\n\(text)\nstrapd: \(web.log("strapd"))")
        let states = text.split(separator: "\n").filter { $0.hasPrefix("strapd_mqtt_state{") }
        #expect(states.count == 4 && states.filter { $0.hasSuffix(" 1") }.count == 1, "\(states)")
        #expect(!states.contains { $0.contains(#"state="connected"} 1"#) }, "connected to nothing: \(states)")
        for family in ["strapd_mqtt_lag_seconds", "strapd_mqtt_published_total", "strapd_mqtt_acknowledged_total",
                       "strapd_mqtt_connects_total"] {
            #expect(text.contains("# TYPE \(family) "), "\(family) missing:\n\(text)")
        }
        let check = try PrometheusTools.checkMetrics(text)
        #expect(check.status == 0, "promtool check metrics (exit \(check.status)):\n\(check.output)\n\(text)")
        web.stop()
    }

    /// Rule: label values are escaped. A sensor advertises whatever name it likes; one with a
    /// double quote, a backslash and a line feed must yield one valid sample line per series.
    /// Rendered from a snapshot: neither the simulator nor a replay lets a test name a device
    /// in devices.list (a replay's names reach the live samples only).
    @Test func aHostileDeviceNameStaysValidExposition() throws {
        let name = "Evil \"quote\" back\\slash\nsecond line"
        let address = "5E:1A:00:00:99:00"
        let device: JSONObject = ["address": .string(address), "name": .string(name), "connected": .bool(true),
                                  "battery": .int(50), "rssi": .int(-61), "notifications": .int(7)]
        let text = PrometheusMetrics.render(.init(status: nil, devices: [device], sessions: [],
                                                  heartRates: [address: .init(name: name, beatsPerMinute: 72)],
                                                  liveStreamOpen: true, eventClients: 0))
        let check = try PrometheusTools.checkMetrics(text)
        #expect(check.status == 0, "promtool check metrics (exit \(check.status)):\n\(check.output)\n\(text)")
        let escaped = #"name="Evil \"quote\" back\\slash\nsecond line""#
        #expect(text.contains("\(Self.heartRate){address=\"\(address)\",\(escaped)} 72\n"), "\(text)")
        #expect(text.contains("strapd_device_rssi_dbm{address=\"\(address)\",\(escaped)} -61\n"), "\(text)")
        WebServerTests.expectExpositionFormat(text)
    }
}
