import Foundation
import Glibc
import Testing
@testable import StrapStore
import StrapModel
import StrapOS

/// The same failures through an injected syscall table (`StoreConfig.syscalls`): no root,
/// and exact control of when the disk fills and empties, down to a write cut short.
@Suite struct InjectedDiskFaultTests {
    static func batch(_ from: Int, count: Int = 500) -> [Sample] {
        Fixtures.heartRate(count: count, start: Fixtures.t0 + Millis(from) * 1000, offset: from)
    }

    @Test func noSpaceOnAppendDegradesLosesNothingAndResumes() throws {
        let dir = TempDir("enospc-injected")
        let faults = InjectedFaults()
        var cfg = StoreConfig(directory: dir.path, sync: .always)
        cfg.segmentMaxItems = 1200
        cfg.syscalls = faults.syscalls
        let store = try Store.open(cfg)
        var stored = try store.append(Self.batch(0, count: 1000))

        // 300 bytes left: the next batch's write is cut short, then fails. All or nothing.
        faults.spaceLeft = 300
        let full = #expect(throws: StrapError.self) { try store.append(Self.batch(1000)) }
        #expect(full?.code == "unavailable")
        let why = try #require(store.status.degraded)
        #expect(why.hasPrefix("disk full: pwrite \(dir.path)/seg-"), "\(why)")
        #expect(why.contains("No space left on device"))
        #expect(full?.description == why)
        #expect(throws: StrapError.self, "still full") { try store.append(Self.batch(1000)) }
        #expect(try readAll(store).added.compactMap(\.sample) == stored, "what was stored is served unchanged")

        // Space returns: the next append fits and the store is healthy again.
        faults.spaceLeft = nil
        stored += try store.append(Self.batch(1000))
        #expect(store.status.degraded == nil)
        #expect(stored.map(\.anchor) == Array(1...1500))

        // Full while sealing (1200 items): the new segment's header cannot be written.
        faults.spaceLeft = 0
        #expect(throws: StrapError.self) { try store.append(Self.batch(1500)) }
        #expect(store.status.degraded?.hasPrefix("disk full: pwrite \(dir.path)/seg-") == true)
        faults.spaceLeft = nil
        stored += try store.append(Self.batch(1500))
        #expect(store.status.degraded == nil && store.status.segments == 2)
        store.close()

        let reopened = try Store.open(StoreConfig(directory: dir.path, sync: .always))
        #expect(reopened.status.damage.isEmpty, "no torn tail: the short write was cut off again: \(reopened.status.damage)")
        #expect(try readAll(reopened).added.compactMap(\.sample) == stored)
        reopened.close()
    }

    /// Batches go in as one write: a full disk takes none of them, and the next try takes
    /// them all, in order.
    @Test func batchesAreAllOrNothingOnAFullDisk() throws {
        let dir = TempDir("enospc-batches")
        let faults = InjectedFaults()
        var cfg = StoreConfig(directory: dir.path, sync: .always)
        cfg.syscalls = faults.syscalls
        let store = try Store.open(cfg)
        defer { store.close() }
        let stored = try store.append(Self.batch(0, count: 100))
        let batches = [Self.batch(100, count: 300), Self.batch(400, count: 300)]
        faults.spaceLeft = 2000
        #expect(throws: StrapError.self) { try store.appendBatches(batches) }
        #expect(store.latestAnchor == 100)
        #expect(try readAll(store).added.compactMap(\.sample) == stored)
        faults.spaceLeft = nil
        #expect(try store.appendBatches(batches) == 101)
        let read = try readAll(store).added.compactMap(\.sample)
        #expect(read.map(\.start) == (stored + batches[0] + batches[1]).map(\.start))
        #expect(read.map(\.anchor) == Array(1...700))
    }

    @Test func ioErrorOnFdatasyncIsAClearError() throws {
        let dir = TempDir("eio-injected")
        let faults = InjectedFaults()
        var cfg = StoreConfig(directory: dir.path, sync: .always)
        cfg.syscalls = faults.syscalls
        let store = try Store.open(cfg)
        try store.append(Self.batch(0, count: 1000))

        faults.syncError = .ioError
        let failed = #expect(throws: StrapError.self) { try store.append(Self.batch(1000)) }
        #expect(failed?.code == "unavailable")
        let why = try #require(store.status.degraded)
        #expect(why.hasPrefix("I/O error: fdatasync \(dir.path)/seg-"), "\(why)")
        #expect(why.hasSuffix("Input/output error (errno \(EIO))"), "\(why)")
        #expect(failed?.description == why)
        // Written but not known durable: anchored readers do not see it yet.
        #expect(store.latestAnchor == 1000)
        #expect(throws: StrapError.unavailable(why)) { try store.sync() }

        // The disk recovers: the next append syncs everything written, the failed batch too
        // (its records were written; only their durability was unknown).
        faults.syncError = nil
        let more = try store.append(Self.batch(2000))
        #expect(store.status.degraded == nil)
        #expect(more.first?.anchor == 1501)
        #expect(store.latestAnchor == 2000)
        store.close()
    }
}

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
