import CShims
import Foundation
import StrapDaemon
import StrapGATT
import StrapIngest
import StrapModel
import StrapSimulator
import StrapStore
import StrapSystem
import StrapWire
import Synchronization

/// strapd's side of the live-latency figure: the daemon's real front end in this process
/// (durable store at the default 100 ms sync, pipeline, live hub, router, unix socket server),
/// heart-rate notifications submitted as a BLE source would, and subscribers that are plain
/// blocking socket clients on their own threads, each with its own `live.subscribe`.
final class OursLiveFrontEnd: @unchecked Sendable {
    static let address = "C0:FF:EE:00:00:01"
    let directory: String
    let socketPath: String
    let frontEnd: DaemonFrontEnd
    /// The first sample event line a subscriber received: the mosquitto peer publishes the
    /// same bytes (with its own sequence number as the value).
    let sampleLine = Mutex<[UInt8]?>(nil)

    init() throws {
        // sun_path holds 108 bytes: keep the directory short.
        directory = "/tmp/strap-bench-live-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/s.sock"
        let store = try Store.open(StoreConfig(directory: directory + "/store", sync: .interval(0.1)))
        // strapd's own front end, workout service included; the bench is the source. It never
        // asks for `status`.
        frontEnd = DaemonFrontEnd(
            store: store, listener: try UnixListener.bind(path: socketPath, mode: 0o600),
            access: AccessPolicy(daemonUID: getuid()),
            identity: { address, name in (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings()) },
            workouts: try WorkoutService(store: store, profiles: ProfileBook()),
            status: { _ in DaemonStatus.empty }
        ) { _ in SimulatedDeviceService(identities: [SimulatedIdentity(address: Self.address, name: "Bench HRM")]) }
        frontEnd.start()
        frontEnd.pipeline.submit(.linkUp(Self.address, name: "Bench HRM", ReceiveTime.now()))
    }

    func close() {
        frontEnd.stopAndWait()
        try? frontEnd.flush()
        frontEnd.store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// One configuration: subscribe `subscribers` clients, pace the notifications, wait for
    /// the last one to arrive everywhere (or 3 s), disconnect.
    func measure(_ workload: LatencyWorkload) throws -> LatencyResult? {
        let times = SendTimes(count: workload.total)
        let shared = RunFlags()
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        var tallies: [SubscriberTally] = []
        for index in 0..<workload.subscribers {
            let tally = SubscriberTally(workload: workload, times: times)
            tallies.append(tally)
            finished.enter()
            let thread = Thread { [self] in
                if !subscribe(tally, keepLine: index == 0, stop: shared, ready: ready) { shared.failures.add(1, ordering: .relaxed) }
                shared.addThreadCPU()
                finished.leave()
            }
            thread.stackSize = 256 << 10
            thread.start()
        }
        for _ in 0..<workload.subscribers { ready.wait() }
        guard shared.failures.load(ordering: .relaxed) == 0 else {
            shared.stop.store(true, ordering: .relaxed)
            finished.wait()
            throw BenchFailure("live latency: \(shared.failures.load(ordering: .relaxed)) subscriber(s) could not subscribe")
        }
        let hr = (0...workload.total).map { HeartRateMeasurement(heartRate: UInt16($0), isUInt16Format: true).encoded() }
        let cpu0 = processCPUSeconds(), wall0 = DecodeBench.now()
        Pacer.run(workload, times: times) { seq in
            frontEnd.pipeline.submit(.notification(Self.address, .heartRateMeasurement, hr[seq], ReceiveTime.now()))
        }
        let drained = workload.waitDelivered(tallies)
        shared.stop.store(true, ordering: .relaxed)
        finished.wait()
        // Where the two cores went: the subscribers' reading threads against everything else
        // in this process (strapd's front end and the pacer). Subscribing costs little.
        let wall = DecodeBench.now() - wall0
        let subscribers = Double(shared.subscriberCPU.load(ordering: .relaxed)) / 1e9
        let rest = processCPUSeconds() - cpu0 - subscribers
        print(String(format: "    CPU over %.1f s: subscriber threads %.2f s (%.0f %% of a core), strapd front end + pacer %.2f s (%.0f %%); per message and subscriber %.1f µs vs %.1f µs",
                     wall, subscribers, subscribers / wall * 100, rest, rest / wall * 100,
                     subscribers / Double(workload.total * workload.subscribers) * 1e6, rest / Double(workload.total * workload.subscribers) * 1e6))
        // Nothing of this configuration may still be queued when the next one starts.
        frontEnd.pipeline.drain()
        frontEnd.server.queue.sync {}
        return LatencyResult(tallies, drained: drained.seconds, end: drained.end)
    }

    /// A subscriber thread: connect, `live.subscribe` heart rate, read until told to stop.
    /// Every line in one read() is stamped with that read's time.
    private func subscribe(_ tally: SubscriberTally, keepLine: Bool, stop: RunFlags,
                           ready: DispatchSemaphore) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { if fd >= 0 { Glibc.close(fd) } }
        guard fd >= 0, cshims_unix_connect(fd, socketPath) == 0 else { ready.signal(); return false }
        // Short receive timeout: the stop flag is checked between reads.
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(#"{"id":1,"op":"live.subscribe","types":["heartRate"]}"#.utf8) + [10]
        guard request.withUnsafeBytes({ cshims_send_nosignal(fd, $0.baseAddress, $0.count) }) == request.count else {
            ready.signal(); return false
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var used = 0
        var subscribed = false
        var keep = keepLine
        while !stop.stop.load(ordering: .relaxed) {
            if used == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + used, $0.count - used) }
            if n < 0, errno == EAGAIN || errno == EINTR { continue }
            if n <= 0 { break }
            let now = monotonicNanos()
            used += n
            var consumed = 0
            buffer.withUnsafeBufferPointer { bytes in
                var start = 0
                for i in 0..<used where bytes[i] == 10 {
                    if !subscribed {
                        // The reply comes before any event: `{"id":1,"ok":true,...}`.
                        subscribed = true
                        ready.signal()
                    } else if let seq = jsonInteger(after: valueKey, in: bytes, from: start, to: i) {
                        tally.arrived(seq, at: now)
                        if keep { keep = false; sampleLine.withLock { $0 = Array(bytes[start..<i]) } }
                    } else if let c = countOfDropped(bytes, start, i) {
                        tally.reportedDropped += c
                    }
                    start = i + 1
                }
                consumed = start
            }
            if consumed > 0 {
                buffer.withUnsafeMutableBytes { b in
                    _ = memmove(b.baseAddress!, b.baseAddress! + consumed, used - consumed)
                }
                used -= consumed
            }
        }
        if !subscribed { ready.signal(); return false }
        return true
    }

    /// `{"id":1,"event":"dropped","data":{"count":N}}` → N.
    private func countOfDropped(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var i = from
        let key = droppedKey
        while i + key.count <= to {
            if bytes[i] == key[0], (0..<key.count).allSatisfy({ bytes[i + $0] == key[$0] }) {
                return jsonInteger(after: countKey, in: bytes, from: i, to: to)
            }
            i += 1
        }
        return nil
    }
}
