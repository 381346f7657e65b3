import Foundation
import Glibc
@testable import StrapStore
import StrapModel

/// A unique temporary directory removed when the test is done.
final class TempDir: @unchecked Sendable {
    let path: String

    init(_ tag: String = "store") {
        var template = Array("/tmp/strap-\(tag)-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: p!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }
}

enum Fixtures {
    static let strap = Device(id: "dev-h10", address: "A0:9E:1A:00:00:01", name: "Polar H10",
                              manufacturer: "Polar", model: "H10", serial: "1234", firmware: "3.1")
    static let tickr = Device(id: "dev-tickr", address: "C4:00:00:00:00:02", name: "TICKR", manufacturer: "Wahoo")
    static let csc = Device(id: "dev-csc", address: "D1:00:00:00:00:03", name: "Speed", model: "RPM")
    static let t0: Millis = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// 1 Hz heart rate from `start`, values a deterministic function of the index.
    static func heartRate(count: Int, start: Millis = t0, device: Device = strap, offset: Int = 0) -> [Sample] {
        (0..<count).map { i in
            Sample(type: .heartRate, value: Double(60 + (i + offset) % 120), start: start + Millis(i) * 1000, device: device)
        }
    }
}

func config(_ dir: TempDir, sync: SyncPolicy = .none) -> StoreConfig {
    StoreConfig(directory: dir.path, sync: sync)
}

/// Reads everything with repeated anchored calls.
func readAll(_ store: Store, from: UInt64 = 0, limit: Int = 1000) throws -> AnchoredResult {
    var all = AnchoredResult(added: [], deleted: [], anchor: from)
    while true {
        let r = try store.anchored(anchor: all.anchor, limit: limit)
        all.added += r.added
        all.deleted += r.deleted
        if r.anchor == all.anchor { return all }
        all.anchor = r.anchor
    }
}
