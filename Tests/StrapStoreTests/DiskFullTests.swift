import Foundation
import Glibc
import Testing
@testable import StrapStore
import StrapModel

/// Disk full on a size-limited tmpfs: writes fail cleanly, nothing stored is lost, writing
/// resumes when space returns. Needs root for mount(8); skipped otherwise.
@Suite(.enabled(if: getuid() == 0, "needs root to mount a size-limited tmpfs (CI runs as root)"))
struct DiskFullTests {
    static func sh(_ cmd: String) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", cmd]
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }

    @Test func fullDiskDegradesAndResumes() throws {
        let mnt = TempDir("enospc")
        try #require(Self.sh("mount -t tmpfs -o size=1m tmpfs \(mnt.path)") == 0, "mount tmpfs failed")
        defer { _ = Self.sh("umount \(mnt.path)") }
        var cfg = StoreConfig(directory: mnt.path + "/state", sync: .always)
        cfg.segmentMaxItems = 1500
        let store = try Store.open(cfg)
        var stored: [Sample] = []
        var failure: StrapError? = nil
        var i = 0
        while failure == nil && i < 100_000 {
            var batch = Fixtures.heartRate(count: 200, start: Fixtures.t0 + Millis(i) * 1000, offset: i)
            for k in batch.indices { batch[k].metadata = ["pad": String(repeating: "x", count: 40 + k % 7)] }
            do { stored += try store.append(batch) } catch { failure = error }
            i += 200
        }
        let err = try #require(failure, "the tmpfs never filled up")
        #expect(err.code == "unavailable")
        #expect(store.status.degraded?.contains("disk full") == true)
        // Still (nearly) full: further appends fail or fit, each all or nothing; everything
        // stored is served.
        var failures = 1
        for k in 0..<20 {
            var batch = Fixtures.heartRate(count: 200, start: Fixtures.t0 + Millis(i + k * 200) * 1000)
            for j in batch.indices { batch[j].metadata = ["pad": String(repeating: "y", count: 60)] }
            do { stored += try store.append(batch) } catch { failures += 1 }
        }
        #expect(failures > 1)
        let served = try readAll(store).added.compactMap(\.sample)
        #expect(served.count == stored.count)
        #expect(served == stored, "stored samples changed or were lost")
        #expect(try store.statistics(type: .heartRate, options: .maximum, from: 0, to: .max / 2).count == stored.count)

        // Space returns: the very next append succeeds and the store is healthy again.
        try #require(Self.sh("mount -o remount,size=16m \(mnt.path)") == 0)
        let more = try store.append(Fixtures.heartRate(count: 5000, start: Fixtures.t0 + 10_000_000))
        #expect(store.status.degraded == nil)
        #expect(more.first?.anchor == (stored.last?.anchor ?? 0) + 1)
        store.close()

        let reopened = try Store.open(cfg)
        #expect(reopened.status.damage.isEmpty, "\(reopened.status.damage)")
        let after = try readAll(reopened).added.compactMap(\.sample)
        #expect(after.count == stored.count + more.count)
        #expect(after == stored + more, "reopened store differs")
        reopened.close()
    }
}
