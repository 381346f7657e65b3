import Dispatch
import Foundation
import Glibc
@testable import StrapBlueZ
import Synchronization
import Testing

/// The bus's read side on a thread of its own (`BusReader`), over a socketpair standing in
/// for the bus connection: the pump runs on that thread through the bus queue, and stopping
/// ends the thread even while it waits for the queue the caller holds.
struct BusReaderTests {
    private final class Seen: Sendable {
        let pumps = Atomic<Int>(0)
        /// `/proc/PID/task/TID` of the thread that pumped.
        let task = Mutex<String>("")
        let names = Mutex<Set<String>>([])
    }

    private static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw POSIXError(.EIO)
        }
        return (fds[0], fds[1])
    }

    private static func wait(_ seconds: Double = 10, until condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > end { return false }
            usleep(2_000)
        }
        return true
    }

    @Test func pumpsOnItsOwnThreadThroughTheQueueAndEnds() throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours); close(theirs) }
        let queue = DispatchQueue(label: "bus-reader-test")
        let seen = Seen()
        let reader = try #require(BusReader(fd: ours, queue: queue) {
            dispatchPrecondition(condition: .onQueue(queue))
            var buffer = [UInt8](repeating: 0, count: 64)
            while read(ours, &buffer, buffer.count) > 0 {}
            seen.task.withLock { $0 = "/proc/" + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?") }
            seen.names.withLock { _ = $0.insert(Self.threadName()) }
            seen.pumps.add(1, ordering: .relaxed)
        })
        for round in 1...3 {
            var byte: UInt8 = 1
            #expect(write(theirs, &byte, 1) == 1)
            #expect(Self.wait { seen.pumps.load(ordering: .relaxed) >= round }, "round \(round)")
        }
        #expect(seen.names.withLock { $0 } == ["strapd-bus"])
        let task = seen.task.withLock { $0 }
        #expect(FileManager.default.fileExists(atPath: task), "\(task)")
        let ended = Atomic<Bool>(false)
        reader.stop()
        reader.afterExit { ended.store(true, ordering: .relaxed) }
        #expect(Self.wait { ended.load(ordering: .relaxed) })
        #expect(Self.wait { !FileManager.default.fileExists(atPath: task) }, "\(task) still runs")
        // Nothing is pumped once it has stopped.
        let before = seen.pumps.load(ordering: .relaxed)
        var byte: UInt8 = 1
        _ = write(theirs, &byte, 1)
        usleep(100_000)
        #expect(seen.pumps.load(ordering: .relaxed) == before)
    }

    /// Bus.release stops the reader from the bus queue while the thread may be waiting in
    /// `queue.sync` for that same queue: `done` must come once the queue is let go, not hang.
    @Test func stopsWhileWaitingForTheQueueItsCallerHolds() throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours); close(theirs) }
        let queue = DispatchQueue(label: "bus-reader-held")
        let pumps = Atomic<Int>(0)
        let reader = try #require(BusReader(fd: ours, queue: queue) {
            var buffer = [UInt8](repeating: 0, count: 64)
            while read(ours, &buffer, buffer.count) > 0 {}
            pumps.add(1, ordering: .relaxed)
        })
        let ended = Atomic<Bool>(false)
        queue.sync {
            var byte: UInt8 = 1
            _ = write(theirs, &byte, 1)
            usleep(50_000)                  // the thread is now (most likely) in queue.sync, waiting for us
            reader.stop()
            reader.afterExit { ended.store(true, ordering: .relaxed) }
        }
        #expect(Self.wait { ended.load(ordering: .relaxed) })
        #expect(pumps.load(ordering: .relaxed) <= 1)
    }

    /// An AcquireNotify socket watched by the reader: each datagram is read on the reader's
    /// thread, through the bus queue, in order; once cancelled the watch never runs again and
    /// the descriptor is closed, while the bus itself is still pumped.
    @Test func watchedSocketsAreReadOnTheReadersThreadUntilCancelled() throws {
        let (bus, busPeer) = try Self.socketPair()
        defer { close(bus); close(busPeer) }
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0)
        let (notify, sensor) = (pair[0], pair[1])
        defer { close(sensor) }
        let queue = DispatchQueue(label: "bus-reader-watch")
        let pumps = Atomic<Int>(0)
        let reader = try #require(BusReader(fd: bus, queue: queue) {
            var buffer = [UInt8](repeating: 0, count: 64)
            while read(bus, &buffer, buffer.count) > 0 {}
            pumps.add(1, ordering: .relaxed)
        })
        defer { reader.stop() }
        let received = Mutex<[UInt8]>([])
        let names = Mutex<Set<String>>([])
        let watch = queue.sync {
            ReadWatch(fd: notify, reader: reader, queue: queue) {
                dispatchPrecondition(condition: .onQueue(queue))
                var datagram: UInt8 = 0
                while read(notify, &datagram, 1) == 1 { received.withLock { $0.append(datagram) } }
                names.withLock { _ = $0.insert(Self.threadName()) }
            }
        }
        #expect(queue.sync { watch.onReaderThread })
        for value: UInt8 in 1...5 {
            var v = value
            #expect(write(sensor, &v, 1) == 1)
            #expect(Self.wait { received.withLock { $0.count } == Int(value) }, "datagram \(value)")
        }
        #expect(received.withLock { $0 } == [1, 2, 3, 4, 5])
        #expect(names.withLock { $0 } == ["strapd-bus"])
        queue.sync { watch.cancel() }
        // Closed: the sensor's end sees its peer gone.
        var v: UInt8 = 6
        let sent = send(sensor, &v, 1, Int32(MSG_NOSIGNAL))
        let error = errno
        #expect(sent == -1 && (error == EPIPE || error == ECONNRESET), "send after cancel: \(sent), errno \(error)")
        // The bus is still read.
        var byte: UInt8 = 1
        _ = write(busPeer, &byte, 1)
        #expect(Self.wait { pumps.load(ordering: .relaxed) >= 1 })
        #expect(received.withLock { $0 } == [1, 2, 3, 4, 5])
    }
}
