import Foundation
import Glibc
@testable import StrapStore
import StrapModel
import StrapOS
import Synchronization

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

/// A syscall table for a store whose file system holds `spaceLeft` more bytes (nil: no
/// limit; a write that does not fit is cut short, then fails with ENOSPC, as a full disk
/// does) and whose fdatasync fails with `syncError` when set: the store's error paths
/// without root or a small file system.
final class InjectedFaults: Sendable {
    private let state = Mutex<(spaceLeft: Int?, syncError: Errno?)>((nil, nil))

    var spaceLeft: Int? {
        get { state.withLock { $0.spaceLeft } }
        set { state.withLock { $0.spaceLeft = newValue } }
    }

    var syncError: Errno? {
        get { state.withLock { $0.syncError } }
        set { state.withLock { $0.syncError = newValue } }
    }

    /// How many of `count` bytes fit; 0 when the disk is full.
    private func take(_ count: Int) -> Int {
        state.withLock { s in
            guard let left = s.spaceLeft else { return count }
            let n = min(left, count)
            s.spaceLeft = left - n
            return n
        }
    }

    var syscalls: Syscalls {
        var sys = Syscalls.live
        sys.pwrite = { [self] fd, buffer, count, offset in
            let n = take(count)
            if n == 0 && count > 0 { Errno.current = .noSpace; return -1 }
            return Glibc.pwrite(fd, buffer, n, offset)
        }
        sys.write = { [self] fd, buffer, count in
            let n = take(count)
            if n == 0 && count > 0 { Errno.current = .noSpace; return -1 }
            return Glibc.write(fd, buffer, n)
        }
        sys.fdatasync = { [self] fd in
            if let e = syncError { Errno.current = e; return -1 }
            return Glibc.fdatasync(fd)
        }
        return sys
    }
}
