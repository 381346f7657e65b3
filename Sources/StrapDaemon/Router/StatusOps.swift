import StrapModel
import StrapMQTT
import StrapWire

extension RequestRouter {
    /// `status`: the daemon's health (`DaemonStatus`), open to every peer that can connect.
    func status(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        let clients = clientCount
        let followers = followerCount
        let id = request.id
        respond(request, session) { [self] () throws(WireError) -> [UInt8] in
            var s = context.status()
            s.clients = clients
            s.liveSubscribers = fanout.count
            s.followers = followers
            return Reply.success(id: id, result: Self.statusJSON(s))
        }
    }

    static func statusJSON(_ s: DaemonStatus) -> JSONObject {
        let store: JSONValue = s.store.map { st in
            .object([
                "oldestAnchor": .int(Int64(clamping: st.oldestAnchor)),
                "latestAnchor": .int(Int64(clamping: st.latestAnchor)),
                "segments": .int(Int64(st.segments)),
                "bytes": .int(Int64(st.bytes)),
                "degraded": st.degraded.map(JSONValue.string) ?? .null,
                "damage": .array(st.damage.map(JSONValue.string)),
            ])
        } ?? .null
        var byType = JSONObject()
        for (type, n) in s.pipeline.samplesByType.sorted(by: { $0.key.rawValue < $1.key.rawValue }) { byType[type.rawValue] = .int(Int64(n)) }
        let pipeline: JSONObject = [
            "events": .int(Int64(s.pipeline.events)), "samples": .int(Int64(s.pipeline.samples)),
            "rejected": .int(Int64(s.pipeline.rejected)), "dropped": .int(Int64(s.pipeline.dropped)),
            "samplesByType": .object(byType),
        ]
        var o: JSONObject = [
            "version": .string(s.version),
            "startedAt": .string(RFC3339Timestamp.format(millisecondsSinceEpoch: s.startedAt)),
            "mode": .string(s.mode),
            "summary": .string(s.summary),
            "degraded": s.degraded.map(JSONValue.string) ?? .null,
            "connectedSensors": .int(Int64(s.connectedSensors)),
            "knownSensors": .int(Int64(s.knownSensors)),
            "sampleRate": .double(s.sampleRate),
            "clients": .int(Int64(s.clients)),
            "liveSubscribers": .int(Int64(s.liveSubscribers)),
            "followers": .int(Int64(s.followers)),
            "pipeline": .object(pipeline),
            "store": store,
        ]
        o["mqtt"] = s.mqtt.map { .object(mqttJSON($0)) } ?? .null
        o["protocol"] = protocolJSON
        return o
    }

    static func mqttJSON(_ m: MQTTStatus) -> JSONObject {
        [
            "state": .string(m.state.rawValue), "broker": .string(m.broker),
            "cursor": .int(Int64(clamping: m.cursor)), "lagItems": .int(Int64(clamping: m.lagItems)),
            "lagSeconds": .double((m.lagSeconds * 10).rounded() / 10),
            "published": .int(Int64(clamping: m.published)), "acknowledged": .int(Int64(clamping: m.acknowledged)),
            "connects": .int(Int64(clamping: m.connects)),
            "inflightLimit": m.inflightLimit.map { .int(Int64($0)) } ?? .null,
            "lastError": m.lastError.map(JSONValue.string) ?? .null,
            "lastErrorAt": m.lastErrorAt.map { .string(RFC3339Timestamp.format(millisecondsSinceEpoch: $0)) } ?? .null,
            "retryIn": m.retryIn.map { .double(($0 * 10).rounded() / 10) } ?? .null,
        ]
    }

    /// `cancel`: `{"op":"cancel","id":N}` ends the stream started by request N. The stream's
    /// final `cancelled` event is the answer; no stream with that id is `notFound`.
    func cancel(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        guard let stream = session.streams.removeValue(forKey: request.id) else {
            throw WireError(.notFound, "no open stream with id \(request.id)")
        }
        stream.cancel(notify: true)
        finishIfIdle(session)
    }
}
