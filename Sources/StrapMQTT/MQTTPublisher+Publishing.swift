import CMosquittoLoader
import Dispatch
import Glibc
import StrapModel
import StrapMQTTProtocol
import StrapOS
import StrapStore
import Synchronization

/// Turning store items into MQTT messages: topics, payloads (docs/mqtt.md#topics-and-payloads)
/// and what a refused publish means for the window. On the publisher's queue.
extension MQTTPublisher {
    func send(_ client: MosquittoClient, object: StoredObject) -> Bool {
        let topic: String
        switch object {
        case .sample(let s):
            let key = TopicKey(address: s.device.address, type: s.type)
            if let t = topicCache[key] { topic = t } else {
                topic = settings.topics.sample(address: s.device.address, type: s.type)
                if topicCache.count > 4096 { topicCache.removeAll() }
                topicCache[key] = topic
            }
        case .workout:
            topic = settings.topics.savedWorkouts
        }
        payload.removeAll(keepingCapacity: true)
        SampleJSON.append(object, into: &payload)
        return deliver(client, topic: topic, upTo: object.anchor)
    }

    func send(_ client: MosquittoClient, tombstones: ArraySlice<DeletedObject>) -> Bool {
        payload.removeAll(keepingCapacity: true)
        payload.append(contentsOf: #"{"deleted":["#.utf8)
        for (i, t) in tombstones.enumerated() {
            if i > 0 { payload.append(UInt8(ascii: ",")) }
            SampleJSON.append(t, into: &payload)
        }
        payload.append(contentsOf: "]}".utf8)
        return deliver(client, topic: settings.topics.deleted, upTo: tombstones.last!.anchor)
    }

    func deliver(_ client: MosquittoClient, topic: String, upTo anchor: UInt64) -> Bool {
        let result = payload.withUnsafeBytes { client.publish(topic: topic, payload: $0, qos: settings.qos, retain: false) }
        switch result {
        case .success(let mid):
            if settings.qos == 0 { window.skipped(upTo: anchor) } else { window.published(mid: mid, upTo: anchor) }
            return true
        case .failure(let e):
            // Not connected any more: the disconnect callback follows and restarts from the cursor.
            if case .library(_, let rc) = e, rc == MOSQ_ERR_NO_CONN.rawValue || rc == MOSQ_ERR_CONN_LOST.rawValue { return false }
            failed(e)
            return false
        }
    }

    /// A message outside the store's order (retained state, `status`); at QoS 1 it is in flight
    /// in the window until acknowledged.
    func publishRaw(_ client: MosquittoClient, topic: String, bytes: [UInt8], qos: Int, retain: Bool) -> Bool {
        switch bytes.withUnsafeBytes({ client.publish(topic: topic, payload: $0, qos: qos, retain: retain) }) {
        case .success(let mid):
            if qos > 0 { window.publishedOutside(mid: mid, topic: topic) }
            return true
        case .failure(let e):
            // Not connected any more: every retained topic is published again on reconnect.
            if case .library(_, let rc) = e, rc == MOSQ_ERR_NO_CONN.rawValue || rc == MOSQ_ERR_CONN_LOST.rawValue { return false }
            log(.warning, "mqtt: publishing \(topic): \(e)")
            return false
        }
    }
}
