import Foundation
import StrapModel
import StrapMQTTProtocol
import Testing
import ThirdPartyReaders

/// Home Assistant discovery (docs/mqtt.md#home-assistant): every config strapd can publish,
/// checked against Home Assistant's own rules (Tests/Fixtures/mqtt/check_ha_discovery.py,
/// written from HA's schema and unit tables) and pinned by a snapshot of topics and payloads.
@Suite struct HomeAssistantDiscoveryTests {
    static let fixtures = ThirdPartyReaders.root.appendingPathComponent("Tests/Fixtures/mqtt")

    /// A heart-rate strap with its DIS strings, a speed/cadence sensor without, a foot pod.
    static func configs() -> [String: String] {
        let topics = MQTTTopics(prefix: "strapd/gym1")
        let ha = HomeAssistantDiscovery(topics: topics, prefix: "homeassistant", softwareVersion: "0.1.0")
        let strap = HomeAssistantDiscovery.Identity(address: "C0:FF:EE:00:00:01", name: "Polar H10 A1B2", manufacturer: "Polar Electro Oy",
                                                    model: "H10", firmware: "5.0.0", serial: "A1B2C3D4")
        let bike = HomeAssistantDiscovery.Identity(address: "C0:FF:EE:00:00:02", name: "Wahoo CADENCE")
        let pod = HomeAssistantDiscovery.Identity(address: "C0:FF:EE:00:00:03", name: "Stryd")
        var out: [String: String] = [:]
        func add(_ e: HomeAssistantDiscovery.Entity, _ d: HomeAssistantDiscovery.Identity, _ source: QuantityType? = nil) {
            out[ha.configTopic(e, address: d.address)] = String(decoding: ha.config(e, device: d, source: source), as: UTF8.self)
        }
        for e in [HomeAssistantDiscovery.Entity.heartRate, .energy, .battery, .contact, .connected, .rssi, .workout] { add(e, strap) }
        add(.speed, bike, .cyclingSpeed); add(.cadence, bike, .cyclingCadence); add(.distance, bike, .cyclingDistance)
        add(.battery, bike); add(.connected, bike); add(.workout, bike)
        add(.speed, pod, .runningSpeed); add(.cadence, pod, .runningCadence); add(.distance, pod, .runningDistance)
        return out
    }

    @Test func everyConfigIsOneHomeAssistantAccepts() throws {
        let python = try ThirdPartyReaders.requirePython()
        let configs = Self.configs()
        let file = NSTemporaryDirectory() + "strapd-ha-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try JSONSerialization.data(withJSONObject: configs, options: [.sortedKeys]).write(to: URL(fileURLWithPath: file))
        let r = try ThirdPartyReaders.run(python, [Self.fixtures.appendingPathComponent("check_ha_discovery.py").path, file])
        #expect(r.status == 0, "Home Assistant would refuse:\n\(r.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(summary?["entities"] as? Int == configs.count)
        // The checker itself refuses what HA refuses (so a pass above means something).
        var broken = configs
        let key = try #require(configs.keys.first { $0.hasSuffix("_battery/config") })
        broken[key] = configs[key]!.replacingOccurrences(of: #""unit_of_measurement":"%""#, with: #""unit_of_measurement":"V""#)
        try JSONSerialization.data(withJSONObject: broken).write(to: URL(fileURLWithPath: file))
        let refused = try ThirdPartyReaders.run(python, [Self.fixtures.appendingPathComponent("check_ha_discovery.py").path, file])
        #expect(refused.status == 1 && refused.stderr.contains(key))
    }

    /// Topics and payloads are a published interface (docs/mqtt.md): a change shows here.
    @Test func topicsAndPayloadsMatchTheSnapshot() throws {
        let snapshot = Self.fixtures.appendingPathComponent("discovery-snapshot.json")
        let now = try JSONSerialization.data(withJSONObject: Self.configs().mapValues { try? JSONSerialization.jsonObject(with: Data($0.utf8)) },
                                             options: [.sortedKeys, .prettyPrinted])
        let text = String(decoding: now, as: UTF8.self) + "\n"
        guard let recorded = try? String(contentsOf: snapshot, encoding: .utf8) else {
            try text.write(to: snapshot, atomically: true, encoding: .utf8)
            Issue.record("no snapshot yet: recorded \(snapshot.path); review and commit it")
            return
        }
        #expect(recorded == text, "discovery output changed; if intended, delete \(snapshot.lastPathComponent) and rerun to record it")
    }

    @Test func sampleTypesMapToEntities() {
        #expect(HomeAssistantDiscovery.entity(for: .heartRate) == .heartRate)
        #expect(HomeAssistantDiscovery.entity(for: .runningCadence) == .cadence)
        #expect(HomeAssistantDiscovery.entity(for: .energyExpended) == .energy)
        #expect(HomeAssistantDiscovery.entity(for: .heartbeatSeries) == nil, "RR intervals are no HA state")
    }
}
