import Foundation
import Testing
import StrapModel

/// `SampleJSON`, the hand-written encoder of the live and anchored paths, against the shape
/// `Sample`'s Codable conformance defines (docs/protocol.md#shapes).
@Suite struct SampleJSONTests {
    static let plain = Device(id: "dev-1", address: "A0:00:00:00:00:01", name: "Strap")
    static let full = Device(id: "dev-2", address: "A0:00:00:00:00:02", name: "Polar \"H10\" \\ left\n",
                             manufacturer: "Polar Electro Oy", model: "H10", serial: nil, firmware: "5.0.0")

    static let samples: [Sample] = [
        Sample(type: .heartRate, value: 72, start: 1_764_633_600_123, device: plain),
        Sample(type: .cyclingCadence, value: 88.5, start: 1_764_633_600_000, end: 1_764_633_601_000, device: full,
               metadata: ["wheel": "2105", "a": "\u{01}"]),
        Sample(type: .heartbeatSeries, value: 2, start: -1, device: full, beats: [0.8125, 1.6]),
    ]

    @Test(arguments: samples)
    func encodesWhatCodableDecodesBack(sample: Sample) throws {
        let live = SampleJSON.bytes(sample, durable: false)
        let decoded = try JSONDecoder().decode(Sample.self, from: Data(live))
        #expect(decoded.type == sample.type && decoded.value == sample.value)
        #expect(decoded.start == sample.start && decoded.end == sample.end)
        #expect(decoded.device == sample.device && decoded.metadata == sample.metadata && decoded.beats == sample.beats)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(live)) as? [String: Any])
        #expect(object["uuid"] == nil && object["anchor"] == nil, "a live sample has neither")
        let durable = try JSONSerialization.jsonObject(with: Data(SampleJSON.bytes(sample))) as? [String: Any]
        #expect(durable?["uuid"] as? String == sample.uuid.uuidString)
    }

    /// The device object is made once per `Device`; it must be the one Codable writes, key for
    /// key, with absent optionals left out.
    @Test(arguments: [plain, full])
    func deviceJSONIsCodablesObject(device: Device) throws {
        let mine = try #require(try JSONSerialization.jsonObject(with: Data(device.json)) as? [String: String])
        let codable = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(device)) as? [String: String])
        #expect(mine == codable)
        #expect(try JSONDecoder().decode(Device.self, from: Data(device.json)) == device)
        #expect(mine["serial"] == nil)
    }
}
