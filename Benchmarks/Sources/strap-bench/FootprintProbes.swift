import Foundation
import StrapKit
import Synchronization

/// Context switches of all of a process's threads over a window, from
/// `/proc/PID/task/*/status` (`/proc/PID/status` counts the main thread only). Sampled every
/// second: a thread that exits during the window loses at most its last second, and one
/// born during it counts from zero. Voluntary switches are the thread blocking (each one a
/// wake-up later), involuntary ones preemption.
struct ContextSwitches {
    private var first: [Int: (Int, Int)] = [:]
    private var last: [Int: (Int, Int)] = [:]

    var voluntary: Int { last.reduce(0) { $0 + $1.value.0 - first[$1.key]!.0 } }
    var involuntary: Int { last.reduce(0) { $0 + $1.value.1 - first[$1.key]!.1 } }
    var total: Int { voluntary + involuntary }
    var threads: Int { last.count }

    /// The first sample sets the baseline of the threads alive then.
    mutating func sample(_ pid: Int32) {
        let baseline = last.isEmpty
        for (tid, counts) in Self.read(pid) {
            if first[tid] == nil { first[tid] = baseline ? counts : (0, 0) }
            last[tid] = counts
        }
    }

    static func read(_ pid: Int32) -> [Int: (Int, Int)] {
        let dir = "/proc/\(pid)/task"
        var out: [Int: (Int, Int)] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            guard let tid = Int(name),
                  let status = try? String(contentsOfFile: "\(dir)/\(name)/status", encoding: .utf8) else { continue }
            func field(_ key: String) -> Int {
                status.split(separator: "\n").first { $0.hasPrefix(key) }
                    .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).last }.flatMap { Int($0) } ?? 0
            }
            out[tid] = (field("voluntary_ctxt_switches:"), field("nonvoluntary_ctxt_switches:"))
        }
        return out
    }
}

/// Clients attached to strapd in `samples.anchored` follow mode, from anchor 0, that send
/// nothing more: one StrapKit store each (its own connection and reader thread), every page
/// and event taken as it comes, so no follower is ever paused for a full buffer: what is
/// measured is the daemon serving attached followers. With `types`, the followers ask for
/// those types only: `["workout"]` while no workout is saved makes them idle followers,
/// caught up and waiting, as a dashboard waiting for workouts.
final class AnchoredFollowers: Sendable {
    private final class Tally: Sendable {
        /// Followers that had their first page.
        let served = Atomic<Int>(0)
        let items = Atomic<Int>(0)
    }

    private let stores: [StrapStore]
    private let followers: [Task<Void, Never>]
    private let tally: Tally
    private let closed = Atomic<Bool>(false)

    init(socket path: String, count: Int, types: [String]? = nil) throws {
        let objectTypes: Set<ObjectType>? = try types.map { names in
            Set(try names.map { name -> ObjectType in
                if name == "workout" { return .workout }
                guard let type = QuantityType(rawValue: name) else { throw BenchFailure("no type \(name)") }
                return .quantity(type)
            })
        }
        let stores = try (0..<count).map { _ in try StrapStore.connected(path) }
        let tally = Tally()
        self.tally = tally
        followers = stores.map { store in
            Task {
                var first = true
                // Ends when `close()` closes the store.
                do {
                    for try await update in AnchoredQuery(types: objectTypes, anchor: 0).results(for: store) {
                        if first { first = false; tally.served.add(1, ordering: .relaxed) }
                        tally.items.add(update.added.count, ordering: .relaxed)
                    }
                } catch {}
            }
        }
        self.stores = stores
    }

    /// Followers that have been sent something (their first page at least).
    var attached: Int { tally.served.load(ordering: .relaxed) }

    /// Items (samples and workouts) the followers were handed in all.
    var itemsReceived: Int { tally.items.load(ordering: .relaxed) }

    /// Disconnects every follower; once.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        for task in followers { task.cancel() }
        for store in stores { store.close() }
    }
}
