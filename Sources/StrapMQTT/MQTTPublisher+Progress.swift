import CMosquittoLoader
import Glibc
import StrapOS

/// The publisher's bookkeeping, on its queue: delivery progress and lag for `status`, the
/// once-a-second tick (the retained state collected, keepalive, a dead connection noticed, the
/// cursor persisted, the second's burst), and clocks.
extension MQTTPublisher {
    func noteProgress(published: UInt64 = 0, acknowledged: UInt64 = 0) {
        let now = Self.now(), latest = store.latestAnchor
        lag.observe(latest: latest, at: now)
        let cursor = window.cursor, behind = lag.seconds(cursor: cursor, latest: latest, now: now)
        update {
            $0.published &+= published
            $0.acknowledged &+= acknowledged
            $0.cursor = cursor
            $0.lagSeconds = behind
        }
    }

    func tick() {
        guard !stopping else { return }
        readReplies()
        stateSource?.collect { topic, bytes in keepRetained(topic, bytes) }
        if connected, let since = connectedAt, Self.now() - since > 30 { backoff.reset() }
        // Messages in flight and no acknowledgement for this long: the connection is dead
        // even if nothing said so (a network thread ended by a fatal error, a half-open TCP).
        if connected, window.inFlight > 0, Self.now() - lastAckAt > Double(max(10, settings.keepAlive * 3 / 2)) {
            return failed(.configuration("no acknowledgement from the broker for \(Int(Self.now() - lastAckAt)) s with \(window.inFlight) messages in flight"))
        }
        if let connection {
            let rc = connection.misc()
            if rc != MOSQ_ERR_SUCCESS.rawValue { return failed(.lost(rc)) }
        }
        noteProgress()
        ticks &+= 1
        // Two fsyncs per write: not every second. A crash republishes at most these seconds.
        if ticks % Self.persistEvery == 0 { persist() }
        if connected { burst() }
    }

    func persist() {
        guard window.cursor != persisted else { return }
        let c = DeliveryCursor(anchor: window.cursor, broker: settings.broker.description, prefix: settings.topics.prefix)
        do throws(SystemCallError) {
            try c.save(settings.cursorPath)
            persisted = c.anchor
        } catch {
            log(.error, "mqtt: cannot persist the delivery cursor: \(error) (delivery continues; a restart republishes from \(persisted))")
        }
    }

    func update(_ body: (inout MQTTStatus) -> Void) { snapshot.withLock { body(&$0) } }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func wall() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
