import CMosquitto
import Foundation
import StrapModel
import StrapMQTTProtocol
import StrapStore
import Synchronization

/// What the broker and libmosquitto allow on this machine, beside strapd's publish figure: a
/// bare libmosquitto client in this process publishing the same messages (strapd's topics and
/// payload bytes for the same stored samples, all built before timing) to the same broker, at
/// QoS 1 over MQTT 5 with the same window (1024 in flight), driving the socket from one thread
/// the way strapd's publisher does (libmosquitto's external-loop interface: publish while the
/// window has room, `mosquitto_loop_read` when the socket is readable). No store read, no
/// JSON, no cursor, no daemon: the figure strapd's design could reach at best with this
/// library and this broker. Timed from the first publish to the last PUBACK.
enum MQTTCeiling {
    static func measure(state: String, port: Int, window: Int = 1024) throws -> MQTTBench.Rate {
        let messages = try messages(state)
        mosquitto_lib_init()
        defer { mosquitto_lib_cleanup() }
        let progress = Progress()
        guard let client = mosquitto_new("strap-bench-ceiling", true, Unmanaged.passUnretained(progress).toOpaque()) else {
            throw BenchFailure("mosquitto_new failed")
        }
        defer { mosquitto_destroy(client) }
        _ = mosquitto_int_option(client, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V5))
        _ = mosquitto_max_inflight_messages_set(client, UInt32(window))
        mosquitto_connect_callback_set(client) { _, user, rc in
            if rc == 0 { Unmanaged<Progress>.fromOpaque(user!).takeUnretainedValue().connected.store(true, ordering: .relaxed) }
        }
        mosquitto_publish_v5_callback_set(client) { _, user, _, reason, _ in
            let p = Unmanaged<Progress>.fromOpaque(user!).takeUnretainedValue()
            if reason >= 0x80 { p.refused.add(1, ordering: .relaxed) }
            p.acknowledged.add(1, ordering: .relaxed)
        }
        let ok = Int32(MOSQ_ERR_SUCCESS.rawValue)
        guard mosquitto_connect(client, "127.0.0.1", Int32(port), 60) == ok else { throw BenchFailure("the ceiling client could not connect") }
        defer { mosquitto_disconnect(client); _ = mosquitto_loop_write(client, 1) }
        let connectBy = DecodeBench.now() + 10
        while !progress.connected.load(ordering: .relaxed) {
            guard DecodeBench.now() < connectBy, mosquitto_loop(client, 100, 1) == ok else { throw BenchFailure("no CONNACK for the ceiling client") }
        }
        var watched = pollfd(fd: mosquitto_socket(client), events: Int16(POLLIN), revents: 0)
        let start = DecodeBench.now(), deadline = start + 60
        var sent = 0
        while progress.acknowledged.load(ordering: .relaxed) < messages.count {
            while sent < messages.count && sent - progress.acknowledged.load(ordering: .relaxed) < window {
                let m = messages[sent]
                let rc = m.payload.withUnsafeBytes { mosquitto_publish(client, nil, m.topic, Int32($0.count), $0.baseAddress, 1, false) }
                guard rc == ok else { throw BenchFailure("the ceiling client's publish failed: \(rc)") }
                sent += 1
            }
            watched.events = Int16(POLLIN) | (mosquitto_want_write(client) ? Int16(POLLOUT) : 0)
            guard poll(&watched, 1, 1000) >= 0, DecodeBench.now() < deadline else { throw BenchFailure("the ceiling client stalled") }
            if watched.revents & Int16(POLLIN) != 0, mosquitto_loop_read(client, 64) != ok { throw BenchFailure("the ceiling client lost its connection") }
            if mosquitto_want_write(client), mosquitto_loop_write(client, 64) != ok { throw BenchFailure("the ceiling client lost its connection") }
        }
        let seconds = DecodeBench.now() - start
        if progress.refused.load(ordering: .relaxed) > 0 { throw BenchFailure("the broker refused some of the ceiling client's messages") }
        return MQTTBench.Rate(samples: messages.count, seconds: seconds)
    }

    private final class Progress: Sendable {
        let connected = Atomic<Bool>(false)
        let acknowledged = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
    }

    /// strapd's message for each stored item: its topic under the bench's prefix and the
    /// payload `SampleJSON` writes for it (what `MQTTPublisher.send` publishes).
    private static func messages(_ state: String) throws -> [(topic: String, payload: [UInt8])] {
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        let topics = MQTTTopics(prefix: "strapd/ceiling")
        var out: [(topic: String, payload: [UInt8])] = []
        var anchor: UInt64 = 0
        while true {
            let page = try store.anchored(anchor: anchor, limit: 4096)
            for object in page.added {
                guard case .sample(let s) = object else { continue }
                var payload: [UInt8] = []
                SampleJSON.append(object, into: &payload)
                out.append((topics.sample(address: s.device.address, type: s.type), payload))
            }
            guard page.anchor > anchor else { break }
            anchor = page.anchor
        }
        return out
    }
}
