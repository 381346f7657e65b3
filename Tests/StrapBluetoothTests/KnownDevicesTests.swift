import Foundation
import Testing
@testable import StrapBluetooth

@Suite struct KnownDevicesTests {
    func directory() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-known-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test func savesAtomicallyAndLoadsBack() throws {
        let d = try directory()
        defer { try? FileManager.default.removeItem(atPath: d) }
        var known = KnownDevices(directory: d)
        #expect(known.load() == nil && known.entries.isEmpty)
        known.set(.init(address: "AA:BB:CC:DD:EE:01", name: "H10", autoConnect: true))
        known.set(.init(address: "AA:BB:CC:DD:EE:02", name: nil, autoConnect: false))
        try known.save()
        #expect(!FileManager.default.fileExists(atPath: known.path + ".tmp"))
        var again = KnownDevices(directory: d)
        #expect(again.load() == nil)
        #expect(again.entries == known.entries)
    }

    @Test func corruptFileIsMovedAside() throws {
        let d = try directory()
        defer { try? FileManager.default.removeItem(atPath: d) }
        var known = KnownDevices(directory: d)
        try "not json".write(toFile: known.path, atomically: true, encoding: .utf8)
        guard case .corrupt(_, let moved)? = known.load() else {
            Issue.record("corrupt file not reported")
            return
        }
        #expect(moved == known.path + ".corrupt" && FileManager.default.fileExists(atPath: moved))
        #expect(known.entries.isEmpty && !FileManager.default.fileExists(atPath: known.path))
        try #"{"version":1,"devices":[{"address":"zz","autoConnect":true}]}"#.write(toFile: known.path, atomically: true, encoding: .utf8)
        guard case .corrupt(let why, _)? = known.load() else {
            Issue.record("bad address not reported")
            return
        }
        #expect(why == "bad address zz")
    }

    @Test func addressesAreNormalised() {
        #expect(KnownDevices.normalise("aa:bb:cc:dd:ee:ff") == "AA:BB:CC:DD:EE:FF")
        #expect(KnownDevices.normalise("aa:bb:cc:dd:ee") == nil)
        #expect(KnownDevices.normalise("aa:bb:cc:dd:ee:fg") == nil)
    }
}
