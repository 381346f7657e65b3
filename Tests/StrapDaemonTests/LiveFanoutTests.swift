import ProtocolDriver
import Dispatch
import Foundation
import Glibc
@testable import StrapControl
import StrapIngest
import StrapModel
import StrapSimulator
import StrapWire
import Synchronization
import Testing
@testable import StrapDaemon

/// The live fan-out takes its turn of the server queue on the publishing thread, and the server
/// queue never waits on the device service (whose queue that thread may hold).
@Suite struct LiveFanoutTests {
    /// Readable right now, without waiting.
    static func readable(_ client: RawProtocolDriver) -> Bool {
        var pfd = pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) == 1
    }

    @Test func anIdleServerQueueSendsTheEventBeforePublishReturns() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        #expect(try c.call(#"{"id":1,"op":"live.subscribe"}"#).isOK)
        let address = h.identities[0].address
        for i in 1...5 {
            // From a thread of the test's own, as the bus thread publishes.
            h.live.publish([.link(address, up: i % 2 == 1, reason: nil, Millis(i))])
            // The send happened inside publish: a hop to a worker would still be on its way.
            #expect(Self.readable(c), "event \(i) was not sent before publish returned")
            let m = try #require(try c.readMessage())
            #expect(m.event == "link" && m.data["up"] == .bool(i % 2 == 1))
        }
    }

    /// A busy server queue makes the publisher wait for its turn; nothing is lost or reordered.
    @Test func aBusyServerQueueDelaysTheEventsAndKeepsThemInOrder() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        #expect(try c.call(#"{"id":1,"op":"live.subscribe"}"#).isOK)
        let address = h.identities[0].address
        let release = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        h.server.queue.async { holding.signal(); release.wait() }
        holding.wait()
        let published = Atomic(0)
        let publisher = DispatchQueue(label: "publisher")
        publisher.async {
            for i in 1...20 {
                h.live.publish([.link(address, up: false, reason: "r\(i)", Millis(i))])
                published.add(1, ordering: .relaxed)
            }
        }
        // Given time to run, the publisher still waits for the held queue (a bound for the
        // check, not a timing assertion: it can only be wrong by passing).
        usleep(200_000)
        #expect(published.load(ordering: .relaxed) == 0)
        release.signal()
        publisher.sync {}
        #expect(published.load(ordering: .relaxed) == 20)
        var reasons: [String] = []
        while reasons.count < 20, let m = try c.readMessage() {
            if m.event == "link" { reasons.append(m.data.string("reason") ?? "?") }
        }
        #expect(reasons == (1...20).map { "r\($0)" }, "link events out of order or missing: \(reasons)")
    }

    /// Every operation that asks the device service for a snapshot does so off the server
    /// queue: the pipeline's thread holds the device service's queue while it waits for the
    /// server queue, so one such call on the server queue would deadlock the two.
    @Test func noOperationAsksTheDeviceServiceFromTheServerQueue() throws {
        let probe = ServerQueueProbe(identities: Simulation(count: 3, seed: 1).devices.map(\.identity))
        let clock = WorkoutProtocolTests.TestClock()
        let h = try RouterHarness(devices: probe, workoutClock: clock.now)
        defer { h.close() }
        h.server.queue.setSpecific(key: ServerQueueProbe.key, value: true)
        let c = try h.client()
        let devices = h.identities.map { "\"\($0.address)\"" }.joined(separator: ",")
        #expect(try c.call(#"{"id":1,"op":"status"}"#).isOK)
        #expect(try c.call(#"{"id":2,"op":"devices.list"}"#).isOK)
        #expect(try c.call(#"{"id":3,"op":"devices.info","address":"\#(h.identities[0].address)"}"#).isOK)
        let prepared = try c.call(#"{"id":4,"op":"workout.prepare","activityType":"cycling","devices":[\#(devices)]}"#)
        #expect(prepared.isOK, "\(prepared)")
        guard case .object(let s)? = prepared.result["session"], let id = s.string("session") else {
            Issue.record("no session: \(prepared)"); return
        }
        #expect(try c.call(#"{"id":5,"op":"workout.start","session":"\#(id)"}"#).isOK)
        #expect(try c.call(#"{"id":6,"op":"workout.end","session":"\#(id)"}"#).isOK)
        #expect(try c.call(#"{"id":7,"op":"workout.start","activityType":"running"}"#).isOK)
        #expect(probe.calls.load(ordering: .relaxed) >= 6, "an operation did not ask the probe")
        #expect(probe.onServerQueue.load(ordering: .relaxed) == 0)
    }
}

/// The simulated device service, counting snapshots asked for on the server queue (marked
/// with `key` by the test).
final class ServerQueueProbe: DeviceService, @unchecked Sendable {
    static let key = DispatchSpecificKey<Bool>()
    private let inner: SimulatedDeviceService
    let calls = Atomic(0)
    let onServerQueue = Atomic(0)

    init(identities: [SimulatedIdentity]) { inner = SimulatedDeviceService(identities: identities) }

    private func note() {
        calls.add(1, ordering: .relaxed)
        if DispatchQueue.getSpecific(key: Self.key) == true { onServerQueue.add(1, ordering: .relaxed) }
    }

    func snapshot() -> [DeviceInfo] { note(); return inner.snapshot() }
    var knownCount: Int { note(); return inner.knownCount }
    func scan(timeout: Double, found: @escaping @Sendable (DiscoveredDevice) -> Void,
              finished: @escaping @Sendable (DeviceError?) -> Void) -> ScanHandle {
        inner.scan(timeout: timeout, found: found, finished: finished)
    }
    func pair(_ a: String, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.pair(a, completion: completion) }
    func connect(_ a: String, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.connect(a, completion: completion) }
    func disconnect(_ a: String, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.disconnect(a, completion: completion) }
    func forget(_ a: String, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.forget(a, completion: completion) }
    func resetEnergy(_ a: String, completion: @escaping @Sendable (DeviceError?) -> Void) { inner.resetEnergy(a, completion: completion) }
}
