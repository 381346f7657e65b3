import Foundation
import StrapModel
import StrapWire
import Testing
@testable import StrapKit

/// The byte scanner against the general parser on the same pages, written by the daemon's own
/// sample writer: whatever path reads an item, the result is the same.
@Suite struct SampleScannerTests {
    let strap = Device(id: "5E:1A:00:00:48:00", address: "5E:1A:00:00:48:00", name: "Sim \"HR\" 0", manufacturer: "strapd simulator")
    let pod = Device(id: "5E:1A:00:00:5B:00", address: "5E:1A:00:00:5B:00", name: "pod")

    func page(_ samples: [Sample], anchor: UInt64) -> [UInt8] {
        var out = Array(#"{"id":7,"ok":true,"result":{"added":["#.utf8)
        for (n, s) in samples.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            SampleJSON.append(s, into: &out)
        }
        out.append(contentsOf: #"],"deleted":[],"anchor":\#(anchor)}}"#.utf8)
        return out
    }

    func readBoth(_ line: [UInt8]) throws -> (scanned: AnchoredQuery.Update, parsed: AnchoredQuery.Update) {
        let prefix = try #require(LinePrefix(line))
        let range = prefix.valueStart..<(line.count - 1)
        var scanned = AnchoredQuery.Update(added: [], deleted: [], newAnchor: 0)
        var parsed = scanned
        var d1 = WireDecoder(), d2 = WireDecoder()
        try AnchoredQuery.read(page: .bytes(line, range), into: &scanned, decoder: &d1)
        try AnchoredQuery.read(page: try Body.bytes(line, range).object(), into: &parsed, decoder: &d2)
        return (scanned, parsed)
    }

    @Test func awkwardSamplesReadTheSameEitherWay() throws {
        let t: Millis = 1_700_000_000_123
        let samples = [
            Sample(type: .heartRate, value: 72, start: t, device: strap, uuid: UUID(), anchor: 5),
            Sample(type: .cyclingSpeed, value: 4.2100000000000001, start: t, end: t + 250, device: pod, uuid: UUID(), anchor: 6),
            Sample(type: .activeEnergy, value: 1e-7, start: t, device: pod, uuid: UUID(), anchor: 7),
            Sample(type: .runningSpeed, value: -0.5, start: -86_400_001, device: pod, uuid: UUID(), anchor: 8),
            Sample(type: .cyclingDistance, value: 123456789.125, start: t, device: pod, metadata: ["note": "a \"quoted\"\nline", "k": "v"],
                   uuid: UUID(), anchor: 9),
            Sample(type: .heartbeatSeries, value: 3, start: t, end: t + 2000, device: strap, beats: [0.5, 1.0009765625, 1.8],
                   uuid: UUID(), anchor: 10),
            Sample(type: .batteryLevel, value: 1e300, start: t, device: strap, uuid: UUID(), anchor: 11),
        ]
        let (scanned, parsed) = try readBoth(page(samples, anchor: 12))
        #expect(scanned.added == parsed.added)
        #expect(scanned.added.compactMap(\.sample) == samples)
        #expect(scanned.newAnchor == 12 && parsed.newAnchor == 12)
        // Every sample of one device shares one device object, whichever path read it.
        let strapSamples = scanned.addedSamples.filter { $0.device.id == strap.id }
        #expect(strapSamples.allSatisfy { $0.device === strapSamples[0].device })
    }

    @Test func anotherMemberOrderSpacingAndTimeFormReadTheSame() throws {
        // Member order, spacing and a time form the daemon never writes; lines not routed on their prefix.
        let text = #"{"id":7,"ok":true,"result":{ "anchor" : 3 , "deleted":[{"uuid":"A31E280F-7CE7-8809-8000-000000000002","anchor":3,"type":"heartRate"}],"added":[{"type":"heartRate","value":60,"start":"2026-11-29T20:59:41+01:00","device":{"id":"X","address":"X","name":"n"},"anchor":1,"uuid":"A31E280F-7CE7-8809-8000-000000000001","metadata":{}}]}}"#
        let (scanned, parsed) = try readBoth(Array(text.utf8))
        #expect(scanned.added == parsed.added)
        #expect(scanned.deleted == parsed.deleted && scanned.deleted.count == 1)
        #expect(scanned.addedSamples.first?.start == (try RFC3339Timestamp.parse("2026-11-29T19:59:41Z")))
        #expect(LinePrefix(Array(#"{"id":"s","ok":true,"result":{}}"#.utf8)) == nil)
        #expect(LinePrefix(Array(#"{"id":9,"event":"added","data":{}}"#.utf8))?.eventKind == "added")
    }
}
