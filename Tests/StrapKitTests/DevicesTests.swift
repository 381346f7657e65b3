import Foundation
import StrapKit
import Testing

/// The device calls (docs/client.md, "Devices and grants") against the in-process daemon with
/// its three simulated sensors; the test runs as the daemon's own user, which has every grant.
@Suite(.timeLimit(.minutes(2))) struct DevicesTests {
    @Test func theDaemonsOwnUserHasEveryGrant() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let access = try await store.accessStatus()
        #expect(access == AccessStatus(read: .all, record: true, admin: true, operations: access.operations))
        #expect(access.allows("devices.scan") && access.allows("devices.forget") && access.allows("status"))
        #expect(!access.allows("devices.noSuchOperation"))
    }

    /// A scan returns every simulated sensor once, with its advertised name and services; a
    /// second scan right after the first is not `busy` (the first one has ended).
    @Test func aScanFindsEachSimulatedSensorOnce() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let found = try await store.scanDevices(timeout: 0.3)
        #expect(Set(found.map(\.address)) == Set(h.identities.map(\.address)))
        #expect(found.count == h.identities.count)
        for identity in h.identities {
            let device = try #require(found.first { $0.address == identity.address })
            #expect(device.name == identity.name)
            #expect(device.services == identity.services.map(\.uuidString))
            #expect(device.rssi != nil)
        }
        #expect(try await store.scanDevices(timeout: 0.1).count == h.identities.count)
        #expect(store.outstandingRequests == 0)
    }

    /// Pair marks the device paired; forget takes it off `devices.list`; strapd's refusals come
    /// back as its typed errors with its message.
    @Test func pairThenForgetAndTheRefusals() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        let address = h.identities[0].address
        #expect(try await store.deviceAddresses().contains(address))
        try await store.pairDevice(address)
        #expect(try await store.deviceCommand(.resetEnergy, address: address.lowercased()) == address, "strapd's spelling")
        guard case .bool(true)? = try await store.request("devices.info", ["address": .string(address)])["paired"] else {
            Issue.record("devices.info does not say paired after pairDevice")
            return
        }
        try await store.forgetDevice(address)
        let left = try await store.deviceAddresses()
        #expect(!left.contains(address))
        #expect(Set(left) == Set(h.identities.dropFirst().map(\.address)))

        await #expect(throws: StrapKitError.self) { try await store.forgetDevice("not-an-address") }
        do {
            try await store.pairDevice("not-an-address")
            Issue.record("a malformed address was taken")
        } catch let error as StrapKitError {
            #expect(error.code == .badRequest, "\(error)")
        }
        do {
            try await store.deviceCommand(.pair, address: "00:11:22:33:44:55")
            Issue.record("an unknown device was paired")
        } catch let error as StrapKitError {
            #expect(error.code == .notFound, "\(error)")
        }
    }
}
