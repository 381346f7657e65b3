import Testing
import StrapModel
import StrapWire
@testable import StrapDaemon

/// The per-operation grant mapping and the type limits, without sockets.
@Suite struct GrantMappingTests {
    @Test func everyOperationHasTheDocumentedGrant() {
        let expected: [String: Permission] = [
            "status": .none, "access.status": .none, "cancel": .none, "devices.list": .read, "devices.info": .read, "devices.scan": .admin,
            "devices.pair": .admin, "devices.connect": .admin, "devices.disconnect": .admin, "devices.forget": .admin,
            "devices.resetEnergy": .admin, "samples.query": .read, "samples.anchored": .read, "samples.delete": .admin,
            "statistics.query": .read, "statistics.collection": .read, "live.subscribe": .read,
            "workout.prepare": .record, "workout.start": .record, "workout.pause": .record, "workout.resume": .record,
            "workout.stop": .record, "workout.lap": .record, "workout.marker": .record, "workout.end": .record,
            "workout.discard": .record, "workout.send": .record, "workout.get": .read, "workout.list": .read,
            "workout.live": .read, "workout.watch": .read, "workout.export": .read, "workout.hrv": .read, "profile.get": .read, "profile.set": .admin,
            "plan.save": .record, "plan.list": .read, "plan.get": .read, "plan.delete": .record,
            "trainer.status": .read, "trainer.set": .record, "trainer.release": .record,
        ]
        #expect(Set(Operation.table.keys) == Set(expected.keys))
        for (op, permission) in expected { #expect(Operation.table[op]?.permission == permission, "\(op)") }
    }

    @Test func limitedReadSeesOnlyItsTypes() throws {
        let limited = Grants(read: .types(["heartRate", "workout"]))
        #expect(limited.permits(.read) && !limited.permits(.admin) && !limited.permits(.record) && limited.permits(.none))
        #expect(try limited.readable(asked: nil) == [.heartRate])
        #expect(try limited.readable(asked: [.heartRate]) == [.heartRate])
        #expect(throws: WireError.self) { try limited.readable(asked: [.heartRate, .cyclingSpeed]) }
        #expect(throws: WireError.self) { try limited.checkPredicate(.and([.types([.batteryLevel]), .all])) }
        try limited.checkPredicate(.not(.types([.batteryLevel])))  // names no type it could return
        #expect(limited.readsWorkouts && !Grants(read: .types(["heartRate"])).readsWorkouts)
        #expect(try Grants.everything.readable(asked: nil) == nil)
        #expect(!Grants.nothing.permits(.read))
    }

    /// `access.status` for grants from several `[access]` policies, without sockets.
    @Test func accessStatusFollowsThePolicy() {
        let peer = PeerIdentity(pid: 1, uid: 1000, gid: 1000, groups: [27])
        func status(_ policy: AccessPolicy) -> (operations: JSONObject, types: JSONObject, read: JSONValue?) {
            let o = RequestRouter.accessJSON(policy.grants(for: peer), peer: peer)
            guard case .object(let ops)? = o["operations"], case .object(let types)? = o["types"],
                  case .object(let grants)? = o["grants"] else { return ([:], [:], nil) }
            return (ops, types, grants["read"])
        }
        let nothing = status(AccessPolicy(daemonUID: 0))
        #expect(nothing.read == .string("none"))
        #expect(nothing.operations.entries.filter { $0.value == .bool(true) }.map(\.key).sorted() == ["access.status", "cancel", "status"])
        #expect(nothing.types.entries.allSatisfy { $0.value == .bool(false) })

        let group = status(AccessPolicy(read: [.gid(27)], admin: [.uid(1000)], daemonUID: 0))
        #expect(group.read == .string("all"))
        #expect(group.operations["workout.hrv"] == .bool(true) && group.operations["devices.forget"] == .bool(true))
        #expect(group.operations["workout.start"] == .bool(false))
        #expect(group.types.entries.allSatisfy { $0.value == .bool(true) })

        let hrv = status(AccessPolicy(readTypes: [.uid(1000): ["heartbeatSeries"]], daemonUID: 0))
        #expect(hrv.read == .string("limited"))
        #expect(hrv.operations["workout.hrv"] == .bool(true) && hrv.operations["samples.query"] == .bool(true))
        #expect(hrv.operations["workout.get"] == .bool(false) && hrv.operations["workout.watch"] == .bool(false))
        #expect(hrv.types["heartbeatSeries"] == .bool(true) && hrv.types["heartRate"] == .bool(false) && hrv.types["workout"] == .bool(false))

        let daemon = status(AccessPolicy(daemonUID: 1000))
        #expect(daemon.operations.entries.allSatisfy { $0.value == .bool(true) })
        #expect(daemon.operations.entries.count == Operation.table.count)
    }
}
