import Testing
import StrapModel
import StrapWire
@testable import StrapDaemon

/// The per-operation grant mapping and the type limits, without sockets.
@Suite struct GrantMappingTests {
    @Test func everyOperationHasTheDocumentedGrant() {
        let expected: [String: Permission] = [
            "status": .none, "cancel": .none, "devices.list": .read, "devices.info": .read, "devices.scan": .admin,
            "devices.pair": .admin, "devices.connect": .admin, "devices.disconnect": .admin, "devices.forget": .admin,
            "devices.resetEnergy": .admin, "samples.query": .read, "samples.anchored": .read, "samples.delete": .admin,
            "statistics.query": .read, "statistics.collection": .read, "live.subscribe": .read,
            "workout.prepare": .record, "workout.start": .record, "workout.pause": .record, "workout.resume": .record,
            "workout.stop": .record, "workout.lap": .record, "workout.marker": .record, "workout.end": .record,
            "workout.discard": .record, "workout.send": .record, "workout.get": .read, "workout.list": .read,
            "workout.live": .read, "workout.export": .read, "workout.hrv": .read, "profile.get": .read, "profile.set": .admin,
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
}
