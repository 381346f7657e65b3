import CMosquitto
import Foundation
import Synchronization

/// The live-latency peer: Debian's mosquitto broker, started here on a free loopback port
/// with a throwaway configuration (no persistence), relaying the same payload bytes as our
/// live event, QoS 0, publisher → N subscribers. Publisher and subscribers are libmosquitto
/// clients in this process, each with its own network thread (`mosquitto_loop_start`), as
/// our subscribers each have their own reading thread.
final class MosquittoPeer: @unchecked Sendable {
    static let topic = "strapd/live/heartRate"
    private let broker: BenchBroker
    var port: Int { broker.port }

    /// Starts the broker and waits until it accepts connections; throws with the reason
    /// (not installed, did not start) so the caller records the peer as null.
    init() throws {
        // Nagle off: with it, small QoS 0 messages wait for delayed ACKs (tens of ms).
        broker = try BenchBroker(tag: "live", ["set_tcp_nodelay true"])
        mosquitto_lib_init()
    }

    func stop() {
        broker.stop()
        mosquitto_lib_cleanup()
    }

    /// One configuration, measured exactly as `OursLiveFrontEnd.measure` measures ours.
    func measure(_ workload: LatencyWorkload, payload: (prefix: [UInt8], suffix: [UInt8])) throws -> LatencyResult? {
        let times = SendTimes(count: workload.total)
        var subscribers: [MosquittoSubscriber] = []
        defer { for s in subscribers { s.close() } }
        for i in 0..<workload.subscribers {
            let s = try MosquittoSubscriber(id: "sub-\(i)", port: port, tally: SubscriberTally(workload: workload, times: times))
            subscribers.append(s)
        }
        for s in subscribers { s.waitSubscribed() }
        guard let publisher = mosquitto_new("pub", true, nil) else { throw BenchFailure("mosquitto_new failed") }
        defer { mosquitto_loop_stop(publisher, true); mosquitto_destroy(publisher) }
        _ = mosquitto_int_option(publisher, MOSQ_OPT_TCP_NODELAY, 1)
        guard mosquitto_connect(publisher, "127.0.0.1", Int32(port), 60) == Int32(MOSQ_ERR_SUCCESS.rawValue),
              mosquitto_loop_start(publisher) == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            throw BenchFailure("mosquitto publisher could not connect")
        }
        // Payloads built before pacing: the publish path should only publish.
        let payloads = (0...workload.total).map { payload.prefix + Array(String($0).utf8) + payload.suffix }
        var failed = 0
        Pacer.run(workload, times: times) { seq in
            let rc = payloads[seq].withUnsafeBytes {
                mosquitto_publish(publisher, nil, Self.topic, Int32($0.count), $0.baseAddress, 0, false)
            }
            if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) { failed += 1 }
        }
        let drained = workload.waitDelivered(subscribers.map(\.tally))
        mosquitto_disconnect(publisher)
        for s in subscribers { s.close() }
        if failed > 0 { print("  mosquitto: \(failed) publish call(s) failed") }
        return LatencyResult(subscribers.map(\.tally), drained: drained.seconds, end: drained.end)
    }
}

/// One libmosquitto subscriber. Its callbacks run on its own network thread and are the only
/// writers of its tally.
final class MosquittoSubscriber: @unchecked Sendable {
    let tally: SubscriberTally
    private let client: OpaquePointer
    private let subscribed = DispatchSemaphore(value: 0)
    private var closed = false
    var sawLast: Bool { tally.sawLast }

    init(id: String, port: Int, tally: SubscriberTally) throws {
        self.tally = tally
        guard let client = mosquitto_new(id, true, nil) else { throw BenchFailure("mosquitto_new failed") }
        self.client = client
        mosquitto_user_data_set(client, Unmanaged.passUnretained(self).toOpaque())
        _ = mosquitto_int_option(client, MOSQ_OPT_TCP_NODELAY, 1)
        mosquitto_subscribe_callback_set(client) { _, user, _, _, _ in
            Unmanaged<MosquittoSubscriber>.fromOpaque(user!).takeUnretainedValue().subscribed.signal()
        }
        mosquitto_message_callback_set(client) { _, user, message in
            let now = monotonicNanos()
            guard let user, let message, let payload = message.pointee.payload else { return }
            let me = Unmanaged<MosquittoSubscriber>.fromOpaque(user).takeUnretainedValue()
            let bytes = UnsafeBufferPointer(start: payload.assumingMemoryBound(to: UInt8.self), count: Int(message.pointee.payloadlen))
            if let seq = jsonInteger(after: valueKey, in: bytes, from: 0, to: bytes.count) { me.tally.arrived(seq, at: now) }
        }
        guard mosquitto_connect(client, "127.0.0.1", Int32(port), 60) == Int32(MOSQ_ERR_SUCCESS.rawValue),
              mosquitto_subscribe(client, nil, MosquittoPeer.topic, 0) == Int32(MOSQ_ERR_SUCCESS.rawValue),
              mosquitto_loop_start(client) == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            mosquitto_destroy(client)
            throw BenchFailure("mosquitto subscriber \(id) could not connect")
        }
    }

    func waitSubscribed() {
        if subscribed.wait(timeout: .now() + 5) == .timedOut { print("  mosquitto: a SUBACK took over 5 s") }
    }

    /// Disconnects and joins the network thread, after which the tally is ours to read.
    func close() {
        guard !closed else { return }
        closed = true
        mosquitto_disconnect(client)
        mosquitto_loop_stop(client, false)
        mosquitto_destroy(client)
    }
}
