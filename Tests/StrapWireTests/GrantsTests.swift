import Testing
@testable import StrapWire

@Suite struct GrantsTests {
    let policy = AccessPolicy(
        read: [.uid(1000), .gid(500)],
        readTypes: [.uid(1001): ["heartRate"], .gid(600): ["cyclingSpeed"], .uid(1000): ["heartRate", "batteryLevel"]],
        record: [.gid(500)],
        admin: [.uid(1002)],
        daemonUID: 998)

    @Test func rootAndDaemonUserGetEverything() {
        #expect(policy.grants(for: PeerIdentity(pid: 1, uid: 0, gid: 0)) == .everything)
        #expect(policy.grants(for: PeerIdentity(pid: 1, uid: 998, gid: 998)) == .everything)
    }

    @Test func strangersGetNothing() {
        #expect(policy.grants(for: PeerIdentity(pid: 1, uid: 65534, gid: 65534)) == .nothing)
    }

    @Test func groupGrantsApplyViaPrimaryOrSupplementaryGroup() {
        let viaPrimary = policy.grants(for: PeerIdentity(pid: 1, uid: 2000, gid: 500))
        let viaSupplementary = policy.grants(for: PeerIdentity(pid: 1, uid: 2000, gid: 2000, groups: [2000, 500]))
        #expect(viaPrimary == Grants(read: .all, record: true, admin: false))
        #expect(viaSupplementary == viaPrimary)
    }

    @Test func readTypesLimitAndUnion() {
        // uid 1000 is in `read` but limited; with group 600 it gets the union.
        let g = policy.grants(for: PeerIdentity(pid: 1, uid: 1000, gid: 1000, groups: [600]))
        #expect(g.read == .types(["heartRate", "batteryLevel", "cyclingSpeed"]))
        #expect(g.read.allows(type: "heartRate"))
        #expect(!g.read.allows(type: "runningSpeed"))
        // uid 1001 appears only in read_types: read of exactly those types.
        #expect(policy.grants(for: PeerIdentity(pid: 1, uid: 1001, gid: 1001)).read == .types(["heartRate"]))
        // An unlimited group grant widens a limited uid grant to everything.
        #expect(policy.grants(for: PeerIdentity(pid: 1, uid: 1001, gid: 500)).read == .all)
        #expect(policy.grants(for: PeerIdentity(pid: 1, uid: 1002, gid: 1002)) == Grants(read: .none, record: false, admin: true))
    }
}
