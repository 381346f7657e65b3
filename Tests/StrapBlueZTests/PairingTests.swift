import Foundation
import StrapBlueZ
import StrapDBus
import MockBlueZSupport
import Testing

/// Opt-in pairing through strapd's org.bluez.Agent1 (NoInputNoOutput), against the mock.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct PairingTests {
    static let address = "C0:9A:12:00:00:01"

    private func pair(_ daemon: Daemon, policy: PairingAgent.Policy) throws -> Result<Void, BusError> {
        try eventually("device known") { daemon.queue.sync { !daemon.client.mirror.devices(address: Self.address).isEmpty } }
        return try onQueue(daemon.queue) { done in
            daemon.manager.pair(address: Self.address, agent: policy) { done($0) }
        }
    }

    @Test func pairsWithAgentAndTrusts() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.address, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        let result = try pair(daemon, policy: .acceptJustWorks)
        #expect(throws: Never.self) { try result.get() }
        let stats = try mock.stats()
        let agent = try #require(stats["agent"] as? [String])
        #expect(agent[1] == "/org/strapd/agent")
        #expect(agent[2] == "NoInputNoOutput")
        #expect((stats["pair_results"] as? [[String]])?.last == [Self.address, "paired"])
        try eventually("Paired and Trusted in the mirror") {
            daemon.queue.sync { daemon.client.mirror.devices(address: Self.address).first.map { $0.paired && $0.trusted && $0.bonded } ?? false }
        }
    }

    @Test func pairingRefusedByAgentPolicy() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.address, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        let result = try pair(daemon, policy: .rejectAll)
        guard case .failure(let error) = result else {
            Issue.record("pairing should have been refused")
            return
        }
        #expect(error.errorName == BlueZErrorName.authenticationRejected.rawValue)
        #expect((try mock.stats()["pair_results"] as? [[String]])?.last == [Self.address, "rejected-by-agent:org.bluez.Error.Rejected"])
        #expect(daemon.queue.sync { daemon.client.mirror.devices(address: Self.address).first?.paired } == false)
    }

    /// The kernel's search for a sensor that stopped advertising never ends, and bluetoothd
    /// holds its management queue for two minutes meanwhile: strapd gives up after its own
    /// timeout, cancels, and says so instead of leaving the pairing (and the adapter) stuck.
    @Test func aPairingThatNeverEndsIsCancelled() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.address, kind: "hr")])
        try mock.setFault(Self.address, "pair_never_ends")
        let daemon = try Daemon(address: mock.bus.address)
        daemon.queue.sync { daemon.manager.pairingTimeout = 1 }
        let result = try pair(daemon, policy: .acceptJustWorks)
        guard case .failure(let error) = result else {
            Issue.record("a pairing that never ends should have failed")
            return
        }
        #expect(error.errorName == BlueZErrorName.authenticationTimeout.rawValue)
        #expect("\(error)".contains("cancelled"))
        try eventually("the mock's Pair ended by CancelPairing") {
            ((try? mock.stats())?["pair_results"] as? [[String]])?.last == [Self.address, "cancelled"]
        }
        #expect(try mock.events().contains { $0.first as? String == "CancelPairing" })
        // Nothing is left in progress: the next attempt pairs.
        let again = try pair(daemon, policy: .acceptJustWorks)
        #expect(throws: Never.self) { try again.get() }
    }

    @Test func pairingRefusedByDevice() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.address, kind: "hr")])
        try mock.setFault(Self.address, "refuse_pairing")
        let daemon = try Daemon(address: mock.bus.address)
        let result = try pair(daemon, policy: .acceptJustWorks)
        guard case .failure(let error) = result else {
            Issue.record("pairing should have failed")
            return
        }
        #expect(error.errorName == BlueZErrorName.authenticationFailed.rawValue)
        // The unbonded link still works: HR needs no bond.
        daemon.add(Self.address)
        try eventually("streaming unbonded") { daemon.sink.count(Self.address) >= 3 }
    }
}
