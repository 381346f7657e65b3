import StrapModel
import StrapWire

extension RequestRouter {
    /// The protocol's version (docs/protocol.md#versioning), answered by `status`: the minor
    /// number grows when operations, parameters or events are added, the major one when
    /// something a client relies on changes.
    static let protocolVersion = "1.2.0"

    /// `access.status` (HealthKit's authorization status): what this connection's peer may
    /// do, per operation and per object type, from the grants and the operation table the
    /// router enforces, so the answer cannot drift from what a request would get.
    func accessStatus(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        session.connection.write(Reply.success(id: request.id, result: Self.accessJSON(session.grants, peer: session.connection.peer)))
    }

    static func accessJSON(_ grants: Grants, peer: PeerIdentity) -> JSONObject {
        var operations = JSONObject()
        for (name, operation) in Operation.table.sorted(by: { $0.key < $1.key }) {
            operations[name] = .bool(operation.refusal(name, for: grants) == nil)
        }
        var types = JSONObject()
        for name in QuantityType.allCases.map(\.rawValue) + ["workout"] {
            types[name] = .bool(grants.read.allows(type: name))
        }
        let read: JSONValue = switch grants.read {
        case .all: .string("all")
        case .none: .string("none")
        case .types(let names) where names.isEmpty: .string("none")
        case .types: .string("limited")
        }
        return [
            "peer": .object(["uid": .int(Int64(peer.uid)), "gid": .int(Int64(peer.gid)), "pid": .int(Int64(peer.pid))]),
            "grants": .object(["read": read, "record": .bool(grants.record), "admin": .bool(grants.admin)]),
            "operations": .object(operations),
            "types": .object(types),
        ]
    }

    /// What `status` says of the protocol: its version and the operations this daemon has.
    static var protocolJSON: JSONValue {
        .object(["version": .string(protocolVersion), "operations": .array(Operation.table.keys.sorted().map(JSONValue.string))])
    }
}
